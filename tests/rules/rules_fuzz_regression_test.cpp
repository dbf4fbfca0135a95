// Inputs the rules fuzzer (fuzz/rules_fuzzer.cpp) found, and its seed corpus (the validator
// corpus and ORNL rules files), fed to the reader and validator in every dialect: a verdict,
// never a crash, an exception or a hang.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/file_text.h"
#include "rules/rules_reader.h"
#include "rules/rules_validate.h"
#include "tests/fuzz_inputs.h"

namespace colltune {
namespace {

using fuzz_inputs::inputs;

constexpr RulesDialect kDialects[] = {RulesDialect::ompi_4_1, RulesDialect::ompi_v2,
                                      RulesDialect::ompi_main};

TEST(RulesFuzzRegression, SavedInputsGetAVerdictInEveryDialect) {
  const auto files = inputs("rules_fuzzer");
  ASSERT_GE(files.size(), 30u) << COLLTUNE_FUZZ_DIR;
  int loaded = 0;
  for (const auto& f : files) {
    const std::string text = read_file_text(f).value_or("");
    for (RulesDialect dialect : kDialects) {
      RulesReadResult read;
      ASSERT_NO_THROW(read = read_rules_text(text, dialect)) << f;
      EXPECT_EQ(read.loaded, read.reason.empty()) << f;
      ValidationOptions options;
      options.dialect = dialect;
      ValidationReport report;
      ASSERT_NO_THROW(report = validate_rules_text(text, options)) << f;
      EXPECT_EQ(report.loads(), read.loaded) << f;
      EXPECT_FALSE(report.verdict().empty());
      if (read.loaded) {
        ++loaded;
        EXPECT_EQ(parse_rules(text, dialect), read.model) << f;
      } else {
        EXPECT_THROW(parse_rules(text, dialect), std::invalid_argument) << f;
      }
    }
  }
  EXPECT_GT(loaded, 0);
}

// Found by profiling the fuzzer: the line of every token and stray word was computed by
// counting newlines from the start of the file, so reading took time quadratic in its size
// (200 KB of stray words: minutes). Now 1 MB is read in about a second.
TEST(RulesFuzzRegression, BigFilesAreReadInLinearTime) {
  std::string strays;
  for (int i = 0; i < 500'000; ++i) strays += "x\n";
  const auto start = std::chrono::steady_clock::now();
  const RulesReadResult read = read_rules_text(strays, RulesDialect::ompi_4_1);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(read.loaded);
  ASSERT_FALSE(read.strays.empty());
  EXPECT_EQ(read.strays.back().line, 500'000);  // lines still right
  EXPECT_LT(seconds, 10.0);                     // quadratic: ~10^12 steps, hours
}

}  // namespace
}  // namespace colltune
