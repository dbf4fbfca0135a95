// The message schedule of every modelled algorithm on small cases, against hand-derived message
// counts, bytes per link, segment counts and fallbacks (docs/reference/open-mpi-rules.md §2).
#include <gtest/gtest.h>

#include "runner/sim/collective_schedules.h"
#include "runner/sim/schedule.h"

namespace colltune::sim {
namespace {

struct Built {
  Schedule schedule;
  ScheduleSummary summary;
};

Built build(Collective c, int p, TuningConfig config, std::int64_t size, int radix = 4) {
  CallSpec spec;
  spec.collective = c;
  spec.comm_size = p;
  spec.config = config;
  spec.osu_size = size;
  spec.knomial_radix = radix;
  Schedule s = build_schedule(spec);
  ScheduleSummary sum = summarize(s);
  return {std::move(s), std::move(sum)};
}

LinkTraffic link(const ScheduleSummary& s, int from, int to) {
  const auto it = s.links.find({from, to});
  return it == s.links.end() ? LinkTraffic{} : it->second;
}

std::int64_t bytes_into(const ScheduleSummary& s, int rank) {
  std::int64_t total = 0;
  for (const auto& [l, t] : s.links)
    if (l.second == rank) total += t.bytes;
  return total;
}

using Trace = std::vector<std::string>;

TEST(SegmentCount, FollowsCollBaseComputedSegcount) {
  EXPECT_EQ(computed_segcount(0, 1, 1000), 1000);  // unsegmented
  EXPECT_EQ(computed_segcount(256, 1, 1000), 256);
  EXPECT_EQ(computed_segcount(2000, 1, 1000), 1000);  // segment not below the message
  EXPECT_EQ(computed_segcount(1000, 1, 1000), 1000);
  EXPECT_EQ(computed_segcount(1024, 4, 1000), 256);  // floats
  EXPECT_EQ(computed_segcount(1027, 4, 1000), 257);  // rounds to the nearest element
  EXPECT_EQ(computed_segcount(1025, 4, 1000), 256);
  EXPECT_EQ(computed_segcount(2, 4, 1000), 1000);  // below one element: unsegmented
}

// --- bcast ---

TEST(BcastSchedule, LinearSendsTheWholeBufferToEveryRank) {
  const auto b = build(Collective::bcast, 4, {1, 0, 0}, 100);
  EXPECT_EQ(b.summary.messages, 3);
  for (int r = 1; r < 4; ++r) EXPECT_EQ(link(b.summary, 0, r).bytes, 100);
  EXPECT_EQ(b.schedule.trace, (Trace{"bcast_intra_basic_linear"}));
}

TEST(BcastSchedule, PipelineSendsEverySegmentDownTheChain) {
  // 1000 B in 100 B segments: 10 segments on each of the 3 links.
  const auto b = build(Collective::bcast, 4, {3, 100, 0}, 1000);
  EXPECT_EQ(b.summary.messages, 30);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(link(b.summary, r, r + 1).messages, 10);
    EXPECT_EQ(link(b.summary, r, r + 1).bytes, 1000);
  }
  // 300 B segments: 300 + 300 + 300 + 100.
  const auto c = build(Collective::bcast, 4, {3, 300, 0}, 1000);
  EXPECT_EQ(link(c.summary, 2, 3).messages, 4);
  EXPECT_EQ(c.summary.bytes, 3000);
}

TEST(BcastSchedule, ChainUsesTheFanoutAsNumberOfChains) {
  const auto b = build(Collective::bcast, 7, {2, 0, 2}, 64);
  EXPECT_EQ(b.summary.messages, 6);
  for (auto [from, to] : {std::pair{0, 1}, {1, 2}, {2, 3}, {0, 4}, {4, 5}, {5, 6}})
    EXPECT_EQ(link(b.summary, from, to).bytes, 64) << from << "->" << to;
  EXPECT_EQ(b.summary.sends[0], 2);
}

TEST(BcastSchedule, ForcedChainWithoutFanoutUsesTheMcaDefaultOfFour) {
  const auto b = build(Collective::bcast, 9, {2, 0, 0}, 64);
  EXPECT_EQ(b.summary.sends[0], 4);
  EXPECT_EQ(b.schedule.trace, (Trace{"bcast_intra_chain segsize=0 fanout=4"}));
}

TEST(BcastSchedule, BinomialAndSegmentedBinomial) {
  const auto b = build(Collective::bcast, 8, {6, 0, 0}, 1000);
  EXPECT_EQ(b.summary.messages, 7);
  for (auto [from, to] : {std::pair{0, 1}, {0, 2}, {0, 4}, {1, 3}, {1, 5}, {2, 6}, {3, 7}})
    EXPECT_EQ(link(b.summary, from, to).bytes, 1000) << from << "->" << to;
  // 256 B segments: 256, 256, 256, 232 on each of the 7 links.
  const auto s = build(Collective::bcast, 8, {6, 256, 0}, 1000);
  EXPECT_EQ(s.summary.messages, 28);
  EXPECT_EQ(link(s.summary, 3, 7).messages, 4);
  EXPECT_EQ(link(s.summary, 3, 7).bytes, 1000);
}

TEST(BcastSchedule, BinaryAndKnomialTrees) {
  const auto bin = build(Collective::bcast, 7, {5, 0, 0}, 10);
  EXPECT_EQ(bin.summary.sends[0], 2);
  EXPECT_EQ(link(bin.summary, 1, 5).bytes, 10);
  EXPECT_EQ(link(bin.summary, 2, 6).bytes, 10);
  const auto k = build(Collective::bcast, 10, {7, 0, 0}, 10);
  EXPECT_EQ(k.summary.sends[0], 5);  // 4 8 1 2 3
  EXPECT_EQ(k.summary.sends[4], 3);
  EXPECT_EQ(link(k.summary, 8, 9).bytes, 10);
  const auto k2 = build(Collective::bcast, 10, {7, 0, 0}, 10, 2);
  EXPECT_EQ(k2.summary.sends[0], 4);
}

TEST(BcastSchedule, SplitBinaryTreeSendsHalvesThenExchanges) {
  // Odd size 7: halves of 500 B down the left (odd) and right (even) subtrees, then every
  // non-root rank swaps halves with its twin.
  const auto b = build(Collective::bcast, 7, {4, 0, 0}, 1000);
  EXPECT_EQ(b.summary.messages, 12);
  EXPECT_EQ(b.summary.bytes, 6000);
  EXPECT_EQ(link(b.summary, 0, 1).bytes, 500);
  EXPECT_EQ(link(b.summary, 1, 2).bytes, 500);
  EXPECT_EQ(link(b.summary, 2, 1).bytes, 500);
  EXPECT_EQ(link(b.summary, 5, 6).bytes, 500);
  for (int r = 1; r < 7; ++r) EXPECT_EQ(bytes_into(b.summary, r), 1000) << r;
  // Even size 4: the root sends the right half to the last rank, which has no twin.
  const auto e = build(Collective::bcast, 4, {4, 0, 0}, 1000);
  EXPECT_EQ(e.summary.messages, 6);
  EXPECT_EQ(link(e.summary, 0, 3).bytes, 500);
  for (int r = 1; r < 4; ++r) EXPECT_EQ(bytes_into(e.summary, r), 1000) << r;
  // Segmented: 500 B halves in 128 B segments = 4 segments per tree link.
  const auto s = build(Collective::bcast, 7, {4, 128, 0}, 1000);
  EXPECT_EQ(link(s.summary, 1, 3).messages, 4);
}

TEST(BcastSchedule, SplitBinaryTreeFallsBackToAPipeline) {
  const auto one = build(Collective::bcast, 4, {4, 0, 0}, 1);  // an empty half
  EXPECT_EQ(one.schedule.trace,
            (Trace{"bcast_intra_split_bintree segsize=0", "bcast_intra_chain segsize=0 fanout=1"}));
  EXPECT_EQ(one.summary.messages, 3);
  // Segment (64 B) larger than a half (50 B): pipeline of 64 + 36 B segments.
  const auto big = build(Collective::bcast, 4, {4, 64, 0}, 100);
  EXPECT_EQ(big.schedule.trace.back(), "bcast_intra_chain segsize=64 fanout=1");
  EXPECT_EQ(big.summary.messages, 6);
}

TEST(BcastSchedule, ScatterAllgatherPowerOfTwo) {
  // 800 B on 8 ranks: blocks of 100 B; binomial scatter, then 3 recursive-doubling rounds.
  const auto b = build(Collective::bcast, 8, {8, 0, 0}, 800);
  EXPECT_EQ(link(b.summary, 0, 4).bytes, 400 + 400);  // scatter 400 + allgather round 3
  EXPECT_EQ(link(b.summary, 0, 2).bytes, 200 + 200);
  EXPECT_EQ(link(b.summary, 4, 6).bytes, 200 + 200);
  EXPECT_EQ(b.summary.messages, 7 + 24);
  EXPECT_EQ(b.summary.bytes, 1200 + 8 * (100 + 200 + 400));
}

TEST(BcastSchedule, ScatterAllgatherNonPowerOfTwoDeliversEveryBlock) {
  for (int p : {3, 5, 6, 7, 11, 12}) {
    const auto b = build(Collective::bcast, p, {8, 0, 0}, 60 * p + 7);
    for (int r = 1; r < p; ++r)
      EXPECT_GE(bytes_into(b.summary, r), 60 * p + 7) << "P=" << p << " rank " << r;
  }
}

TEST(BcastSchedule, ScatterAllgatherRing) {
  // 400 B on 4 ranks: scatter 0->2 (200), 0->1, 2->3 (100); ring: 3 rounds x 4 ranks x 100 B.
  const auto b = build(Collective::bcast, 4, {9, 0, 0}, 400);
  EXPECT_EQ(b.summary.messages, 3 + 12);
  EXPECT_EQ(b.summary.bytes, 400 + 1200);
  EXPECT_EQ(link(b.summary, 0, 2).bytes, 200);
  EXPECT_EQ(link(b.summary, 3, 0).messages, 3);
}

TEST(BcastSchedule, ScatterAllgatherWithFewerBytesThanRanksIsLinear) {
  for (int alg : {8, 9}) {
    const auto b = build(Collective::bcast, 8, {alg, 0, 0}, 5);
    EXPECT_EQ(b.schedule.trace.back(), "bcast_intra_basic_linear");
    EXPECT_EQ(b.summary.messages, 7);
  }
}

// --- reduce (MPI_FLOAT: 4 B per element) ---

TEST(ReduceSchedule, LinearRootReceivesAndReducesEveryRank) {
  const auto b = build(Collective::reduce, 4, {1, 0, 0}, 400);
  EXPECT_EQ(b.summary.messages, 3);
  EXPECT_EQ(b.summary.reduce_ops[0], 3);
  EXPECT_EQ(b.summary.reduce_bytes, 1200);
  // The root starts from the last rank's data.
  const auto& ops = b.schedule.ranks[0].ops();
  EXPECT_EQ(ops.front().kind, Op::Kind::irecv);
  EXPECT_EQ(ops.front().peer, 3);
}

TEST(ReduceSchedule, BinomialUsesTheInOrderTree) {
  const auto b = build(Collective::reduce, 8, {5, 0, 0}, 1024);
  EXPECT_EQ(b.summary.messages, 7);
  for (auto [from, to] : {std::pair{1, 0}, {2, 0}, {4, 0}, {3, 2}, {5, 4}, {6, 4}, {7, 6}})
    EXPECT_EQ(link(b.summary, from, to).bytes, 1024) << from << "->" << to;
  EXPECT_EQ(b.summary.reduce_ops[0], 3);
  EXPECT_EQ(b.summary.reduce_ops[4], 2);
  EXPECT_EQ(b.summary.reduce_ops[7], 0);
}

TEST(ReduceSchedule, SegmentedPipelineSendsEverySegmentUp) {
  // 1024 B = 256 floats; 256 B segments = 64 floats: 4 segments per link.
  const auto b = build(Collective::reduce, 3, {3, 256, 0}, 1024);
  EXPECT_EQ(link(b.summary, 2, 1).messages, 4);
  EXPECT_EQ(link(b.summary, 1, 0).messages, 4);
  EXPECT_EQ(link(b.summary, 1, 0).bytes, 1024);
  EXPECT_EQ(b.summary.reduce_ops[1], 4);
  EXPECT_EQ(b.summary.reduce_ops[0], 4);
}

TEST(ReduceSchedule, ChainBinaryAndInOrderBinary) {
  const auto chain = build(Collective::reduce, 5, {2, 0, 2}, 64);
  for (auto [from, to] : {std::pair{2, 1}, {1, 0}, {4, 3}, {3, 0}})
    EXPECT_EQ(link(chain.summary, from, to).messages, 1) << from << "->" << to;
  const auto binary = build(Collective::reduce, 7, {4, 0, 0}, 64);
  EXPECT_EQ(link(binary.summary, 5, 1).bytes, 64);
  EXPECT_EQ(binary.summary.reduce_ops[0], 2);
  // In-order tree rooted at 3 (3 -> 2 1, 1 -> 0), then 3 sends the result to the root 0.
  const auto in_order = build(Collective::reduce, 4, {6, 0, 0}, 64);
  EXPECT_EQ(in_order.summary.messages, 4);
  EXPECT_EQ(link(in_order.summary, 0, 1).bytes, 64);
  EXPECT_EQ(link(in_order.summary, 3, 0).bytes, 64);
}

TEST(ReduceSchedule, RabenseifnerHalvesThenGathers) {
  // 4096 B = 1024 floats on 4 ranks: reduce-scatter 2 rounds (2048 B, 1024 B) x 4 ranks,
  // binomial gather 2->0 and 3->1 (1024 B), then 1->0 (2048 B).
  const auto b = build(Collective::reduce, 4, {7, 0, 0}, 4096);
  EXPECT_EQ(b.summary.messages, 11);
  EXPECT_EQ(b.summary.bytes, 4 * 2048 + 4 * 1024 + 1024 + 1024 + 2048);
  EXPECT_EQ(link(b.summary, 1, 0).bytes, 2048 + 2048);  // round 1 + gather
  EXPECT_EQ(link(b.summary, 3, 1).bytes, 1024 + 1024);
  EXPECT_EQ(b.summary.receives[0], 4);
}

TEST(ReduceSchedule, RabenseifnerFallsBackToLinearBelowOneElementPerRank) {
  const auto b = build(Collective::reduce, 8, {7, 0, 0}, 16);  // 4 floats < 8
  EXPECT_EQ(b.schedule.trace, (Trace{"reduce_intra_redscat_gather", "reduce_intra_basic_linear"}));
  EXPECT_EQ(b.summary.messages, 7);
}

// --- allreduce ---

TEST(AllreduceSchedule, RecursiveDoubling) {
  const auto b = build(Collective::allreduce, 4, {3, 0, 0}, 400);
  EXPECT_EQ(b.summary.messages, 8);
  EXPECT_EQ(b.summary.bytes, 3200);
  // 5 ranks: rank 0 folds into 1 first, gets the result back at the end.
  const auto odd = build(Collective::allreduce, 5, {3, 0, 0}, 400);
  EXPECT_EQ(odd.summary.messages, 10);
  EXPECT_EQ(link(odd.summary, 0, 1).bytes, 400);
  EXPECT_EQ(link(odd.summary, 1, 0).bytes, 400);
  EXPECT_EQ(odd.summary.sends[0], 1);
}

TEST(AllreduceSchedule, RingMovesTwoBlocksPerStep) {
  // 4000 B = 1000 floats, blocks of 250 floats = 1000 B: 3 + 3 sends per rank.
  const auto b = build(Collective::allreduce, 4, {4, 0, 0}, 4000);
  EXPECT_EQ(b.summary.messages, 24);
  EXPECT_EQ(b.summary.bytes, 24000);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(b.summary.reduce_ops[r], 3);
    EXPECT_EQ(link(b.summary, r, (r + 1) % 4).messages, 6);
  }
  // Uneven: 10 floats on 3 ranks: blocks 4, 3, 3.
  const auto u = build(Collective::allreduce, 3, {4, 0, 0}, 40);
  EXPECT_EQ(u.summary.bytes, 4 * 2 * 2 * (4 + 3 + 3));  // each block twice per phase
}

TEST(AllreduceSchedule, RingWithFewerElementsThanRanksIsRecursiveDoubling) {
  const auto b = build(Collective::allreduce, 4, {4, 0, 0}, 12);
  EXPECT_EQ(b.schedule.trace, (Trace{"allreduce_intra_ring", "allreduce_intra_recursivedoubling"}));
}

TEST(AllreduceSchedule, SegmentedRingPhases) {
  // 16384 B = 4096 floats, 1024 B segments = 256 floats: 4 phases of 3 steps, then the
  // allgather of whole 4096 B blocks.
  const auto b = build(Collective::allreduce, 4, {5, 1024, 0}, 16384);
  EXPECT_EQ(b.summary.messages, 4 * (4 * 3) + 4 * 3);
  EXPECT_EQ(b.summary.bytes, 48 * 1024 + 12 * 4096);
  EXPECT_EQ(b.summary.reduce_ops[0], 4 * 3);
  // Segment size 0: one segment = the whole buffer -> plain ring.
  const auto plain = build(Collective::allreduce, 4, {5, 0, 0}, 16384);
  EXPECT_EQ(plain.schedule.trace,
            (Trace{"allreduce_intra_ring_segmented segsize=0", "allreduce_intra_ring"}));
  EXPECT_EQ(plain.summary.messages, 24);
}

TEST(AllreduceSchedule, RabenseifnerAndItsLinearFallback) {
  const auto b = build(Collective::allreduce, 4, {6, 0, 0}, 4096);
  EXPECT_EQ(b.summary.messages, 16);
  EXPECT_EQ(b.summary.bytes, 2 * (4 * 2048 + 4 * 1024));
  const auto odd = build(Collective::allreduce, 6, {6, 0, 0}, 4096);
  EXPECT_EQ(link(odd.summary, 0, 1).bytes, 2048 + 4096);  // half, then the whole result
  const auto tiny = build(Collective::allreduce, 8, {6, 0, 0}, 16);
  EXPECT_EQ(tiny.schedule.trace.back(), "bcast_intra_basic_linear");
  EXPECT_EQ(tiny.summary.messages, 14);
}

TEST(AllreduceSchedule, NonoverlappingUsesTheFixedReduceAndBcast) {
  // P=4, 400 B: fixed reduce < 4096 -> binary (4); fixed bcast < 2048 -> bintree (5).
  const auto b = build(Collective::allreduce, 4, {2, 0, 0}, 400);
  EXPECT_EQ(b.schedule.trace,
            (Trace{"allreduce_intra_nonoverlapping", "reduce_intra_binary segsize=0",
                   "bcast_intra_bintree segsize=0"}));
  EXPECT_EQ(b.summary.messages, 6);
  const auto lin = build(Collective::allreduce, 4, {1, 0, 0}, 400);
  EXPECT_EQ(lin.summary.messages, 6);
}

// --- gather (per-rank block) ---

TEST(GatherSchedule, LinearBinomialAndLinearSync) {
  const auto lin = build(Collective::gather, 4, {1, 0, 0}, 100);
  EXPECT_EQ(lin.summary.messages, 3);
  EXPECT_EQ(lin.summary.bytes, 300);
  // In-order binomial tree: subtrees forward their blocks.
  const auto bin = build(Collective::gather, 8, {2, 0, 0}, 100);
  EXPECT_EQ(bin.summary.messages, 7);
  EXPECT_EQ(link(bin.summary, 4, 0).bytes, 400);
  EXPECT_EQ(link(bin.summary, 6, 4).bytes, 200);
  EXPECT_EQ(link(bin.summary, 2, 0).bytes, 200);
  EXPECT_EQ(bin.summary.bytes, 1200);
  const auto six = build(Collective::gather, 6, {2, 0, 0}, 100);
  EXPECT_EQ(link(six.summary, 4, 0).bytes, 200);
  // linear_sync: a zero-byte go, the first segment, the rest (possibly empty).
  const auto sync = build(Collective::gather, 4, {3, 0, 0}, 1000);
  EXPECT_EQ(sync.summary.messages, 9);
  EXPECT_EQ(link(sync.summary, 0, 2).bytes, 0);
  EXPECT_EQ(link(sync.summary, 2, 0).messages, 2);
  EXPECT_EQ(link(sync.summary, 2, 0).bytes, 1000);
  const auto seg = build(Collective::gather, 4, {3, 256, 0}, 1000);
  EXPECT_EQ(seg.schedule.ranks[1].ops()[2].bytes, 256);  // recv go, wait, send first
}

// --- fixed decision and errors ---

TEST(DefaultDecision, RunsTheFixedChoiceUnsegmented) {
  // bcast P=4, 1 MiB: chain with fan-out 0 (a single pipeline), as the tracer showed.
  const auto b = build(Collective::bcast, 4, {0, 0, 0}, 1 << 20);
  EXPECT_EQ(b.schedule.trace,
            (Trace{"bcast_intra_dec_fixed alg=2", "bcast_intra_chain segsize=0 fanout=0"}));
  EXPECT_EQ(b.summary.messages, 3);
  EXPECT_EQ(link(b.summary, 2, 3).bytes, 1 << 20);
  const auto g = build(Collective::gather, 4, {0, 0, 0}, 1 << 20);
  EXPECT_EQ(g.schedule.trace.front(), "gather_intra_dec_fixed alg=3");
}

TEST(BuildSchedule, RejectsWhatOpenMpiRejects) {
  EXPECT_THROW(build(Collective::bcast, 4, {10, 0, 0}, 4), AlgorithmOutOfRange);
  EXPECT_THROW(build(Collective::reduce, 4, {8, 0, 0}, 4), AlgorithmOutOfRange);
  EXPECT_THROW(build(Collective::allreduce, 4, {7, 0, 0}, 4), AlgorithmOutOfRange);
  EXPECT_THROW(build(Collective::gather, 4, {4, 0, 0}, 4), AlgorithmOutOfRange);
  EXPECT_THROW(build(Collective::barrier, 4, {1, 0, 0}, 4), std::invalid_argument);
  EXPECT_THROW(build(Collective::bcast, 1, {1, 0, 0}, 4), std::invalid_argument);
  EXPECT_THROW(build(Collective::allreduce, 4, {3, 0, 0}, 2), std::invalid_argument);
  CallSpec big;
  big.comm_size = 64;
  big.config = {6, 1, 0};
  big.osu_size = 1 << 20;
  big.max_messages = 100000;
  EXPECT_THROW(build_schedule(big), ScheduleTooLarge);
}

// The message limit is exact: a schedule of N sends builds under a limit of N and throws under
// N - 1, whether the builder counts its sends ahead (Schedule::expect_sends: trees, rings) or not.
TEST(BuildSchedule, TheMessageLimitIsExactForEveryAlgorithm) {
  const std::vector<std::pair<Collective, int>> algs = {{Collective::bcast, 9},
                                                        {Collective::reduce, 7},
                                                        {Collective::allreduce, 6},
                                                        {Collective::gather, 3}};
  for (const auto& [collective, count] : algs)
    for (int id = 1; id <= count; ++id)
      for (int segsize : {0, 1024})
        for (int p : {5, 12}) {
          CallSpec spec;
          spec.collective = collective;
          spec.comm_size = p;
          spec.config = {id, segsize, 2};
          spec.osu_size = 1 << 15;
          const std::int64_t n = summarize(build_schedule(spec)).messages;
          spec.max_messages = n;
          EXPECT_NO_THROW(build_schedule(spec)) << name(collective) << " " << id << " " << p;
          spec.max_messages = n - 1;
          EXPECT_THROW(build_schedule(spec), ScheduleTooLarge)
              << name(collective) << " " << id << " " << segsize << " P=" << p << " N=" << n;
        }
}

// Every algorithm at many sizes: sends and receives pair up, and each rank gets the data the
// collective owes it.
TEST(BuildSchedule, EveryAlgorithmPairsUpAndDeliversItsData) {
  const std::vector<std::pair<Collective, int>> algs = {{Collective::bcast, 9},
                                                        {Collective::reduce, 7},
                                                        {Collective::allreduce, 6},
                                                        {Collective::gather, 3}};
  for (const auto& [coll, count] : algs)
    for (int alg = 0; alg <= count; ++alg)
      for (int p : {2, 3, 4, 5, 7, 8, 12})
        for (std::int64_t size : {4, 12, 64, 1000, 4096})
          for (int seg : {0, 4, 100})
            for (int fanout : {0, 2}) {
              SCOPED_TRACE(std::string(name(coll)) + " alg " + std::to_string(alg) + " P " +
                           std::to_string(p) + " size " + std::to_string(size) + " seg " +
                           std::to_string(seg) + " fanout " + std::to_string(fanout));
              CallSpec spec;
              spec.collective = coll;
              spec.comm_size = p;
              spec.config = {alg, seg, fanout};
              spec.osu_size = size;
              const Schedule s = build_schedule(spec);
              ScheduleSummary sum;
              ASSERT_NO_THROW(sum = summarize(s));
              for (int r = 0; r < p; ++r) {
                const std::int64_t in = bytes_into(sum, r);
                switch (coll) {
                  case Collective::bcast:
                    if (r != 0) {
                      EXPECT_GE(in, size) << "rank " << r;
                    }
                    break;
                  case Collective::gather:
                    if (r == 0) {
                      EXPECT_EQ(in, (p - 1) * size);
                    }
                    break;
                  case Collective::reduce:
                    if (r == 0) {
                      EXPECT_GE(in, size);
                    }
                    break;
                  case Collective::allreduce:
                    EXPECT_GE(in, size / 4 * (p - 1) / p * 4) << "rank " << r;
                    break;
                  default:
                    break;
                }
              }
            }
}

}  // namespace
}  // namespace colltune::sim
