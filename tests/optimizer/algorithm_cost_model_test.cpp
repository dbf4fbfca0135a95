#include "optimizer/algorithm_cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <vector>

#include "core/fixed_decision.h"

namespace colltune {
namespace {

double latency(Collective c, const TuningConfig& config, int p, std::int64_t n) {
  const auto terms = algorithm_cost_terms(c, config, p, n);
  EXPECT_TRUE(terms.has_value()) << to_string(config) << " P=" << p << " n=" << n;
  return terms ? modelled_latency_us(*terms, typical_machine_coefficients()) : 0;
}

// Latencies made by known coefficients: algorithms 1, 3, 4, 5 and 6 of `collectives` at
// `comm_sizes` on nodes of 16 ranks, 4 B to 1 MiB; `memory` false: without the node memory's
// term.
std::vector<CostObservation> made_by(const MachineCoefficients& truth,
                                     std::initializer_list<Collective> collectives,
                                     std::initializer_list<int> comm_sizes, bool memory) {
  std::vector<CostObservation> obs;
  for (Collective c : collectives)
    for (int id : {1, 3, 4, 5, 6})
      for (int p : comm_sizes)
        for (std::int64_t n = 4; n <= (1 << 20); n *= 16) {
          auto t = *algorithm_cost_terms(c, {id, 0, 0}, p, n, 16);
          if (!memory) t.shared_bytes = 0;
          obs.push_back({t, modelled_latency_us(t, truth)});
        }
  return obs;
}

void expect_same_terms(const CostTerms& a, const CostTerms& b) {
  EXPECT_DOUBLE_EQ(a.messages, b.messages);
  EXPECT_DOUBLE_EQ(a.rounds, b.rounds);
  EXPECT_DOUBLE_EQ(a.bytes, b.bytes);
  EXPECT_DOUBLE_EQ(a.reduced, b.reduced);
}

TEST(AlgorithmCostModel, ALinearReduceGrowsWithPAndATreeWithLogP) {
  // 1 MiB: the root of a linear reduce takes and reduces P - 1 messages one after the other,
  // and rank i waits until it took its own (P / 2 messages on average over the ranks); a rank
  // of the binomial tree waits for its subtree, log2 P levels at most.
  const std::int64_t n = 1 << 20;
  const TuningConfig linear{1, 0, 0}, binomial{5, 0, 0};
  const double lin64 = latency(Collective::reduce, linear, 64, n);
  const double lin1024 = latency(Collective::reduce, linear, 1024, n);
  const double tree64 = latency(Collective::reduce, binomial, 64, n);
  const double tree1024 = latency(Collective::reduce, binomial, 1024, n);
  EXPECT_GT(lin1024 / lin64, 14.0);  // like P
  EXPECT_LT(lin1024 / lin64, 17.0);
  EXPECT_LT(tree1024 / tree64, 2.0);    // like log P at most
  EXPECT_GT(lin1024 / tree1024, 50.0);  // at 1024 ranks a linear reduce is far dearer
  const auto lin = *algorithm_cost_terms(Collective::reduce, linear, 1024, n);
  EXPECT_NEAR(lin.bytes, 1023.0 * 1026 / 2048 * n, 1e-6 * n);  // (P - 1)(P + 2) / (2P)
  // At 2 ranks every algorithm is one exchange.
  expect_same_terms(*algorithm_cost_terms(Collective::reduce, linear, 2, n),
                    *algorithm_cost_terms(Collective::reduce, binomial, 2, n));
}

TEST(AlgorithmCostModel, SegmentsPipelineDownAChain) {
  // A 1 MiB pipeline (chain fan-out 1) over 64 ranks: the rank at depth d has the message after
  // d hops (31.5 on average) and forwards it once (all but the last). In 8 KiB segments, 127
  // more segments follow the first, one hop each: 31.5 + 127 + 63/64 stages of 8 KiB.
  const std::int64_t n = 1 << 20;
  const auto whole = algorithm_cost_terms(Collective::bcast, {3, 0, 0}, 64, n);
  const auto seg = algorithm_cost_terms(Collective::bcast, {3, 8192, 0}, 64, n);
  ASSERT_TRUE(whole && seg);
  EXPECT_DOUBLE_EQ(whole->rounds, 31.5 + 63.0 / 64);
  EXPECT_DOUBLE_EQ(whole->bytes, (31.5 + 63.0 / 64) * n);
  EXPECT_DOUBLE_EQ(seg->rounds, 31.5 + 127 + 63.0 / 64);
  EXPECT_DOUBLE_EQ(seg->bytes, (31.5 + 127 + 63.0 / 64) * 8192);
  EXPECT_LT(latency(Collective::bcast, {3, 8192, 0}, 64, n),
            latency(Collective::bcast, {3, 0, 0}, 64, n) / 5);
  // A chain's fan-out shortens the chains (fewer rounds) and loads the root, whose period is
  // then four segments (more bytes once the pipeline is full).
  const auto chain4 = algorithm_cost_terms(Collective::bcast, {2, 8192, 4}, 64, n);
  ASSERT_TRUE(chain4);
  EXPECT_LT(chain4->rounds, seg->rounds - 20);
  EXPECT_GT(chain4->bytes, 2 * seg->bytes);
  // The same fan-out past P - 1 is the same chain (build_chain clamps it).
  expect_same_terms(*algorithm_cost_terms(Collective::bcast, {2, 8192, 32}, 8, n),
                    *algorithm_cost_terms(Collective::bcast, {2, 8192, 7}, 8, n));
  // Segments of reduce are counted in floats; a rank reduces what its children send.
  const auto rseg = algorithm_cost_terms(Collective::reduce, {3, 8192, 0}, 64, n);
  ASSERT_TRUE(rseg);
  EXPECT_DOUBLE_EQ(rseg->rounds, 31.5 + 127 + 63.0 / 64);
  EXPECT_DOUBLE_EQ(rseg->reduced, (31.5 + 127 * 63.0 / 64) * 8192);
}

TEST(AlgorithmCostModel, ATreeServesItsChildrenInOpenMpisOrder) {
  // Binomial bcast on 8 ranks (build_bmtree: 0 -> 1, 2, 4; 1 -> 3, 5; 2 -> 6; 3 -> 7; largest
  // subtree first), one segment of 1 byte. A parent posts all its sends at once and they leave
  // in turn: rank 4 waits for 3 of them, 2 for 2, 1 for 1; along the paths 1 2 3 | 2 3 3 3,
  // 17 / 8 per rank, plus its own children (7 / 8): 3 messages. The bytes are shared: every
  // child waits for all its parent's (3 3 3 | 5 5 4 6, 29 / 8, plus 7 / 8).
  const auto bcast = algorithm_cost_terms(Collective::bcast, {6, 0, 0}, 8, 1);
  ASSERT_TRUE(bcast);
  EXPECT_DOUBLE_EQ(bcast->messages, 3.0);
  EXPECT_DOUBLE_EQ(bcast->bytes, 4.5);
  EXPECT_DOUBLE_EQ(bcast->rounds, 1.5 + 0.5);  // depth, and a send for each parent
  // In-order binomial reduce on 8 ranks (0 <- 1, 2, 4; 2 <- 3; 4 <- 5, 6; 6 <- 7; smallest
  // subtree first): a parent takes its children's messages one at a time in that order, each
  // once the child has its own, so rank 4 is done after 2 receives (5, then 6 which had 7),
  // not 1 + 2, and the root after 3, not 1 + 2 + 3 (the receives on each rank's critical path:
  // 3 0 1 0 2 0 1 0, 7 / 8), plus its own send (7 / 8).
  const auto reduce = algorithm_cost_terms(Collective::reduce, {5, 0, 0}, 8, 4);
  ASSERT_TRUE(reduce);
  EXPECT_DOUBLE_EQ(reduce->messages, 1.75);
  EXPECT_DOUBLE_EQ(reduce->reduced, 7.0 / 8 * 4);
}

TEST(AlgorithmCostModel, TheDefaultIsTheFixedDecisionAndFallbacksAreWhatRuns) {
  for (Collective c :
       {Collective::bcast, Collective::reduce, Collective::allreduce, Collective::gather})
    for (int p : {2, 7, 64, 1024})
      for (std::int64_t n : {4, 4096, 1 << 20}) {
        const int id = *fixed_decision_4_1(c, p, n);
        const auto def = algorithm_cost_terms(c, TuningConfig::default_decision(), p, n);
        const auto fixed = algorithm_cost_terms(c, {id, 0, 0}, p, n);
        ASSERT_TRUE(def && fixed);
        expect_same_terms(*def, *fixed);
      }
  // scatter_allgather with fewer bytes than ranks runs the linear bcast.
  expect_same_terms(*algorithm_cost_terms(Collective::bcast, {8, 0, 0}, 64, 16),
                    *algorithm_cost_terms(Collective::bcast, {1, 0, 0}, 64, 16));
  // A segmented ring with segment size 0 (or a segment per rank above the message) is the ring.
  expect_same_terms(*algorithm_cost_terms(Collective::allreduce, {5, 0, 0}, 16, 1 << 16),
                    *algorithm_cost_terms(Collective::allreduce, {4, 0, 0}, 16, 1 << 16));
  // Rabenseifner's reduce with fewer floats than the power of two is the linear reduce.
  expect_same_terms(*algorithm_cost_terms(Collective::reduce, {7, 0, 0}, 64, 16),
                    *algorithm_cost_terms(Collective::reduce, {1, 0, 0}, 64, 16));
  // Every algorithm of the four collectives has a model; others and unknown ids do not.
  for (int id = 1; id <= 9; ++id)
    EXPECT_TRUE(algorithm_cost_terms(Collective::bcast, {id, 0, 2}, 16, 1024)) << id;
  for (int id = 1; id <= 7; ++id)
    EXPECT_TRUE(algorithm_cost_terms(Collective::reduce, {id, 0, 2}, 16, 1024)) << id;
  for (int id = 1; id <= 6; ++id)
    EXPECT_TRUE(algorithm_cost_terms(Collective::allreduce, {id, 0, 0}, 16, 1024)) << id;
  for (int id = 1; id <= 3; ++id)
    EXPECT_TRUE(algorithm_cost_terms(Collective::gather, {id, 0, 0}, 16, 1024)) << id;
  EXPECT_FALSE(algorithm_cost_terms(Collective::bcast, {10, 0, 0}, 16, 1024));
  EXPECT_FALSE(algorithm_cost_terms(Collective::alltoall, {1, 0, 0}, 16, 1024));
  EXPECT_FALSE(algorithm_cost_terms(Collective::bcast, {1, 0, 0}, 1, 1024));
}

TEST(AlgorithmCostModel, FitsTheMachineCoefficientsFromObservedLatencies) {
  // Latencies made by known coefficients (3x the typical latency, half its bandwidth): the
  // fit finds them from a few configurations; with nothing observed it returns the prior. (The
  // binary tree is the one among them whose critical path has more receives than rounds.)
  MachineCoefficients truth;
  truth.per_message_us = 0.2;
  truth.per_round_us = 4.0;
  truth.per_byte_us = 2e-4;
  truth.per_reduced_byte_us = 1e-4;
  std::vector<CostObservation> obs;
  for (int id : {1, 3, 4, 5, 7})
    for (int p : {2, 16, 256})
      for (std::int64_t n = 4; n <= (1 << 20); n *= 16) {
        const auto t = *algorithm_cost_terms(Collective::reduce, {id, 0, 0}, p, n);
        obs.push_back({t, modelled_latency_us(t, truth)});
      }
  const MachineCoefficients fit =
      fit_machine_coefficients(obs, typical_machine_coefficients(), 1e-6);
  EXPECT_NEAR(fit.per_message_us, truth.per_message_us, 0.01);
  EXPECT_NEAR(fit.per_round_us, truth.per_round_us, 0.05);
  EXPECT_NEAR(fit.per_byte_us / truth.per_byte_us, 1, 0.01);
  EXPECT_NEAR(fit.per_reduced_byte_us / truth.per_reduced_byte_us, 1, 0.02);
  const MachineCoefficients none = fit_machine_coefficients({}, typical_machine_coefficients());
  EXPECT_DOUBLE_EQ(none.per_round_us, typical_machine_coefficients().per_round_us);
  EXPECT_DOUBLE_EQ(none.per_byte_us, typical_machine_coefficients().per_byte_us);
  // Bcast never reduces: the reduction's coefficient stays at its prior, none goes negative.
  std::vector<CostObservation> bcast;
  for (int p : {4, 64})
    for (std::int64_t n = 1; n <= (1 << 20); n *= 32) {
      const auto t = *algorithm_cost_terms(Collective::bcast, {6, 0, 0}, p, n);
      bcast.push_back({t, 0.5 * modelled_latency_us(t, truth)});
    }
  const MachineCoefficients b = fit_machine_coefficients(bcast, typical_machine_coefficients());
  EXPECT_GE(b.per_message_us, 0);
  EXPECT_GE(b.per_round_us, 0);
  EXPECT_NEAR(b.per_reduced_byte_us / typical_machine_coefficients().per_reduced_byte_us, 1, 1e-9);
}

TEST(AlgorithmCostModelNodes, OneNodeIsTheOneLevelModel) {
  // Ranks per node 0 (the default), P or more: no crossing terms, every other term unchanged
  // (but the node memory's, below).
  for (Collective c :
       {Collective::bcast, Collective::reduce, Collective::allreduce, Collective::gather})
    for (int id = 0; id <= 9; ++id)
      for (int p : {2, 7, 64})
        for (std::int64_t n : {4, 1 << 20}) {
          const TuningConfig config{id, id % 2 ? 8192 : 0, 4};
          const auto one = algorithm_cost_terms(c, config, p, n);
          if (!one) continue;
          for (int q : {0, p, 4 * p}) {
            const auto t = algorithm_cost_terms(c, config, p, n, q);
            ASSERT_TRUE(t);
            expect_same_terms(*t, *one);
            EXPECT_EQ(t->inter_rounds, 0);
            EXPECT_EQ(t->inter_bytes, 0);
          }
          // Several nodes add to the crossing terms only.
          const auto nodes = algorithm_cost_terms(c, config, p, n, 1);
          ASSERT_TRUE(nodes);
          expect_same_terms(*nodes, *one);
          EXPECT_GT(nodes->inter_rounds, 0) << to_string(config) << " P=" << p;
        }
}

TEST(AlgorithmCostModelNodes, InOrderTreesKeepNeighboursTogether) {
  // 8 ranks on 2 nodes of 4, a 1 KiB reduce. Open MPI's binomial reduce tree is in order (rank
  // 4 holds 4-7 below it): only 4 -> 0 crosses, on the paths of rank 4 and of the root (2 / 8),
  // alone at its NICs. Its level-order binary tree (0: 1, 2; 1: 3, 5; 2: 4, 6; 3: 7) strides:
  // 1 -> 5, 2 -> 4, 2 -> 6 cross in the same level, three messages through each node's NIC
  // (each waits behind 2), and 3 -> 7 below, alone: every rank's path up crosses once; the
  // waits summed along them are 2 for ranks 0, 1, 2, 4, 5, 6, none for 3 and 7: 12 / 8.
  const auto binomial = algorithm_cost_terms(Collective::reduce, {5, 0, 0}, 8, 1024, 4);
  const auto binary = algorithm_cost_terms(Collective::reduce, {4, 0, 0}, 8, 1024, 4);
  ASSERT_TRUE(binomial && binary);
  EXPECT_DOUBLE_EQ(binomial->inter_rounds, 2.0 / 8);
  EXPECT_DOUBLE_EQ(binomial->inter_bytes, 0);
  EXPECT_DOUBLE_EQ(binary->inter_rounds, 1.0);
  EXPECT_DOUBLE_EQ(binary->inter_bytes, 12.0 / 8 * 1024);
  // The in-order binary tree is rooted at 7 (7: 6, 3; 6: 5, 4; 3: 2, 1; 1: 0): only 3 -> 7
  // crosses (ranks 3 and 7), then the result goes from 7 to the root 0 (2 / P on average).
  const auto in_order = algorithm_cost_terms(Collective::reduce, {6, 0, 0}, 8, 1024, 4);
  ASSERT_TRUE(in_order);
  EXPECT_DOUBLE_EQ(in_order->inter_rounds, 2.0 / 8 + 2.0 / 8);
  EXPECT_DOUBLE_EQ(in_order->inter_bytes, 0);
  // Down the same level-order tree (a bcast): ranks 4-7 are reached across the boundary, 4, 5
  // and 6 in the level whose three crossing messages share the NICs (2 ahead of the last).
  const auto bcast = algorithm_cost_terms(Collective::bcast, {5, 0, 0}, 8, 1000, 4);
  ASSERT_TRUE(bcast);
  EXPECT_DOUBLE_EQ(bcast->inter_rounds, 4.0 / 8);
  EXPECT_DOUBLE_EQ(bcast->inter_bytes, 6.0 / 8 * 1000);
  // A chain crosses each boundary with one message: it never waits at a NIC. The binary tree
  // does, more at 64 ranks on nodes of 16.
  const auto chain = algorithm_cost_terms(Collective::bcast, {3, 0, 0}, 64, 1000, 16);
  const auto tree = algorithm_cost_terms(Collective::bcast, {5, 0, 0}, 64, 1000, 16);
  ASSERT_TRUE(chain && tree);
  EXPECT_GT(chain->inter_rounds, 1);
  EXPECT_DOUBLE_EQ(chain->inter_bytes, 0);
  EXPECT_GT(tree->inter_bytes, 2 * tree->inter_rounds * 1000);
}

TEST(AlgorithmCostModelNodes, SchedulesAndLinearAlgorithmsCountTheirCrossings) {
  // The ring: every step's slowest pair crosses (the nodes' last ranks), one message per NIC.
  const std::int64_t n = 1 << 20;
  const auto ring = algorithm_cost_terms(Collective::allreduce, {4, 0, 0}, 8, n, 4);
  ASSERT_TRUE(ring);
  EXPECT_DOUBLE_EQ(ring->inter_rounds, 14);
  EXPECT_DOUBLE_EQ(ring->inter_bytes, 0);
  // Recursive doubling at 8 ranks on nodes of 4: only the distance-4 step crosses, all four
  // ranks of a node at once, each with the whole vector: the last waits behind three.
  const auto rd = algorithm_cost_terms(Collective::allreduce, {3, 0, 0}, 8, n, 4);
  ASSERT_TRUE(rd);
  EXPECT_DOUBLE_EQ(rd->inter_rounds, 1);
  EXPECT_DOUBLE_EQ(rd->inter_bytes, 3.0 * n);
  // The linear gather, 8 ranks on nodes of 4: ranks 4-7 cross, the root takes them last; rank
  // i (i >= 4) waits for i - 3 of them, the root for 4: (1 + 2 + 3 + 4 + 4) / 8 on average.
  // The root's port takes them one after the other anyway: no wait at the NIC on top.
  const auto linear = algorithm_cost_terms(Collective::gather, {1, 0, 0}, 8, 1024, 4);
  ASSERT_TRUE(linear);
  EXPECT_DOUBLE_EQ(linear->inter_rounds, 14.0 / 8);
  EXPECT_DOUBLE_EQ(linear->inter_bytes, 0);
}

TEST(AlgorithmCostModelNodes, FitsTheCrossingCoefficientsWhereRunsCrossed) {
  // Latencies of reduce and bcast on 1 and on several nodes of 16 made by known coefficients,
  // crossing a node 3 µs and 1/5 GB/s more: the fit finds all six.
  MachineCoefficients truth;
  truth.per_message_us = 0.2;
  truth.per_round_us = 0.5;
  truth.per_byte_us = 1e-4;
  truth.per_reduced_byte_us = 2e-4;
  truth.per_inter_round_us = 3.0;
  truth.per_inter_byte_us = 5e-4;
  const std::vector<CostObservation> obs =
      made_by(truth, {Collective::reduce, Collective::bcast}, {2, 16, 64, 256}, false);
  const MachineCoefficients fit =
      fit_machine_coefficients(obs, typical_machine_coefficients(), 1e-6);
  EXPECT_NEAR(fit.per_round_us / truth.per_round_us, 1, 0.02);
  EXPECT_NEAR(fit.per_byte_us / truth.per_byte_us, 1, 0.02);
  EXPECT_NEAR(fit.per_inter_round_us / truth.per_inter_round_us, 1, 0.02);
  EXPECT_NEAR(fit.per_inter_byte_us / truth.per_inter_byte_us, 1, 0.02);
  // Runs on one node only: the crossing coefficients stay at the prior, the others are the
  // one-level fit's to the digit. (No node memory here: the test below has it.)
  std::vector<CostObservation> one_node, one_level;
  for (const auto& o : obs) {
    CostTerms flat = o.terms;
    flat.inter_rounds = flat.inter_bytes = 0;
    one_node.push_back({flat, o.latency_us});
  }
  const MachineCoefficients a = fit_machine_coefficients(one_node, typical_machine_coefficients());
  EXPECT_EQ(a.per_inter_round_us, typical_machine_coefficients().per_inter_round_us);
  EXPECT_EQ(a.per_inter_byte_us, typical_machine_coefficients().per_inter_byte_us);
  EXPECT_NE(a.per_round_us, typical_machine_coefficients().per_round_us);
}

TEST(AlgorithmCostModelNodes, ANodesMemoryIsSharedByTheCopiesOfAStep) {
  // Binomial bcast of 1 byte on 8 ranks (0 -> 1, 2, 4; 1 -> 3, 5; 2 -> 6; 3 -> 7), all on one
  // node: the first level's three messages share the node's memory (each counts the other
  // two), so do the second's (1 -> 3, 1 -> 5, 2 -> 6), the third's one does not wait. Summed
  // along the paths: 2 for ranks 1, 2, 4, 4 for 3, 5, 6, 7: 22 / 8.
  const auto one_node = algorithm_cost_terms(Collective::bcast, {6, 0, 0}, 8, 1, 8);
  ASSERT_TRUE(one_node);
  EXPECT_DOUBLE_EQ(one_node->shared_bytes, 22.0 / 8);
  EXPECT_EQ(one_node->inter_rounds, 0);
  // On 2 nodes of 4, only 0 -> 1 and 0 -> 2 share node 0's memory (1 -> 3 is alone in its
  // level there; 0 -> 4, 1 -> 5, 2 -> 6 and 3 -> 7 cross): 1 on the paths of 1, 2, 3, 5, 6, 7.
  const auto two_nodes = algorithm_cost_terms(Collective::bcast, {6, 0, 0}, 8, 1, 4);
  ASSERT_TRUE(two_nodes);
  EXPECT_DOUBLE_EQ(two_nodes->shared_bytes, 6.0 / 8);
  // The ring allreduce of 1 KiB on 4 ranks (blocks of 256 B, 6 steps): on one node every step's
  // four messages share it (3 ahead of the last); on nodes of 2, each node has one.
  const auto ring = algorithm_cost_terms(Collective::allreduce, {4, 0, 0}, 4, 1024, 4);
  const auto ring_apart = algorithm_cost_terms(Collective::allreduce, {4, 0, 0}, 4, 1024, 2);
  ASSERT_TRUE(ring && ring_apart);
  EXPECT_DOUBLE_EQ(ring->shared_bytes, 6 * 3 * 256.0);
  EXPECT_DOUBLE_EQ(ring_apart->shared_bytes, 0);
  // Recursive doubling, 8 ranks on nodes of 4: the distance-1 and -2 steps stay within the
  // nodes, four whole vectors each; the distance-4 step crosses. On one node, all three.
  const std::int64_t n = 1 << 20;
  const auto rd = algorithm_cost_terms(Collective::allreduce, {3, 0, 0}, 8, n, 4);
  const auto rd_one = algorithm_cost_terms(Collective::allreduce, {3, 0, 0}, 8, n, 8);
  ASSERT_TRUE(rd && rd_one);
  EXPECT_DOUBLE_EQ(rd->shared_bytes, 2 * 3.0 * n);
  EXPECT_DOUBLE_EQ(rd_one->shared_bytes, 3 * 7.0 * n);
  // A linear algorithm's messages pass the root one at a time; without ranks per node, none.
  const auto linear = algorithm_cost_terms(Collective::gather, {1, 0, 0}, 8, 1024, 8);
  const auto flat = algorithm_cost_terms(Collective::allreduce, {4, 0, 0}, 4, 1024);
  ASSERT_TRUE(linear && flat);
  EXPECT_EQ(linear->shared_bytes, 0);
  EXPECT_EQ(flat->shared_bytes, 0);
  // The fit finds its coefficient beside the others from runs on one node and on several.
  MachineCoefficients truth = typical_machine_coefficients();
  truth.per_byte_us = 2e-4;
  truth.per_shared_byte_us = 5e-5;
  const std::vector<CostObservation> obs =
      made_by(truth, {Collective::reduce, Collective::allreduce}, {2, 8, 16, 64}, true);
  const MachineCoefficients fit =
      fit_machine_coefficients(obs, typical_machine_coefficients(), 1e-6);
  EXPECT_NEAR(fit.per_byte_us / truth.per_byte_us, 1, 0.02);
  EXPECT_NEAR(fit.per_shared_byte_us / truth.per_shared_byte_us, 1, 0.02);
}

TEST(AlgorithmCalibration, TakesEachAlgorithmsMedianRatioOverAllItsRuns) {
  // Algorithm 2: log ratios around -2 over its cells (one outlier each way); algorithm 6: one
  // cell at 2x the model, and one non-finite ratio (ignored).
  std::vector<AlgorithmCalibration::Cell> cells;
  for (double r : {-3.0, -2.1, -2.0, -1.9, 5.0, -1.95, -2.05}) cells.push_back({2, r});
  cells.push_back({6, std::log(2.0)});
  cells.push_back({6, std::nan("")});
  const AlgorithmCalibration cal(cells);
  EXPECT_DOUBLE_EQ(cal.log_factor(2), -2.0);
  EXPECT_DOUBLE_EQ(cal.log_factor(6), std::log(2.0));
  EXPECT_DOUBLE_EQ(cal.log_factor(3), 0.0);  // never observed: the model as it is
  EXPECT_DOUBLE_EQ(AlgorithmCalibration().log_factor(2), 0.0);
}

}  // namespace
}  // namespace colltune
