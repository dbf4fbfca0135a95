#include "rules/rules_validate.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "rules/version_tables.h"

namespace colltune {
namespace {

bool has(const ValidationReport& r, std::string_view code, int line = -1) {
  return std::any_of(r.findings.begin(), r.findings.end(), [&](const LintFinding& f) {
    return f.code == code && (line < 0 || f.line == line);
  });
}

Severity severity_of(const ValidationReport& r, std::string_view code) {
  for (const auto& f : r.findings)
    if (f.code == code) return f.severity;
  ADD_FAILURE() << "no finding " << code << "\n" << r.to_text();
  return Severity::info;
}

TEST(RulesValidate, CleanFileIsDeployable) {
  auto r = validate_rules_text("1\n7\n2\n2\n1\n0 0 0 0\n64\n2\n0 0 0 0\n4096 6 0 8192\n");
  EXPECT_TRUE(r.loads());
  EXPECT_TRUE(r.deployable()) << r.to_text();
  EXPECT_TRUE(r.findings.empty()) << r.to_text();
  EXPECT_EQ(r.verdict(), "Open MPI 4.1.0-4.1.7 / 5.0.0-5.0.6 would load this file.");
}

TEST(RulesValidate, IgnoredFileVerdictNamesReasonAndLine) {
  auto r = validate_rules_text("1\n7\n1\n4\n1\n8 1 0 0\n");
  EXPECT_FALSE(r.loads());
  EXPECT_FALSE(r.deployable());
  EXPECT_NE(r.verdict().find("silently ignore"), std::string::npos);
  EXPECT_NE(r.verdict().find("(line 6)"), std::string::npos) << r.verdict();
}

TEST(RulesValidate, NumbersThatDoNotMeanWhatTheySay) {
  auto r = validate_rules_text("1 7 1 4 2\n0 1 0 0\n010 6 0 0x400\n");
  EXPECT_TRUE(r.loads());
  EXPECT_TRUE(has(r, "octal-number", 3));
  EXPECT_EQ(severity_of(r, "octal-number"), Severity::error);
  EXPECT_TRUE(has(r, "hex-number", 3));
  EXPECT_FALSE(r.deployable());

  auto glued = validate_rules_text("1 7 1 4 1 0 08 0\n");
  EXPECT_TRUE(glued.loads());
  EXPECT_TRUE(has(glued, "glued-numbers"));

  auto words = validate_rules_text("1 bcast7 1 4 1\n0 1 0 0 KiB\n");
  EXPECT_TRUE(has(words, "digits-in-text", 1));
  EXPECT_EQ(severity_of(words, "digits-in-text"), Severity::error);
}

TEST(RulesValidate, AlgorithmsThatAbortJobs) {
  auto r = validate_rules_text("1 7 1 2 2\n0 1 0 0\n1024 10 0 0\n");
  EXPECT_TRUE(r.loads());
  EXPECT_TRUE(has(r, "alg-out-of-range", 3));
  EXPECT_EQ(severity_of(r, "alg-out-of-range"), Severity::error);
  // allgather 7 exists on 5.0 (sparbit) but not on 4.1.
  std::string sparbit = "1 0 1 2 1\n0 7 0 0\n";
  EXPECT_TRUE(has(validate_rules_text(sparbit), "alg-out-of-range"));
  EXPECT_FALSE(
      has(validate_rules_text(sparbit, validation_options_for({5, 0, 3})), "alg-out-of-range"));
}

TEST(RulesValidate, TwoProcOnlyOnTwoRanks) {
  // allgather two_proc (6) in a block serving 2..3 ranks: error; exactly 2: fine.
  EXPECT_TRUE(has(validate_rules_text("1 0 1 2 1 0 6 0 0\n"), "two-proc"));
  EXPECT_FALSE(has(validate_rules_text("1 0 2 2 1 0 6 0 0 3 1 0 0 0 0\n"), "two-proc"));
}

TEST(RulesValidate, NonCommutativeUnsafe) {
  auto r = validate_rules_text("1 2 1 2 1 0 4 0 0\n");  // allreduce ring
  EXPECT_TRUE(has(r, "non-commutative"));
  ValidationOptions only_commutative;
  only_commutative.non_commutative_ops_possible = false;
  EXPECT_FALSE(
      has(validate_rules_text("1 2 1 2 1 0 4 0 0\n", only_commutative), "non-commutative"));
}

TEST(RulesValidate, StructureProblems) {
  auto dup = validate_rules_text("2\n7 1 2 1 0 1 0 0\n7 1 2 1 0 6 0 0\n");
  EXPECT_TRUE(has(dup, "duplicate-collective", 2));
  auto floor = validate_rules_text("1 7 1 64 1 0 6 0 0\n");
  EXPECT_TRUE(has(floor, "first-block-floor", 1));
  auto order = validate_rules_text("1 7 1 2 3\n0 1 0 0\n8192 6 0 0\n1024 5 0 0\n");
  EXPECT_TRUE(has(order, "unreachable-rule", 3));
  auto blocks = validate_rules_text("1 7 3\n2 1 0 1 0 0\n64 1 0 6 0 0\n32 1 0 5 0 0\n");
  EXPECT_TRUE(has(blocks, "comm-not-ascending", 4));
  EXPECT_TRUE(has(blocks, "unreachable-block", 3));  // 64 is hidden: P >= 64 passes 32 too
  auto trailing = validate_rules_text("1\n7 1 2 1 0 1 0 0\n2 1 2 1 0 3 0 0\n");
  EXPECT_TRUE(has(trailing, "ignored-trailing", 3));
  EXPECT_EQ(severity_of(trailing, "ignored-trailing"), Severity::error);
  auto gatherv = validate_rules_text("1 10 1 2 1 0 1 0 0\n");
  EXPECT_TRUE(has(gatherv, "tuned-disabled"));
  auto knobs = validate_rules_text("1 7 1 2 1 0 1 4 8192\n");
  EXPECT_TRUE(has(knobs, "ignored-segsize"));
  EXPECT_TRUE(has(knobs, "ignored-fanout"));
}

TEST(RulesValidate, MainClassicRangesWarning) {
  ValidationOptions main_options = validation_options_for({6, 0, 0});
  auto r = validate_rules_text("1 7 2 2 1 0 0 0 0 64 1 0 6 0 0\n", main_options);
  EXPECT_TRUE(r.loads());
  EXPECT_TRUE(has(r, "main-classic-ranges"));
}

TEST(RulesValidate, ReportText) {
  auto r = validate_rules_text("1 7 1 4 1 010 1 0 0\n");
  EXPECT_FALSE(r.loads());  // 010 = 8: the first rule is not for size 0
  std::string text = r.to_text();
  EXPECT_NE(text.find("octal"), std::string::npos) << text;
  EXPECT_NE(text.find("line 1: error [octal-number]"), std::string::npos) << text;
}

TEST(RulesValidate, ReportTextSaysAFindingOnceWithEveryLineItStandsAt) {
  // Reduce chain (2) at three message sizes, a rule a line: one warning, three lines.
  auto r = validate_rules_text("1\n11\n1\n4\n3\n0 2 0 0\n1024 2 0 0\n4096 2 0 0\n");
  ASSERT_TRUE(r.loads()) << r.to_text();
  ASSERT_EQ(std::count_if(r.findings.begin(), r.findings.end(),
                          [](const LintFinding& f) { return f.code == "non-commutative"; }),
            3);
  const std::string text = r.to_text();
  const std::string line = "lines 6, 7, 8: warning [non-commutative] reduce chain gives wrong";
  EXPECT_NE(text.find(line), std::string::npos) << text;
  const auto first = text.find("[non-commutative]");
  EXPECT_EQ(text.find("[non-commutative]", first + 1), std::string::npos) << "said once: " << text;
}

}  // namespace
}  // namespace colltune
