#include "rules/tracer_location.h"

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "core/install_layout.h"

namespace colltune {

namespace fs = std::filesystem;

std::optional<fs::path> tracer_library_path() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("COLLTUNE_TRACER"); env && *env) candidates.emplace_back(env);
  candidates.push_back(install_layout::tracer_library());
  std::error_code ec;
  for (const auto& c : candidates)
    if (!c.empty() && fs::is_regular_file(c, ec)) return fs::weakly_canonical(c, ec);
  return std::nullopt;
}

std::map<std::string, std::string> tracer_environment(const fs::path& trace_dir) {
  auto tracer = tracer_library_path();
  if (!tracer)
    throw std::runtime_error("the colltune tracer library was not found (looked for " +
                             install_layout::tracer_library().string() +
                             "; set COLLTUNE_TRACER to its path)");
  return {{"LD_PRELOAD", tracer->string()},
          {"COLLTUNE_TRACE_DIR", fs::absolute(trace_dir).string()}};
}

}  // namespace colltune
