#include "optimizer/search_space.h"

#include <gtest/gtest.h>

namespace colltune {
namespace {

const AlgorithmTable& table() { return AlgorithmTable::builtin_4_1(); }

TEST(SearchSpace414, IgnoredKnobsAreOnePoint) {
  SearchSpace space(Collective::bcast, 8, table());
  // binomial reads a segment size but no fan-out; basic_linear reads neither.
  EXPECT_EQ(space.canonical({6, 8192, 3}), (TuningConfig{6, 8192, 0}));
  EXPECT_EQ(space.canonical({1, 8192, 3}), (TuningConfig{1, 0, 0}));
  EXPECT_EQ(space.canonical({0, 8192, 3}), TuningConfig{});
  EXPECT_EQ(space.index_of({6, 8192, 3}), space.index_of({6, 8192, 0}));
  // scatter_allgather ignores the segment size in 4.1.4.
  EXPECT_EQ(space.canonical({8, 65536, 0}), (TuningConfig{8, 0, 0}));
}

TEST(SearchSpace414, ChainFanoutIsClampedToCommSizeMinusOne) {
  // build_chain: fan-out > size-1 becomes size-1, > 32 becomes 32.
  SearchSpace at4(Collective::bcast, 4, table());
  EXPECT_EQ(at4.canonical({2, 8192, 32}), (TuningConfig{2, 8192, 3}));
  EXPECT_EQ(at4.canonical({2, 8192, 3}), (TuningConfig{2, 8192, 3}));
  SearchSpace at64(Collective::bcast, 64, table());
  EXPECT_EQ(at64.canonical({2, 8192, 40}), (TuningConfig{2, 8192, 32}));
  EXPECT_EQ(at64.canonical({2, 8192, 24}), (TuningConfig{2, 8192, 24}));
}

TEST(SearchSpace414, ChainWithOneChainIsThePipeline) {
  SearchSpace space(Collective::bcast, 16, table());
  EXPECT_EQ(space.canonical({2, 4096, 1}), (TuningConfig{3, 4096, 0}));
  EXPECT_EQ(space.canonical({2, 4096, 0}), (TuningConfig{3, 4096, 0}));  // < 1 forced to 1
  SearchSpace reduce(Collective::reduce, 16, table());
  EXPECT_EQ(reduce.canonical({2, 0, 1}), (TuningConfig{3, 0, 0}));
  // At 2 ranks every chain is a pipeline.
  SearchSpace two(Collective::bcast, 2, table());
  EXPECT_EQ(two.canonical({2, 1024, 16}), (TuningConfig{3, 1024, 0}));
}

TEST(SearchSpace414, SegmentedRingWithoutSegmentsIsRing) {
  SearchSpace space(Collective::allreduce, 16, table());
  EXPECT_EQ(space.canonical({5, 0, 0}), (TuningConfig{4, 0, 0}));
  EXPECT_EQ(space.canonical({5, 4096, 7}), (TuningConfig{5, 4096, 0}));
}

TEST(SearchSpace414, SizesPerCollectiveAndCommSize) {
  // bcast: default + linear + chain (10 seg x distinct fan-outs >= 2) + algs 3-7 x 10 seg + 8, 9.
  EXPECT_EQ(SearchSpace(Collective::bcast, 64, table()).size(), 1u + 1 + 10 * 9 + 50 + 2);
  EXPECT_EQ(SearchSpace(Collective::bcast, 4, table()).size(), 1u + 1 + 10 * 2 + 50 + 2);
  EXPECT_EQ(SearchSpace(Collective::bcast, 6, table()).size(), 1u + 1 + 10 * 4 + 50 + 2);
  // reduce: default + linear + chain + algs 3-6 x 10 seg + rabenseifner.
  EXPECT_EQ(SearchSpace(Collective::reduce, 64, table()).size(), 1u + 1 + 10 * 9 + 40 + 1);
  // allreduce: default + 1-4, 6 + segmented ring with 9 non-zero segment sizes.
  EXPECT_EQ(SearchSpace(Collective::allreduce, 8, table()).size(), 1u + 5 + 9);
  EXPECT_EQ(SearchSpace(Collective::gather, 8, table()).size(), 1u + 2 + 10);
  // two_proc only at 2 ranks.
  EXPECT_EQ(SearchSpace(Collective::allgather, 4, table()).size(), 1u + 5);
  EXPECT_EQ(SearchSpace(Collective::allgather, 2, table()).size(), 1u + 6);
  EXPECT_EQ(SearchSpace(Collective::barrier, 8, table()).size(), 1u + 5);
}

TEST(SearchSpace414, CommutativeOnlyDropsOrderUnsafeAlgorithms) {
  SearchSpaceOptions o;
  o.commutative_ops_only = true;
  SearchSpace reduce(Collective::reduce, 16, table(), o);
  for (const auto& p : reduce.points())
    EXPECT_TRUE(p.algorithm == 0 || p.algorithm == 1 || p.algorithm == 6);
}

TEST(SearchSpace414, ExplicitPointsAreCanonicalAndDeduplicated) {
  std::vector<TuningConfig> points = {{0, 0, 0}, {2, 0, 4}, {3, 0, 0}, {6, 0, 5},
                                      {6, 0, 0}, {6, 0, 0}, {9, 0, 0}};
  SearchSpace at2(Collective::bcast, 2, table(), points);
  // At 2 ranks chain(4) == chain(1) == pipeline; binomial fan-out ignored.
  EXPECT_EQ(at2.size(), 4u);
  SearchSpace at8(Collective::bcast, 8, table(), points);
  EXPECT_EQ(at8.size(), 5u);
  EXPECT_TRUE(at8.contains({2, 0, 4}));
  // two_proc allgather is dropped unless P == 2.
  SearchSpace ag(Collective::allgather, 4, table(), {{0, 0, 0}, {6, 0, 0}, {4, 0, 0}});
  EXPECT_EQ(ag.size(), 2u);
}

TEST(SearchSpace414, StableOrderDefaultFirst) {
  SearchSpace space(Collective::bcast, 8, table());
  EXPECT_TRUE(space.points().front().is_default());
  EXPECT_TRUE(std::is_sorted(space.points().begin(), space.points().end()));
  for (std::size_t i = 0; i < space.size(); ++i)
    EXPECT_EQ(space.index_of(space.points()[i]), static_cast<int>(i));
}

}  // namespace
}  // namespace colltune
