#include "rules/rules_builder.h"

#include <gtest/gtest.h>

#include "rules/rules_reader.h"
#include "rules/rules_writer.h"

namespace colltune {
namespace {

std::vector<TunedPoint> bcast_points(int p, std::vector<std::pair<std::int64_t, TuningConfig>> w) {
  std::vector<TunedPoint> points;
  for (auto& [size, config] : w) points.push_back({Collective::bcast, p, size, config});
  return points;
}

TEST(RulesBuilder, ConfinesRulesToTunedCommunicatorsAndSizes) {
  // Tuned at 64 ranks for 1 KiB..8 KiB.
  auto points = bcast_points(
      64,
      {{1024, {6, 8192, 0}}, {2048, {6, 8192, 0}}, {4096, {2, 65536, 4}}, {8192, {2, 65536, 4}}});
  RulesModel m = build_rules_model(points);
  ASSERT_EQ(m.collectives.size(), 1u);
  const auto& blocks = m.collectives[0].blocks;
  ASSERT_EQ(blocks.size(), 3u);
  // P >= 2: fixed decision (keeps 64-rank rules off sub-communicators; 4.1 floors block 0).
  EXPECT_EQ(blocks[0].comm_size, 2);
  EXPECT_EQ(blocks[0].rules, (std::vector<MessageRule>{{0, 0, 0, 0, 0}}));
  EXPECT_EQ(blocks[1].comm_size, 64);
  // 0 -> default, 1 KiB binomial (merged with 2 KiB), 4 KiB chain (merged with 8 KiB),
  // default from 8 KiB + 1: nothing above the largest measured size is extrapolated.
  std::vector<MessageRule> expected{
      {0, 0, 0, 0, 0}, {1024, 6, 0, 8192, 0}, {4096, 2, 4, 65536, 0}, {8193, 0, 0, 0, 0}};
  EXPECT_EQ(blocks[1].rules, expected);
  EXPECT_EQ(blocks[2].comm_size, 65);  // default again from 65 ranks: only 64 was measured
  EXPECT_EQ(configured_choice(m, Collective::bcast, 63, 1024).algorithm, 0);
  EXPECT_EQ(configured_choice(m, Collective::bcast, 64, 1024).algorithm, 6);
  EXPECT_EQ(configured_choice(m, Collective::bcast, 64, 8192).algorithm, 2);
  EXPECT_EQ(configured_choice(m, Collective::bcast, 64, 8193).algorithm, 0);
  EXPECT_EQ(configured_choice(m, Collective::bcast, 65, 4096).algorithm, 0);
  EXPECT_EQ(configured_choice(m, Collective::bcast, 127, 12000).algorithm, 0);
  EXPECT_EQ(configured_choice(m, Collective::bcast, 128, 1024).algorithm, 0);
  EXPECT_EQ(configured_choice(m, Collective::bcast, 64, 16384).algorithm, 0);
  EXPECT_EQ(configured_choice(m, Collective::bcast, 64, 512).algorithm, 0);
}

TEST(RulesBuilder, UnlimitedCoverageExtendsChoices) {
  auto points = bcast_points(4, {{1024, {6, 0, 0}}, {1 << 20, {1, 0, 0}}});
  RulesBuildOptions options;
  options.size_coverage_factor = 0;
  options.comm_coverage_factor = 0;
  RulesModel m = build_rules_model(points, options);
  const auto& blocks = m.collectives[0].blocks;
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[1].rules, (std::vector<MessageRule>{{0, 0}, {1024, 6}, {1 << 20, 1}}));
  EXPECT_EQ(configured_choice(m, Collective::bcast, 1000, 1 << 30).algorithm, 1);
}

TEST(RulesBuilder, GapsLongerThanOneOctaveFallBackToDefault) {
  auto points = bcast_points(2, {{1024, {6, 0, 0}}, {1 << 20, {1, 0, 0}}});
  RulesModel m = build_rules_model(points);
  const auto& rules = m.collectives[0].blocks[0].rules;
  EXPECT_EQ(rules, (std::vector<MessageRule>{
                       {0, 0}, {1024, 6}, {2048, 0}, {1 << 20, 1}, {(1 << 20) + 1, 0}}));
  EXPECT_EQ(m.collectives[0].blocks[0].comm_size, 2);  // no leading default when tuned at 2
}

TEST(RulesBuilder, GatherKeysArePerRankBytesTimesP) {
  std::vector<TunedPoint> points{{Collective::gather, 4, 64, {1, 0, 0}},
                                 {Collective::gather, 4, 128, {3, 1024, 0}},
                                 {Collective::gather, 4, 256, {3, 1024, 0}}};
  RulesModel m = build_rules_model(points);
  const auto& rules = m.collectives[0].blocks[1].rules;
  EXPECT_EQ(rules, (std::vector<MessageRule>{{0, 0}, {256, 1}, {512, 3, 0, 1024}, {1025, 0}}));
  EXPECT_EQ(configured_choice(m, Collective::gather, 4, 64).algorithm, 1);
  EXPECT_EQ(configured_choice(m, Collective::gather, 4, 128).algorithm, 3);
  EXPECT_EQ(configured_choice(m, Collective::gather, 4, 256).algorithm, 3);
  EXPECT_EQ(configured_choice(m, Collective::gather, 4, 512).algorithm, 0);
}

TEST(RulesBuilder, ClearsKnobsTheAlgorithmIgnores) {
  // binomial reads the segment size but not the fan-out; basic_linear reads neither.
  auto points = bcast_points(8, {{64, {6, 4096, 7}}, {128, {1, 4096, 7}}});
  RulesModel m = build_rules_model(points);
  const auto& rules = m.collectives[0].blocks[1].rules;
  EXPECT_EQ(rules[1], (MessageRule{64, 6, 0, 4096, 0}));
  EXPECT_EQ(rules[2], (MessageRule{128, 1, 0, 0, 0}));
}

TEST(RulesBuilder, TwoProcConfinedToTwoRanks) {
  std::vector<TunedPoint> points{{Collective::allgather, 2, 1024, {6, 0, 0}},
                                 {Collective::allgather, 8, 1024, {4, 0, 0}}};
  RulesModel m = build_rules_model(points);
  const auto& blocks = m.collectives[0].blocks;
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].comm_size, 2);
  EXPECT_EQ(blocks[1].comm_size, 3);
  EXPECT_EQ(blocks[1].rules, (std::vector<MessageRule>{{0, 0}}));
  EXPECT_EQ(blocks[2].comm_size, 8);
  EXPECT_EQ(configured_choice(m, Collective::allgather, 3, 1024).algorithm, 0);
}

TEST(RulesBuilder, BarrierHasOneRulePerCommunicatorSize) {
  std::vector<TunedPoint> points{{Collective::barrier, 16, 0, {4, 0, 0}}};
  RulesModel m = build_rules_model(points);
  EXPECT_EQ(m.collectives[0].blocks[1].rules, (std::vector<MessageRule>{{0, 4}}));
  points.push_back({Collective::barrier, 16, 4, {3, 0, 0}});
  EXPECT_THROW(build_rules_model(points), std::invalid_argument);
}

TEST(RulesBuilder, RejectsWhatWouldBreakJobs) {
  EXPECT_THROW(build_rules_model(bcast_points(4, {{8, {10, 0, 0}}})), std::invalid_argument);
  EXPECT_THROW(build_rules_model({{Collective::allgather, 4, 8, {6, 0, 0}}}),
               std::invalid_argument);
  EXPECT_THROW(build_rules_model(bcast_points(1, {{8, {1, 0, 0}}})), std::invalid_argument);
  EXPECT_THROW(build_rules_model(bcast_points(4, {{8, {1, 0, 0}}, {8, {6, 0, 0}}})),
               std::invalid_argument);
  EXPECT_NO_THROW(build_rules_model(bcast_points(4, {{8, {1, 0, 0}}, {8, {1, 0, 0}}})));
}

TEST(RulesBuilder, OutputIsCanonicalAndLoadsInOpenMpi41) {
  std::vector<TunedPoint> points;
  for (auto coll : {Collective::bcast, Collective::allreduce, Collective::gather})
    for (int p : {4, 16})
      for (std::int64_t s = 4; s <= (1 << 20); s *= 4)
        points.push_back({coll, p, s, {s < 4096 ? 1 : 2, 0, 0}});
  RulesModel m = build_rules_model(points);
  EXPECT_TRUE(is_canonical(m));
  std::string text = write_rules(m, RulesFormat::classic_v1);
  RulesReadResult r = read_rules_text(text, RulesDialect::ompi_4_1);
  ASSERT_TRUE(r.loaded) << r.reason << " line " << r.line << "\n" << text;
  EXPECT_EQ(r.model, m);
}

}  // namespace
}  // namespace colltune
