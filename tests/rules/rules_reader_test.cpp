// The reader's verdicts on tricky inputs. Each expectation about Open MPI 4.1.4 here is also
// checked against the real library by the oracle test (ompi_oracle_test.cpp) and the mpirun
// corpus (corpus/README.md).
#include "rules/rules_reader.h"

#include <gtest/gtest.h>

namespace colltune {
namespace {

RulesReadResult read41(std::string_view text) {
  return read_rules_text(text, RulesDialect::ompi_4_1);
}

const char* kGood =
    "# Open MPI 4.1.4 coll_tuned dynamic rules\n"
    "2            # number of collectives\n"
    "7            # bcast\n"
    "1\n"
    "4\n"
    "3\n"
    "0      1 0 0\n"
    "8192   6 0 0\n"
    "524288 2 1 65536\n"
    "2\n"
    "1\n"
    "4\n"
    "2\n"
    "0      3 0 0\n"
    "65536  4 0 0\n";

TEST(RulesReader, ReadsTheReferenceExample) {
  RulesReadResult r = read41(kGood);
  ASSERT_TRUE(r.loaded) << r.reason;
  ASSERT_EQ(r.model.collectives.size(), 2u);
  const auto& bcast = r.model.collectives[0];
  EXPECT_EQ(bcast.collective_id, 7);
  ASSERT_EQ(bcast.blocks.size(), 1u);
  EXPECT_EQ(bcast.blocks[0].comm_size, 4);
  EXPECT_EQ(bcast.blocks[0].rules[2], (MessageRule{524288, 2, 1, 65536, 0}));
  EXPECT_EQ(r.collective_lines, (std::vector<int>{3, 10}));
  EXPECT_EQ(r.rule_lines[0][0], (std::vector<int>{7, 8, 9}));
  EXPECT_TRUE(r.trailing_text.empty());
  EXPECT_TRUE(r.strays.empty());
}

TEST(RulesReader, LiIsBaseAutodetecting) {
  RulesReadResult r = read41("1 7 1 4 3\n0 1 0 0\n010 6 0 0\n0x100 5 0 0\n");
  ASSERT_TRUE(r.loaded) << r.reason;
  const auto& rules = r.model.collectives[0].blocks[0].rules;
  EXPECT_EQ(rules[1].msg_size, 8);    // octal
  EXPECT_EQ(rules[2].msg_size, 256);  // hex
  EXPECT_EQ(r.tokens[9].text, "010");
}

TEST(RulesReader, ZeroPaddedEightSplitsIntoTwoNumbers) {
  // "08": %li reads "0" (octal), then "8" as the next number.
  RulesReadResult r = read41("1 7 1 4 1\n0 08 0\n");
  ASSERT_TRUE(r.loaded) << r.reason;
  EXPECT_EQ(r.model.collectives[0].blocks[0].rules[0], (MessageRule{0, 0, 8, 0, 0}));
}

TEST(RulesReader, DigitsInsideWordsAreNumbers) {
  RulesReadResult r = read41("1 bcast7 1 P4 1\n0 alg=1 fan0 seg0\n");
  ASSERT_TRUE(r.loaded) << r.reason;
  EXPECT_EQ(r.model.collectives[0].collective_id, 7);
  EXPECT_EQ(r.model.collectives[0].blocks[0].comm_size, 4);
  EXPECT_EQ(r.model.collectives[0].blocks[0].rules[0].algorithm, 1);
  ASSERT_FALSE(r.strays.empty());
  EXPECT_EQ(r.strays[0].text, "bcast");
  EXPECT_TRUE(r.strays[0].glued_to_number);
}

TEST(RulesReader, ScientificNotationIsTwoNumbers) {
  // "1e5" reads 1 then 5: the rule count of 1 then a message size of 5 -> not 0 -> rejected.
  RulesReadResult r = read41("1 7 1 4 1e5 1 0 0\n");
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.reason.find("not 0"), std::string::npos) << r.reason;
}

TEST(RulesReader, CommentsAnywhereANumberIsExpected) {
  RulesReadResult r = read41("# header\n1 # one\n# 99 ignored\n7 1 4 1 0 #x 5\n1 0 0 # done\n");
  ASSERT_TRUE(r.loaded) << r.reason;
  EXPECT_EQ(r.model.collectives[0].blocks[0].rules[0], (MessageRule{0, 1, 0, 0, 0}));
}

TEST(RulesReader, VersionHeaderIsRejectedBy414) {
  std::string text = "rule-file-version-2\n1\n7\n1\n4\n1\n0 1 0 0 0\n";
  RulesReadResult r = read41(text);
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.line, 1);
  EXPECT_NE(r.reason.find("negative (-2)"), std::string::npos) << r.reason;

  RulesReadResult v2 = read_rules_text(text, RulesDialect::ompi_v2);
  ASSERT_TRUE(v2.loaded) << v2.reason;
  EXPECT_EQ(v2.header_version, 2);
  EXPECT_EQ(v2.model.collectives[0].blocks[0].rules[0].algorithm, 1);
}

TEST(RulesReader, V2MaxRequestsOnlyOnTheSameLine) {
  RulesReadResult same = read_rules_text("rule-file-version-2\n1 3 1 4 2\n0 4 0 0 8\n1024 4 0 0\n",
                                         RulesDialect::ompi_v2);
  ASSERT_TRUE(same.loaded) << same.reason;
  const auto& rules = same.model.collectives[0].blocks[0].rules;
  EXPECT_EQ(rules[0].max_requests, 8);
  EXPECT_EQ(rules[1].max_requests, 0);  // absent: the MCA default
  // On the next line the number is the next rule's message size instead.
  RulesReadResult next_line =
      read_rules_text("rule-file-version-2\n1 3 1 4 1\n0 4 0 0\n8\n", RulesDialect::ompi_v2);
  ASSERT_TRUE(next_line.loaded);
  EXPECT_EQ(next_line.model.collectives[0].blocks[0].rules[0].max_requests, 0);
  EXPECT_EQ(next_line.trailing_text, "8");
  // Version 1 header: no fifth integer even on the same line.
  RulesReadResult v1 =
      read_rules_text("rule-file-version-1\n1 3 1 4 1\n0 4 0 0 8\n", RulesDialect::ompi_v2);
  ASSERT_TRUE(v1.loaded);
  EXPECT_EQ(v1.model.collectives[0].blocks[0].rules[0].max_requests, 0);
  EXPECT_EQ(v1.trailing_text, "8");
  // 4.1.4 reads a fifth integer as the next token: the file still loads, shifted.
  RulesReadResult old = read41("1 3 1 4 2\n0 4 0 0 8\n1024 4 0 0\n");
  ASSERT_TRUE(old.loaded);
  EXPECT_EQ(old.model.collectives[0].blocks[0].rules[1], (MessageRule{8, 1024, 4, 0, 0}));
  EXPECT_EQ(old.trailing_text, "0");
}

TEST(RulesReader, HeaderMustBeTheFirstBytes) {
  RulesReadResult r = read_rules_text("# comment\nrule-file-version-2\n1 7 1 4 1 0 1 0 0 0\n",
                                      RulesDialect::ompi_v2);
  EXPECT_FALSE(r.loaded);  // the header is then read like 4.1.4 does: "-2"
  EXPECT_EQ(r.line, 2);
}

TEST(RulesReader, MissingSizeZeroRule) {
  RulesReadResult r = read41("1\n7\n1\n4\n2\n8 1 0 0\n1024 6 0 0\n");
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.line, 6);
  EXPECT_NE(r.reason.find("for size 8, not 0"), std::string::npos) << r.reason;
}

TEST(RulesReader, NegativeValues) {
  RulesReadResult r = read41("1\n7\n1\n4\n1\n0 -1 0 0\n");
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.line, 6);
  EXPECT_NE(r.reason.find("algorithm"), std::string::npos);
}

TEST(RulesReader, CollectiveIdLimits) {
  RulesReadResult r22 = read41("1\n22\n1\n4\n1\n0 1 0 0\n");
  EXPECT_FALSE(r22.loaded);
  EXPECT_EQ(r22.line, 2);
  EXPECT_TRUE(read41("1\n21\n1\n4\n1\n0 1 0 0\n").loaded);
  EXPECT_FALSE(read41("23\n").loaded);
}

TEST(RulesReader, TruncatedFile) {
  RulesReadResult r = read41("1\n7\n1\n4\n1\n0 1 0\n\n# end\n");
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.line, 8);
  EXPECT_NE(r.reason.find("segment size"), std::string::npos) << r.reason;
}

TEST(RulesReader, CountMismatches) {
  // Two collectives announced, one present: end of file.
  EXPECT_FALSE(read41("2\n7\n1\n4\n1\n0 1 0 0\n").loaded);
  // One announced, two present: the second is silently ignored.
  RulesReadResult r = read41("1\n7 1 4 1 0 1 0 0\n2 1 4 1 0 3 0 0\n");
  ASSERT_TRUE(r.loaded);
  EXPECT_EQ(r.model.collectives.size(), 1u);
  EXPECT_EQ(r.trailing_text, "2 1 4 1 0 3 0 0");
  EXPECT_EQ(r.trailing_line, 3);
}

TEST(RulesReader, TrailingGarbageIsIgnored) {
  RulesReadResult r = read41("1 7 1 4 1 0 1 0 0\nthis is the end # really\n");
  ASSERT_TRUE(r.loaded);
  EXPECT_EQ(r.trailing_text, "this is the end");
}

TEST(RulesReader, EmptyAndWhitespaceFiles) {
  EXPECT_FALSE(read41("").loaded);
  EXPECT_FALSE(read41("   \n# only a comment\n").loaded);
  EXPECT_TRUE(read41("0\n").loaded);  // zero collectives: valid, no rules
}

TEST(RulesReader, CarriageReturnsAreWhitespace) {
  EXPECT_TRUE(read41("1\r\n7\r\n1\r\n4\r\n1\r\n0 1 0 0\r\n").loaded);
}

TEST(RulesReader, ZeroBlocksAndZeroRulesAreValid) {
  RulesReadResult r = read41("2 7 0 2 1 4 0\n");
  ASSERT_TRUE(r.loaded) << r.reason;
  EXPECT_TRUE(r.model.collectives[0].blocks.empty());
  EXPECT_TRUE(r.model.collectives[1].blocks[0].rules.empty());
}

TEST(RulesReader, ValuesAboveIntMaxAreTruncatedLikeOpenMpi) {
  RulesReadResult r = read41("1 7 1 4 1 0 4294967297 0 0\n");
  ASSERT_TRUE(r.loaded);
  EXPECT_EQ(r.model.collectives[0].blocks[0].rules[0].algorithm, 1);
  ASSERT_EQ(r.truncated_values.size(), 1u);
}

TEST(RulesReader, MissingFileIsIgnored) {
  RulesReadResult r = read_rules_file("/nonexistent/colltune.rules", RulesDialect::ompi_4_1);
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.reason.find("cannot be opened"), std::string::npos);
}

TEST(RulesReader, MainReadsTheDocumentationJsonExample) {
  // ompi@main docs/tuning-apps/collectives/tuned.rst (note the trailing comma).
  const char* text = R"({
    "$schema": "tuned_schema.json",
    "rule_file_version" : 3,
    "module" : "tuned",
    "collectives" : {
        "allreduce" :
        [
            {
                "comm_size_min" : 64,
                "comm_size_max" : 128,
                "rules" : [
                    { "msg_size_min" : 512, "msg_size_max" : 511999, "alg" : 2, },
                    { "msg_size_min" : 512000, "msg_size_max" : "inf",
                      "alg" : "recursive_doubling", "reqs" : 8 }
                ]
            }
        ]
    }
})";
  RulesReadResult r = read_rules_text(text, RulesDialect::ompi_main);
  ASSERT_TRUE(r.loaded) << r.reason;
  EXPECT_TRUE(r.json);
  // As a 4.1-semantics model: P < 64 no rule, 64..128 the rules, > 128 no rule.
  RulesModel& m = r.model;
  EXPECT_EQ(configured_choice(m, Collective::allreduce, 32, 1024).algorithm, 0);
  EXPECT_EQ(configured_choice(m, Collective::allreduce, 64, 100).algorithm, 0);
  EXPECT_EQ(configured_choice(m, Collective::allreduce, 64, 512).algorithm, 2);
  EXPECT_EQ(configured_choice(m, Collective::allreduce, 128, 600000).algorithm, 3);
  auto match = lookup_rule(m, 2, 100, 600000);
  ASSERT_TRUE(match);
  EXPECT_EQ(match->rule.max_requests, 8);
  EXPECT_EQ(configured_choice(m, Collective::allreduce, 129, 512).algorithm, 0);
}

TEST(RulesReader, MainJsonErrorsAndDisabledRules) {
  EXPECT_FALSE(read_rules_text(R"({"module": "tuned"})", RulesDialect::ompi_main).loaded);
  EXPECT_FALSE(
      read_rules_text(R"({"collectives": {"broadcast": []}})", RulesDialect::ompi_main).loaded);
  EXPECT_FALSE(read_rules_text(R"({"collectives": {"bcast": [{"rules": [{"alg": 1,
                   "seg_size": "big"}]}]}})",
                               RulesDialect::ompi_main)
                   .loaded);
  // An unknown algorithm disables only that rule: the next one matches.
  RulesReadResult r = read_rules_text(
      R"({"collectives": {"bcast": [{"rules": [{"alg": 42}, {"alg": "binomial"}]}]}})",
      RulesDialect::ompi_main);
  ASSERT_TRUE(r.loaded) << r.reason;
  EXPECT_EQ(configured_choice(r.model, Collective::bcast, 4, 100).algorithm, 6);
  EXPECT_FALSE(r.notes.empty());
}

TEST(RulesReader, MainFallsBackToClassicWithRanges) {
  RulesReadResult r = read_rules_text("1 7 2 16 1 0 1 0 0 64 1 0 6 0 0\n", RulesDialect::ompi_main);
  ASSERT_TRUE(r.loaded) << r.reason;
  EXPECT_FALSE(r.json);
  EXPECT_EQ(r.semantics, LookupSemantics::ompi_main_classic);
  auto match = lookup_rule(r.model, 7, 32, 0, r.semantics);
  ASSERT_TRUE(match);
  EXPECT_EQ(match->rule.algorithm, 6);
}

TEST(RulesReader, ParseRulesThrowsWithReason) {
  EXPECT_NO_THROW(parse_rules(kGood, RulesDialect::ompi_4_1));
  try {
    parse_rules("1\n7\n1\n4\n1\n8 1 0 0\n", RulesDialect::ompi_4_1);
    FAIL() << "expected a throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("line 6"), std::string::npos) << e.what();
  }
}

TEST(RulesReader, DialectForVersion) {
  EXPECT_EQ(rules_dialect_for({4, 1, 4}), RulesDialect::ompi_4_1);
  EXPECT_EQ(rules_dialect_for({4, 1, 7}), RulesDialect::ompi_4_1);
  EXPECT_EQ(rules_dialect_for({4, 1, 8}), RulesDialect::ompi_v2);
  EXPECT_EQ(rules_dialect_for({5, 0, 6}), RulesDialect::ompi_4_1);
  EXPECT_EQ(rules_dialect_for({5, 0, 7}), RulesDialect::ompi_v2);
  EXPECT_EQ(rules_dialect_for({6, 0, 0}), RulesDialect::ompi_main);
  EXPECT_EQ(rules_dialect_for({4, 0, 7}), RulesDialect::ompi_4_1);
}

}  // namespace
}  // namespace colltune
