#include "optimizer/latin_hypercube.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "optimizer/config_encoding.h"

namespace colltune {
namespace {

const AlgorithmTable& table() { return AlgorithmTable::builtin_4_1(); }

TEST(LatinHypercube, DistinctPointsOfTheSpaceWithTheDefaultFirst) {
  SearchSpace space(Collective::bcast, 16, table());
  Rng rng(5);
  auto design = latin_hypercube_design(space, 14, rng);
  ASSERT_EQ(design.size(), 14u);
  EXPECT_TRUE(design.front().is_default());
  std::set<TuningConfig> unique(design.begin(), design.end());
  EXPECT_EQ(unique.size(), design.size());
  for (const auto& c : design) EXPECT_TRUE(space.contains(c)) << to_string(c);
}

TEST(LatinHypercube, StratifiedOnTheAlgorithmAxis) {
  SearchSpace space(Collective::bcast, 16, table());
  for (int n : {10, 19, 28}) {
    Rng rng(n);
    auto design = latin_hypercube_design(space, n, rng);
    std::map<int, int> per_algorithm;
    for (const auto& c : design)
      if (!c.is_default()) ++per_algorithm[c.algorithm];
    // Algorithms 1, 8, 9 have one configuration each; the others share the rest evenly.
    int lo = 1 << 30, hi = 0;
    for (int alg : {2, 3, 4, 5, 6, 7}) {
      lo = std::min(lo, per_algorithm[alg]);
      hi = std::max(hi, per_algorithm[alg]);
    }
    EXPECT_LE(hi - lo, 1) << "n=" << n;
    for (int alg : {1, 8, 9}) EXPECT_EQ(per_algorithm[alg], 1) << "n=" << n;
  }
}

TEST(LatinHypercube, NonCollapsingOnSegmentSizeAndFanout) {
  SearchSpace space(Collective::bcast, 64, table());
  Rng rng(9);
  // 10 points: default + one per algorithm; algorithms 2-7 read a segment size.
  auto design = latin_hypercube_design(space, 10, rng);
  std::set<int> segs;
  int seg_users = 0;
  for (const auto& c : design)
    if (c.algorithm >= 2 && c.algorithm <= 7) ++seg_users, segs.insert(c.segsize);
  EXPECT_EQ(seg_users, 6);
  EXPECT_EQ(segs.size(), 6u);  // no two segment-size users share a level

  // More users than levels: levels are repeated evenly (10 levels, 30 users -> 3 each).
  Rng rng2(4);
  auto big = latin_hypercube_design(space, 1 + 3 + 30, rng2);
  std::map<int, int> level_count;
  for (const auto& c : big)
    if (c.algorithm >= 2 && c.algorithm <= 7) ++level_count[c.segsize];
  for (const auto& [level, count] : level_count) EXPECT_EQ(count, 3) << "segsize " << level;

  // Chain fan-outs: several chain points take distinct fan-outs.
  Rng rng3(12);
  auto chain_heavy = latin_hypercube_design(space, 40, rng3);
  std::set<int> fans;
  int chains = 0;
  for (const auto& c : chain_heavy)
    if (c.algorithm == 2) ++chains, fans.insert(c.fanout);
  EXPECT_GE(chains, 4);
  EXPECT_EQ(static_cast<int>(fans.size()), std::min(chains, 9));
}

TEST(LatinHypercube, MaximinBeatsASingleCandidate) {
  SearchSpace space(Collective::reduce, 64, table());
  double single = 0, chosen = 0;
  for (int seed = 0; seed < 20; ++seed) {
    Rng a(seed), b(seed);
    single += min_pairwise_distance2(space, latin_hypercube_design(space, 12, a, {1, true}));
    chosen += min_pairwise_distance2(space, latin_hypercube_design(space, 12, b, {64, true}));
  }
  EXPECT_GT(chosen, single);
}

TEST(LatinHypercube, DeterministicForASeedAndCappedBySpaceSize) {
  SearchSpace space(Collective::gather, 8, table());
  Rng a(3), b(3);
  EXPECT_EQ(latin_hypercube_design(space, 6, a), latin_hypercube_design(space, 6, b));
  Rng c(3);
  auto all = latin_hypercube_design(space, 1000, c);
  EXPECT_EQ(all.size(), space.size());
}

TEST(LatinHypercube, CoverFanoutsGivesTheChainItsDeepestAndFlattestTree) {
  for (int p : {4, 6, 16, 64}) {
    SearchSpace space(Collective::bcast, p, table());
    const auto shapes = fanout_shapes(space);
    EXPECT_EQ(shapes.at(2), 2) << "P=" << p;  // the chain reads a fan-out
    EXPECT_EQ(shapes.at(3), 1);               // the pipeline does not
    std::set<int> chain_fanouts;
    for (const auto& c : space.points())
      if (c.algorithm == 2) chain_fanouts.insert(c.fanout);
    ASSERT_GE(chain_fanouts.size(), 2u);
    const std::set<int> extremes = {*chain_fanouts.begin(), *chain_fanouts.rbegin()};
    const int n = lean_design_size(space, true);
    EXPECT_EQ(n, lean_design_size(space, false) + 1);
    for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
      Rng rng(seed);
      LatinHypercubeOptions options;
      options.cover_fanouts = true;
      auto design = latin_hypercube_design(space, n, rng, options);
      ASSERT_EQ(design.size(), static_cast<std::size_t>(n));
      std::set<int> seen;
      std::map<int, int> per_algorithm;
      for (const auto& c : design) {
        ++per_algorithm[c.algorithm];
        if (c.algorithm == 2) seen.insert(c.fanout);
      }
      EXPECT_EQ(seen, extremes) << "P=" << p << " seed " << seed;
      for (const auto& [alg, count] : per_algorithm)
        EXPECT_EQ(count, alg == 2 ? 2 : 1) << "algorithm " << alg;
    }
  }
}

TEST(LatinHypercube, DefaultSizeIsOnePerAlgorithmPlusKnobs) {
  EXPECT_EQ(default_initial_design_size(SearchSpace(Collective::bcast, 16, table())), 10 + 2);
  EXPECT_EQ(default_initial_design_size(SearchSpace(Collective::allreduce, 16, table())), 7 + 1);
  SearchSpaceOptions algorithms_only;
  algorithms_only.segment_sizes = {0};
  algorithms_only.fanouts = {4};
  EXPECT_EQ(
      default_initial_design_size(SearchSpace(Collective::bcast, 16, table(), algorithms_only)),
      10);
}

}  // namespace
}  // namespace colltune
