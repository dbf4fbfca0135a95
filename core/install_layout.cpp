#include "core/install_layout.h"

#include <array>
#include <system_error>

#if !defined(COLLTUNE_REL_LIBDIR) || !defined(COLLTUNE_REL_LIBEXECDIR) || \
    !defined(COLLTUNE_REL_DATADIR) || !defined(COLLTUNE_REL_DOCDIR)
#error "the build defines the relative install folders (core/CMakeLists.txt)"
#endif

namespace colltune::install_layout {

namespace fs = std::filesystem;

namespace {

fs::path find_root() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  fs::path dir = exe.parent_path();
  for (int up = 0; up < 3; ++up) {
    dir = dir.parent_path();
    if (dir.empty()) break;
    if (fs::is_directory(dir / COLLTUNE_REL_DATADIR / "colltune", ec)) return dir;
  }
  return {};
}

const fs::path& cached_root() {
  static const fs::path cached = find_root();
  return cached;
}

fs::path under_root(const fs::path& relative) {
  return cached_root().empty() ? fs::path() : cached_root() / relative;
}

}  // namespace

fs::path root() { return cached_root(); }

fs::path osu_bench_dir() { return under_root(fs::path(COLLTUNE_REL_LIBEXECDIR) / "colltune/osu"); }

fs::path tracer_library() {
  return under_root(fs::path(COLLTUNE_REL_LIBDIR) / "colltune/libcolltune_tracer.so");
}

fs::path sim_profile_dir() {
  return under_root(fs::path(COLLTUNE_REL_DATADIR) / "colltune/sim-profiles");
}

fs::path web_dir() { return under_root(fs::path(COLLTUNE_REL_DATADIR) / "colltune/web"); }

fs::path doc_dir() { return under_root(COLLTUNE_REL_DOCDIR); }

}  // namespace colltune::install_layout
