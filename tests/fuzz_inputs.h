// The saved inputs of one libFuzzer target (fuzz/regressions/<target>: crashes found and fixed;
// fuzz/corpus/<target>: its seeds), for the regression tests that replay them through the parser.
// COLLTUNE_FUZZ_DIR is the repository's fuzz/ folder (set by each test target's CMake).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace colltune::fuzz_inputs {

inline std::vector<std::filesystem::path> inputs(const std::string& target) {
  std::vector<std::filesystem::path> files;
  for (const char* kind : {"regressions", "corpus"}) {
    const auto dir = std::filesystem::path(COLLTUNE_FUZZ_DIR) / kind / target;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
  }
  return files;
}

}  // namespace colltune::fuzz_inputs
