// Where colltune's own files are, found from the running executable: one door for every lookup
// of the bundled benchmark, the algorithm tracer, the sim profiles and the dashboard assets.
//
// Contract:
//  - The layout is the installed one, relative to a root: <root>/<bindir>/colltune,
//    <root>/<libexecdir>/colltune/osu/osu_*, <root>/<libdir>/colltune/libcolltune_tracer.so,
//    <root>/<datadir>/colltune/{web,sim-profiles}. Only these relative folder names (from
//    GNUInstallDirs) are compiled in; no absolute path of the build machine is.
//  - The root is the first of <exe dir>/.., <exe dir>/../.., <exe dir>/../../.. that holds
//    <datadir>/colltune (/proc/self/exe, symlinks resolved). An installed binary finds its
//    prefix; a binary of the build tree (build/cli/colltune, build/tests/<area>/<test>) finds
//    the build folder, where the configure step mirrors the same layout with symlinks to the
//    build outputs and the source folders (cmake/BuildTreeLayout.cmake).
//  - Each accessor returns the path whether or not it exists (callers say what is missing);
//    an empty path when no root was found. Nothing here throws.
#pragma once

#include <filesystem>

namespace colltune::install_layout {

// The root described above; empty when none was found.
std::filesystem::path root();

// <root>/<libexecdir>/colltune/osu: the bundled OSU-compatible benchmark (osu_bcast, ...).
std::filesystem::path osu_bench_dir();

// <root>/<libdir>/colltune/libcolltune_tracer.so: the LD_PRELOAD algorithm tracer.
std::filesystem::path tracer_library();

// <root>/<datadir>/colltune/sim-profiles: the sim backend's shipped cluster profiles.
std::filesystem::path sim_profile_dir();

// <root>/<datadir>/colltune/web: the built dashboard (index.html + assets/).
std::filesystem::path web_dir();

// <root>/<docdir>: README, examples/ (daemon config, campaign spec, rules file).
std::filesystem::path doc_dir();

}  // namespace colltune::install_layout
