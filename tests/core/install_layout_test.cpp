// core/install_layout.h from a test binary of the build tree (build/tests/core/...): the root
// is the build folder, and every accessor names the file or folder the build made, through the
// links of cmake/BuildTreeLayout.cmake. The installed case is scripts/test-install's.
#include "core/install_layout.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace colltune {
namespace {

namespace fs = std::filesystem;

TEST(InstallLayout, BuildTreeBinaryFindsTheBuildFolderAsRoot) {
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  // build/tests/core/core_tests -> build
  EXPECT_EQ(fs::canonical(install_layout::root()),
            fs::canonical(exe.parent_path().parent_path().parent_path()));
  EXPECT_TRUE(fs::is_directory(install_layout::root() / COLLTUNE_TEST_DATADIR / "colltune"));
}

TEST(InstallLayout, AccessorsNameTheShippedFiles) {
  EXPECT_TRUE(fs::is_regular_file(install_layout::sim_profile_dir() / "pise.json"))
      << install_layout::sim_profile_dir();
  EXPECT_TRUE(fs::exists(install_layout::osu_bench_dir() / "osu_bcast"))
      << install_layout::osu_bench_dir();
  EXPECT_TRUE(fs::is_regular_file(install_layout::tracer_library()))
      << install_layout::tracer_library();
  EXPECT_TRUE(fs::is_regular_file(install_layout::doc_dir() / "examples" / "colltune.json"))
      << install_layout::doc_dir();
  EXPECT_EQ(install_layout::web_dir().filename(), "web");
}

}  // namespace
}  // namespace colltune
