// The discrete-event timing model on cases small enough to derive by hand (simulator.h).
#include <gtest/gtest.h>

#include "runner/sim/collective_schedules.h"
#include "runner/sim/simulator.h"

namespace colltune::sim {
namespace {

// One level, no overheads, no contention: L = 1 us, 1 GB/s = 1000 B per us.
ClusterProfile toy(Protocol protocol = Protocol::eager, double contention = 0) {
  ClusterProfile p;
  p.name = "toy";
  p.nodes = 4;
  p.cores_per_node = 64;
  p.reduce_ns_per_byte = 0;
  LinkPiece piece;
  piece.latency_us = 1;
  piece.overhead_us = 0;
  piece.bandwidth_gbps = 1;
  piece.protocol = protocol;
  p.intra_node.pieces = {piece};
  p.intra_node.contention = contention;
  p.inter_node = p.intra_node;
  return p;
}

Schedule schedule_of(Collective c, int p, TuningConfig config, std::int64_t size) {
  CallSpec spec;
  spec.collective = c;
  spec.comm_size = p;
  spec.config = config;
  spec.osu_size = size;
  return build_schedule(spec);
}

TEST(Simulator, OneEagerMessage) {
  // Root: the send completes when its 1 us transfer ends; rank 1 gets the data L later.
  const ClusterProfile profile = toy();
  const SimResult r = Simulator(profile, profile.placement(2, 1, 0))
                          .run(schedule_of(Collective::bcast, 2, {1, 0, 0}, 1000));
  EXPECT_DOUBLE_EQ(r.rank_time_us[0], 1.0);
  EXPECT_DOUBLE_EQ(r.rank_time_us[1], 2.0);
  EXPECT_DOUBLE_EQ(r.avg_us, 1.5);
  EXPECT_DOUBLE_EQ(r.min_us, 1.0);
  EXPECT_DOUBLE_EQ(r.max_us, 2.0);
  EXPECT_EQ(r.intra_node_messages, 1);
  EXPECT_EQ(r.intra_node_bytes, 1000);
}

TEST(Simulator, RendezvousWaitsForTheHandshake) {
  // ready = max(0 + L, 0) + L = 2; data lands at 2 + L + D = 4; the send is done at 3.
  const ClusterProfile profile = toy(Protocol::rendezvous);
  const SimResult r = Simulator(profile, profile.placement(2, 1, 0))
                          .run(schedule_of(Collective::bcast, 2, {1, 0, 0}, 1000));
  EXPECT_DOUBLE_EQ(r.rank_time_us[0], 3.0);
  EXPECT_DOUBLE_EQ(r.rank_time_us[1], 4.0);
}

TEST(Simulator, PipelineFillAndDrain) {
  // 4 ranks, 4 segments of 1000 B (D = 1, L = 1). Rank i gets segment k at i*L + (k+i)*D;
  // the root is done after nseg*D, an intermediate rank when its last forward ends
  // (i*L + (nseg+i)*D), the last rank when the last segment lands: 3 + 6 = 9.
  const ClusterProfile profile = toy();
  const SimResult r = Simulator(profile, profile.placement(4, 1, 0))
                          .run(schedule_of(Collective::bcast, 4, {3, 1000, 0}, 4000));
  EXPECT_DOUBLE_EQ(r.rank_time_us[0], 4.0);
  EXPECT_DOUBLE_EQ(r.rank_time_us[1], 6.0);
  EXPECT_DOUBLE_EQ(r.rank_time_us[2], 8.0);
  EXPECT_DOUBLE_EQ(r.rank_time_us[3], 9.0);
  EXPECT_DOUBLE_EQ(r.avg_us, 6.75);
}

TEST(Simulator, SegmentationPaysOffOnLongPipelines) {
  // Unsegmented, 8 ranks, 8000 B: 7 hops of L + 8 D = 63 us for the last rank; with 1000 B
  // segments it is 7 L + (8 - 1 + 7) D = 21 us.
  const ClusterProfile profile = toy();
  const Simulator sim(profile, profile.placement(8, 1, 0));
  EXPECT_DOUBLE_EQ(sim.run(schedule_of(Collective::bcast, 8, {3, 0, 0}, 8000)).max_us, 63.0);
  EXPECT_DOUBLE_EQ(sim.run(schedule_of(Collective::bcast, 8, {3, 1000, 0}, 8000)).max_us, 21.0);
}

TEST(Simulator, EagerSendsFromOneRankGoOneAfterAnother) {
  // Linear bcast, 4 ranks: the root pushes 3 transfers of D = 1 back to back.
  const ClusterProfile profile = toy();
  const SimResult r = Simulator(profile, profile.placement(4, 1, 0))
                          .run(schedule_of(Collective::bcast, 4, {1, 0, 0}, 1000));
  EXPECT_DOUBLE_EQ(r.rank_time_us[1], 2.0);
  EXPECT_DOUBLE_EQ(r.rank_time_us[2], 3.0);
  EXPECT_DOUBLE_EQ(r.rank_time_us[3], 4.0);
  EXPECT_DOUBLE_EQ(r.rank_time_us[0], 3.0);
}

TEST(Simulator, NicContentionDelaysConcurrentTransfers) {
  // Root alone on node 0, ranks 1 and 2 on node 1 (ppn 2 with cyclic... use explicit block
  // placement of 2 ranks per node: ranks 0,1 on node 0, 2,3 on node 1). Rendezvous data is
  // pulled, so without contention ranks 2 and 3 receive at the same time; with full NIC
  // contention the second waits one transfer.
  for (double contention : {0.0, 1.0}) {
    ClusterProfile profile = toy(Protocol::rendezvous, 0);
    profile.inter_node.contention = contention;
    const SimResult r = Simulator(profile, profile.placement(4, 2, 2))
                            .run(schedule_of(Collective::bcast, 4, {1, 0, 0}, 1000));
    EXPECT_EQ(r.inter_node_messages, 2);
    EXPECT_EQ(r.intra_node_messages, 1);
    EXPECT_DOUBLE_EQ(r.rank_time_us[2], 4.0);
    EXPECT_DOUBLE_EQ(r.rank_time_us[3], 4.0 + contention * 1.0) << "contention " << contention;
  }
}

TEST(Simulator, ReductionsCostCpuTime) {
  // Linear reduce, 2 ranks, 4000 B: the data lands at L + D = 5, then 4000 B x 1 ns.
  ClusterProfile profile = toy();
  profile.reduce_ns_per_byte = 1.0;
  const SimResult r = Simulator(profile, profile.placement(2, 1, 0))
                          .run(schedule_of(Collective::reduce, 2, {1, 0, 0}, 4000));
  EXPECT_DOUBLE_EQ(r.rank_time_us[0], 5.0 + 4.0);
}

TEST(Simulator, OversubscribedNodesSlowTheCpu) {
  ClusterProfile profile = toy();
  profile.cores_per_node = 2;
  profile.intra_node.pieces[0].overhead_us = 1;
  const Simulator sim(profile, profile.placement(4, 1, 0));
  EXPECT_DOUBLE_EQ(sim.cpu_factor(0), 2.0);
  // Two ranks, 2 on 2 cores: factor 1; o = 1 at send and receive: 1 + (L + D) + 1 = 4.
  const SimResult fit = Simulator(profile, profile.placement(2, 1, 0))
                            .run(schedule_of(Collective::bcast, 2, {1, 0, 0}, 1000));
  EXPECT_DOUBLE_EQ(fit.rank_time_us[1], 4.0);
}

TEST(Simulator, DetectsSchedulesThatWouldHang) {
  ClusterProfile profile = toy();
  Schedule s(2);
  s.rank(0).recv(1, 10);  // nobody sends
  EXPECT_THROW(Simulator(profile, profile.placement(2, 1, 0)).run(s), std::logic_error);
  EXPECT_THROW(Simulator(profile, profile.placement(3, 1, 0)).run(s), std::invalid_argument);
}

TEST(Simulator, EveryAlgorithmFinishesOnASmallCluster) {
  ClusterProfile profile = toy(Protocol::eager, 0.5);
  LinkPiece big = profile.intra_node.pieces[0];
  profile.intra_node.pieces[0].up_to_bytes = 256;
  big.protocol = Protocol::rendezvous;
  profile.intra_node.pieces.push_back(big);
  profile.inter_node = profile.intra_node;
  for (Collective c :
       {Collective::bcast, Collective::reduce, Collective::allreduce, Collective::gather})
    for (int alg = 0; alg <= 9; ++alg)
      for (int p : {2, 5, 8, 9})
        for (std::int64_t size : {4, 1000, 70000}) {
          CallSpec spec;
          spec.collective = c;
          spec.comm_size = p;
          spec.config = {alg, 512, 2};
          spec.osu_size = size;
          Schedule s(1);
          try {
            s = build_schedule(spec);
          } catch (const AlgorithmOutOfRange&) {
            continue;
          }
          const SimResult r = Simulator(profile, profile.placement(p, 2, 0)).run(s);
          EXPECT_GT(r.avg_us, 0) << name(c) << " alg " << alg << " P " << p;
          EXPECT_LE(r.min_us, r.avg_us);
          EXPECT_LE(r.avg_us, r.max_us);
        }
}

}  // namespace
}  // namespace colltune::sim
