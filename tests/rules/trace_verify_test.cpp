#include <gtest/gtest.h>

#include <set>

#include "core/algorithm_table.h"
#include "core/fixed_decision.h"
#include "rules/trace.h"
#include "rules/verify.h"

namespace colltune {
namespace {

TEST(Trace, ParsesTracerOutput) {
  TraceData t = parse_trace_text(
      "# colltune-trace 1 rank=0 world_size=4 pid=12 dropped=0\n"
      "fn=bcast_intra_chain rank=0 comm_size=4 bytes=1048576 dtsize=1 segsize=65536 fanout=1 "
      "maxreq=- depth=0 calls=120\n"
      "fn=reduce_intra_binary rank=0 comm_size=4 bytes=8 dtsize=8 segsize=0 fanout=- maxreq=0 "
      "depth=0 calls=21 future=1\n",
      "t0");
  ASSERT_EQ(t.records.size(), 2u);
  EXPECT_EQ(t.records[0].function, "bcast_intra_chain");
  EXPECT_EQ(t.records[0].segsize, 65536);
  EXPECT_EQ(t.records[0].fanout, 1);
  EXPECT_FALSE(t.records[0].max_requests);
  EXPECT_EQ(t.records[0].calls, 120);
  EXPECT_FALSE(t.records[1].fanout);
  EXPECT_EQ(t.records[1].max_requests, 0);
  EXPECT_THROW(parse_trace_text("fn=x calls=3\n"), TraceParseError);
  EXPECT_THROW(parse_trace_text("fn=x bytes=1 calls=three\n"), TraceParseError);
}

TEST(Trace, FunctionNamesMapToAlgorithmIds) {
  EXPECT_EQ(algorithm_for_function("bcast_intra_binomial")->algorithm, 6);
  EXPECT_EQ(algorithm_for_function("ompi_coll_base_bcast_intra_bintree")->algorithm, 5);
  EXPECT_EQ(algorithm_for_function("bcast_intra_split_bintree")->algorithm, 4);
  EXPECT_EQ(algorithm_for_function("allreduce_intra_recursivedoubling")->algorithm, 3);
  EXPECT_EQ(algorithm_for_function("allreduce_intra_ring_segmented")->algorithm, 5);
  EXPECT_EQ(algorithm_for_function("allreduce_intra_redscat_allgather")->algorithm, 6);
  EXPECT_EQ(algorithm_for_function("reduce_intra_in_order_binary")->algorithm, 6);
  EXPECT_EQ(algorithm_for_function("reduce_intra_redscat_gather")->algorithm, 7);
  EXPECT_EQ(algorithm_for_function("allgather_intra_neighborexchange")->algorithm, 5);
  EXPECT_EQ(algorithm_for_function("alltoall_intra_bruck")->algorithm, 3);
  EXPECT_EQ(algorithm_for_function("barrier_intra_tree")->algorithm, 6);
  EXPECT_EQ(algorithm_for_function("gather_intra_linear_sync")->collective, Collective::gather);
  EXPECT_FALSE(algorithm_for_function("exscan_intra_linear"));
  EXPECT_FALSE(algorithm_for_function("bcast_intra_generic"));
  // Every algorithm of the 4.1 table has a traced function and back.
  for (const auto& [coll, algs] : AlgorithmTable::builtin_4_1().entries())
    for (const auto& a : algs.algorithms) {
      std::string_view fn = function_for_algorithm(coll, a.id);
      ASSERT_FALSE(fn.empty()) << name(coll) << " " << a.id;
      EXPECT_EQ(algorithm_for_function(fn)->algorithm, a.id);
    }
}

TEST(FixedDecision, MatchesTheTracedDefaultsAt4Ranks) {
  // docs/reference/open-mpi-rules.md §B.2: bcast at np=4: <64 bintree, 64-127 binomial, 128-2047
  // bintree, 2048-8191 binomial, 8 KiB-<1 MiB basic_linear, >= 1 MiB chain.
  EXPECT_EQ(fixed_decision_4_1(Collective::bcast, 4, 4), 5);
  EXPECT_EQ(fixed_decision_4_1(Collective::bcast, 4, 64), 6);
  EXPECT_EQ(fixed_decision_4_1(Collective::bcast, 4, 128), 5);
  EXPECT_EQ(fixed_decision_4_1(Collective::bcast, 4, 2048), 6);
  EXPECT_EQ(fixed_decision_4_1(Collective::bcast, 4, 8192), 1);
  EXPECT_EQ(fixed_decision_4_1(Collective::bcast, 4, 1 << 20), 2);
  EXPECT_EQ(fixed_decision_4_1(Collective::allgather, 2, 100), 6);
  EXPECT_EQ(fixed_decision_4_1(Collective::allgather, 3, 100), 3);
  EXPECT_EQ(fixed_decision_4_1(Collective::reduce, 4, 100, false), 1);
  EXPECT_EQ(fixed_decision_4_1(Collective::barrier, 100, 0), 4);
  EXPECT_FALSE(fixed_decision_4_1(Collective::reduce_scatter_block, 4, 100));
}

TraceRecord rec(std::string fn, int rank, std::int64_t bytes, std::int64_t calls,
                std::optional<std::int64_t> seg = std::nullopt,
                std::optional<std::int64_t> fan = std::nullopt) {
  TraceRecord r;
  r.function = std::move(fn);
  r.rank = rank;
  r.comm_size = 4;
  r.bytes = bytes;
  r.dtsize = 1;
  r.segsize = seg;
  r.fanout = fan;
  r.calls = calls;
  return r;
}

TraceData all_ranks(std::vector<TraceRecord> per_rank0) {
  TraceData t;
  for (int rank = 0; rank < 4; ++rank)
    for (auto r : per_rank0) {
      r.rank = rank;
      t.records.push_back(r);
    }
  return t;
}

TEST(Verify, MatchesRulesAndFixedDecision) {
  RulesModel m{{CollectiveRules{7, {{4, {{0, 1}, {8192, 6}, {524288, 2, 1, 65536}}}}}}};
  TraceData t = all_ranks({rec("bcast_intra_basic_linear", 0, 4, 100),
                           rec("bcast_intra_binomial", 0, 8192, 100, 0),
                           rec("bcast_intra_chain", 0, 1 << 20, 100, 65536, 1)});
  VerifyOptions options;
  options.min_calls = 100;
  auto report = verify_trace(m, Collective::bcast, 4, {4, 8192, 1 << 20}, t, options);
  EXPECT_TRUE(report.all_match()) << report.to_text();

  // A wrong segment size is a mismatch even though the algorithm is right.
  TraceData wrong_seg = all_ranks({rec("bcast_intra_chain", 0, 1 << 20, 100, 8192, 1)});
  auto r2 = verify_trace(m, Collective::bcast, 4, {1 << 20}, wrong_seg, options);
  EXPECT_EQ(r2.rows[0].status, VerifyStatus::mismatch);
  EXPECT_NE(r2.rows[0].detail.find("segment size"), std::string::npos);

  // No file (fixed decision): 4 B -> bintree at 4 ranks.
  TraceData fixed = all_ranks({rec("bcast_intra_bintree", 0, 4, 100, 0)});
  EXPECT_TRUE(verify_trace(RulesModel{}, Collective::bcast, 4, {4}, fixed, options).all_match());
  EXPECT_FALSE(verify_trace(m, Collective::bcast, 4, {4}, fixed, options).all_match());
}

TEST(Verify, TooFewCallsIsNotObservedAndRanksMustAgree) {
  RulesModel m{{CollectiveRules{7, {{2, {{0, 1}}}}}}};
  VerifyOptions options;
  options.min_calls = 100;
  auto few = verify_trace(m, Collective::bcast, 4, {4},
                          all_ranks({rec("bcast_intra_basic_linear", 0, 4, 20)}), options);
  EXPECT_EQ(few.rows[0].status, VerifyStatus::not_observed);

  TraceData split = all_ranks({rec("bcast_intra_basic_linear", 0, 4, 100)});
  split.records[3].function = "bcast_intra_binomial";
  auto disagree = verify_trace(m, Collective::bcast, 4, {4}, split, options);
  EXPECT_EQ(disagree.rows[0].status, VerifyStatus::ambiguous);
}

TEST(Verify, GatherKeyUsesPerRankBytesTimesP) {
  // Rule at key 1024 = OSU 256 per rank on 4 ranks.
  RulesModel m{{CollectiveRules{9, {{2, {{0, 1}, {1024, 3, 0, 0}}}}}}};
  TraceData t = all_ranks({rec("gather_intra_basic_linear", 0, 64, 10),
                           rec("gather_intra_linear_sync", 0, 256, 10, 0)});
  VerifyOptions options;
  options.min_calls = 10;
  auto report = verify_trace(m, Collective::gather, 4, {64, 256}, t, options);
  EXPECT_TRUE(report.all_match()) << report.to_text();
  EXPECT_EQ(report.rows[1].rules_key, 1024);
}

TEST(Verify, OutOfRangeAlgorithmExpectsTheCallToFail) {
  RulesModel m{{CollectiveRules{7, {{2, {{0, 42}}}}}}};
  auto ok = verify_trace(m, Collective::bcast, 4, {4}, TraceData{}, {});
  EXPECT_EQ(ok.rows[0].status, VerifyStatus::match);
  EXPECT_TRUE(ok.rows[0].expected.call_fails);
}

TEST(Verify, IgnoresOsuTimingReduce) {
  RulesModel m{{CollectiveRules{11, {{2, {{0, 5}}}}}}};
  TraceRecord timing = rec("reduce_intra_binary", 0, 8, 300, 0);
  timing.dtsize = 8;
  TraceRecord measured = rec("reduce_intra_binomial", 0, 8, 100, 0);
  measured.dtsize = 4;
  measured.max_requests = 0;
  VerifyOptions options;
  options.min_calls = 100;
  auto report = verify_trace(m, Collective::reduce, 4, {8}, all_ranks({timing, measured}), options);
  EXPECT_TRUE(report.all_match()) << report.to_text();
}

}  // namespace
}  // namespace colltune
