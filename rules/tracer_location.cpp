#include "rules/tracer_location.h"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

#ifndef COLLTUNE_TRACER_BUILD_PATH
#error "COLLTUNE_TRACER_BUILD_PATH must be defined by the build"
#endif
#ifndef COLLTUNE_TRACER_INSTALL_RELPATH
#error "COLLTUNE_TRACER_INSTALL_RELPATH must be defined by the build"
#endif

namespace colltune {

namespace fs = std::filesystem;

fs::path built_tracer_path() { return fs::path(COLLTUNE_TRACER_BUILD_PATH); }

std::optional<fs::path> tracer_library_path() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("COLLTUNE_TRACER"); env && *env) candidates.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path dir = exe.parent_path();
    fs::path file = fs::path(COLLTUNE_TRACER_BUILD_PATH).filename();
    candidates.push_back(dir / COLLTUNE_TRACER_INSTALL_RELPATH);
    candidates.push_back(dir / ".." / "lib" / file);
    candidates.push_back(dir / ".." / ".." / "lib" / file);
  }
  candidates.push_back(built_tracer_path());
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return fs::weakly_canonical(c, ec);
  return std::nullopt;
}

std::map<std::string, std::string> tracer_environment(const fs::path& trace_dir) {
  auto tracer = tracer_library_path();
  if (!tracer)
    throw std::runtime_error("the colltune tracer library was not found (looked for " +
                             built_tracer_path().filename().string() +
                             "; set COLLTUNE_TRACER to its path)");
  return {{"LD_PRELOAD", tracer->string()},
          {"COLLTUNE_TRACE_DIR", fs::absolute(trace_dir).string()}};
}

}  // namespace colltune
