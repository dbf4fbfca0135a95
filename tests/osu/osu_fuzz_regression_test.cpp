// Inputs the OSU output fuzzer (fuzz/osu_output_fuzzer.cpp) found, and its seed corpus (ORNL
// OMB 5.6.2 outputs, tests/osu/data), fed to parse_osu_output the way the fuzzer splits them
// (stdout, NUL, stderr): rows or an error with a kind and message, never a crash or exception.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/file_text.h"
#include "osu/osu_output.h"
#include "tests/fuzz_inputs.h"

namespace colltune {
namespace {

using fuzz_inputs::inputs;

TEST(OsuFuzzRegression, SavedInputsParseOrFailCleanly) {
  const auto files = inputs("osu_output_fuzzer");
  ASSERT_GE(files.size(), 20u) << COLLTUNE_FUZZ_DIR;
  int ok = 0;
  for (const auto& f : files) {
    const std::string input = read_file_text(f).value_or("");
    std::string_view out = input;
    std::string_view err;
    if (const auto nul = out.find('\0'); nul != std::string_view::npos) {
      err = out.substr(nul + 1);
      out = out.substr(0, nul);
    }
    OsuParseResult result;
    ASSERT_NO_THROW(result = parse_osu_output(out, err)) << f;
    if (result.ok()) {
      ++ok;
      EXPECT_FALSE(result.output.rows.empty()) << f;
    } else {
      EXPECT_FALSE(result.error->message.empty()) << f;
      EXPECT_GE(result.error->line, 0) << f;
    }
    for (const auto& row : result.output.rows) EXPECT_FALSE(std::isnan(row.avg_us)) << f;
  }
  EXPECT_GT(ok, 10);  // the real OMB outputs parse
}

}  // namespace
}  // namespace colltune
