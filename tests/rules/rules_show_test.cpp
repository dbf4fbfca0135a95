#include "rules/rules_show.h"

#include <gtest/gtest.h>

#include "rules/rules_builder.h"

namespace colltune {
namespace {

TEST(RulesShow, RowsCarryRangesAndNames) {
  RulesModel m{{CollectiveRules{
      7,
      {{2, {{0, 0}}}, {64, {{0, 0}, {4096, 6, 0, 8192}, {65536, 2, 4, 65536}}}, {128, {{0, 0}}}}}}};
  auto rows = show_rows(m);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].comm_begin, 2);
  EXPECT_EQ(rows[0].comm_end, 64);
  EXPECT_EQ(rows[2].algorithm_name, "binomial");
  EXPECT_EQ(rows[2].key_begin, 4096);
  EXPECT_EQ(rows[2].key_end, 65536);
  EXPECT_EQ(rows[3].fanout, 4);
  EXPECT_EQ(rows[4].comm_begin, 128);
}

TEST(RulesShow, TableIsReadable) {
  RulesModel m{{CollectiveRules{
      7,
      {{2, {{0, 0}}}, {64, {{0, 0}, {4096, 6, 0, 8192}, {65536, 2, 4, 65536}}}, {128, {{0, 0}}}}}}};
  std::string text = format_rules_table(m);
  EXPECT_NE(text.find("bcast (id 7)"), std::string::npos) << text;
  EXPECT_NE(text.find("2-63 ranks: Open MPI default for all sizes"), std::string::npos) << text;
  EXPECT_NE(text.find("64-127 ranks:"), std::string::npos) << text;
  EXPECT_NE(text.find("4 KiB - 64 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("binomial (6)"), std::string::npos) << text;
  EXPECT_NE(text.find("seg 8 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find(">= 64 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("chain (2)"), std::string::npos) << text;
  EXPECT_NE(text.find("fan-out 4"), std::string::npos) << text;
  EXPECT_NE(text.find("128+ ranks: Open MPI default"), std::string::npos) << text;
}

TEST(RulesShow, GatherShowsPerRankSizes) {
  RulesModel m = build_rules_model({{Collective::gather, 4, 64, {1, 0, 0}}});
  std::string text = format_rules_table(m);
  EXPECT_NE(text.find("[size = bytes per rank x ranks]"), std::string::npos) << text;
  // Only 64 B per rank was measured: the rule covers exactly that size (no extrapolation).
  EXPECT_NE(text.find("256 B (64 B per rank at 4)"), std::string::npos) << text;
  EXPECT_NE(text.find(">= 257 B"), std::string::npos) << text;
}

TEST(RulesShow, EmptyModel) {
  EXPECT_NE(format_rules_table(RulesModel{}).find("no rules"), std::string::npos);
}

}  // namespace
}  // namespace colltune
