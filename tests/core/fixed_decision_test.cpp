// Open MPI 4.1.x fixed decisions (docs/reference/open-mpi-rules.md §3), including what the tracer
// observed on this machine's Open MPI 4.1.4 (§B.2).
#include <gtest/gtest.h>

#include "core/fixed_decision.h"

namespace colltune {
namespace {

int fixed_bcast_algorithm(int p, std::int64_t m) { return *fixed_decision_4_1(Collective::bcast, p, m); }
int fixed_gather_algorithm(int p, std::int64_t m) { return *fixed_decision_4_1(Collective::gather, p, m); }
int fixed_reduce_algorithm(int p, std::int64_t m, bool commutative = true) {
  return *fixed_decision_4_1(Collective::reduce, p, m, commutative);
}
int fixed_allreduce_algorithm(int p, std::int64_t m, bool commutative = true) {
  return *fixed_decision_4_1(Collective::allreduce, p, m, commutative);
}

TEST(FixedDecision, BcastAtFourRanksMatchesTheTracer) {
  // §B.2: <64 B bintree, 64-127 binomial, 128-2047 bintree, 2048-8191 binomial,
  // 8 KiB-<1 MiB basic_linear, >= 1 MiB chain.
  EXPECT_EQ(fixed_bcast_algorithm(4, 4), 5);
  EXPECT_EQ(fixed_bcast_algorithm(4, 64), 6);
  EXPECT_EQ(fixed_bcast_algorithm(4, 127), 6);
  EXPECT_EQ(fixed_bcast_algorithm(4, 128), 5);
  EXPECT_EQ(fixed_bcast_algorithm(4, 2048), 6);
  EXPECT_EQ(fixed_bcast_algorithm(4, 8192), 1);
  EXPECT_EQ(fixed_bcast_algorithm(4, 524288), 1);
  EXPECT_EQ(fixed_bcast_algorithm(4, 1 << 20), 2);
  EXPECT_EQ(fixed_bcast_algorithm(7, 1 << 20), 2);
}

TEST(FixedDecision, BcastBucketsAtOtherSizes) {
  EXPECT_EQ(fixed_bcast_algorithm(2, 16), 3);
  EXPECT_EQ(fixed_bcast_algorithm(3, 600), 7);
  EXPECT_EQ(fixed_bcast_algorithm(2, 200000), 2);
  EXPECT_EQ(fixed_bcast_algorithm(24, 1 << 20), 8);
  EXPECT_EQ(fixed_bcast_algorithm(48, 1000), 6);
  EXPECT_EQ(fixed_bcast_algorithm(100, 4), 7);
  EXPECT_EQ(fixed_bcast_algorithm(576, 20000), 4);
  EXPECT_EQ(fixed_bcast_algorithm(8192, 10000), 5);
  EXPECT_EQ(fixed_bcast_algorithm(8192, 1 << 20), 8);
}

TEST(FixedDecision, AllreduceCommutative) {
  // P 16-31: ring < 64 B (5 with segsize 0), recursive doubling < 4 KiB, Rabenseifner above.
  EXPECT_EQ(fixed_allreduce_algorithm(16, 32), 5);
  EXPECT_EQ(fixed_allreduce_algorithm(16, 64), 3);
  EXPECT_EQ(fixed_allreduce_algorithm(31, 4096), 6);
  EXPECT_EQ(fixed_allreduce_algorithm(2, 4), 4);
  EXPECT_EQ(fixed_allreduce_algorithm(2, 100000), 5);
  EXPECT_EQ(fixed_allreduce_algorithm(2, 1 << 20), 6);
  EXPECT_EQ(fixed_allreduce_algorithm(64, 131072), 3);
  EXPECT_EQ(fixed_allreduce_algorithm(576, 1024), 2);
  EXPECT_EQ(fixed_allreduce_algorithm(5000, 8192), 5);
}

TEST(FixedDecision, ReduceAndGather) {
  EXPECT_EQ(fixed_reduce_algorithm(2, 4), 7);
  EXPECT_EQ(fixed_reduce_algorithm(2, 1000), 1);
  EXPECT_EQ(fixed_reduce_algorithm(3, 1 << 20), 3);
  EXPECT_EQ(fixed_reduce_algorithm(4, 100), 4);
  EXPECT_EQ(fixed_reduce_algorithm(4, 300000), 1);
  EXPECT_EQ(fixed_reduce_algorithm(12, 8192), 5);
  EXPECT_EQ(fixed_reduce_algorithm(300, 10000), 6);
  EXPECT_EQ(fixed_reduce_algorithm(576, 4), 5);
  EXPECT_EQ(fixed_gather_algorithm(2, 1), 3);
  EXPECT_EQ(fixed_gather_algorithm(3, 2), 1);
  EXPECT_EQ(fixed_gather_algorithm(4, 4096), 1);
  EXPECT_EQ(fixed_gather_algorithm(4, 1 << 20), 3);
  EXPECT_EQ(fixed_gather_algorithm(300, 4096), 1);
  EXPECT_EQ(fixed_gather_algorithm(576, 4096), 2);
}

TEST(FixedDecision, NonCommutativeTables) {
  EXPECT_EQ(fixed_allreduce_algorithm(2, 200000, false), 1);
  EXPECT_EQ(fixed_allreduce_algorithm(600, 100, false), 2);
  EXPECT_EQ(fixed_reduce_algorithm(10, 2000, false), 1);
  EXPECT_EQ(fixed_reduce_algorithm(10, 10000, false), 6);
}

TEST(FixedDecision, OtherCollectivesAndUntranscribedOnes) {
  EXPECT_EQ(fixed_decision_4_1(Collective::gather, 4, 100), 2);
  EXPECT_EQ(fixed_decision_4_1(Collective::barrier, 4, 0), 1);  // P < 8: linear
  EXPECT_EQ(fixed_decision_4_1(Collective::barrier, 2, 0), 3);  // P < 4: recursive doubling
  EXPECT_FALSE(fixed_decision_4_1(Collective::reduce_scatter_block, 4, 64).has_value());
}

}  // namespace
}  // namespace colltune
