// Executes a Schedule on a simulated cluster with a discrete-event, LogGP-style model:
//
//  * posting a send costs the sender `overhead_us` of CPU; completing a receive costs the
//    receiver `overhead_us`; a reduction costs reduce_ns_per_byte per byte (all CPU costs and
//    the shared-memory latency grow with oversubscription);
//  * an eager message starts moving as soon as it is posted; a rendezvous message only once
//    the receive is posted: ready = max(send_post + L, recv_post) + L (request/clear to send);
//  * a transfer takes bytes / bandwidth and arrives L later. Eager data is pushed: the sender
//    injects one message at a time and is done once it is out; the receiver takes one in at a
//    time, so a busy receiver delays arrival, not the sender. Rendezvous data is pulled by the
//    receiver (single copy, RDMA read): the sender can feed several receivers at once and its
//    send completes when the data has been read;
//  * every transfer also holds its level's shared resource (the node's memory system; the NIC
//    of each end, per direction) for contention x bytes / peak bandwidth of the level: that
//    resource moves at most peak_bandwidth / contention bytes per us across all its transfers;
//  * resources are granted first come, first served in simulated time.
//
// The time of a rank is when its last operation completes, counted from a common start (OSU
// times each rank from just after a barrier); OSU's "Avg Latency" is the mean over ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "runner/sim/cluster_profile.h"
#include "runner/sim/schedule.h"

namespace colltune::sim {

struct SimResult {
  std::vector<double> rank_time_us;  // per rank
  double avg_us = 0;                 // mean over ranks (OSU Avg Latency)
  double min_us = 0;                 // OSU Min (over ranks)
  double max_us = 0;                 // OSU Max (over ranks)
  std::int64_t intra_node_messages = 0;
  std::int64_t inter_node_messages = 0;
  std::int64_t intra_node_bytes = 0;
  std::int64_t inter_node_bytes = 0;
  std::int64_t events = 0;  // simulation work, for performance checks
};

class Simulator {
 public:
  Simulator(const ClusterProfile& profile, const Placement& placement);

  // Throws std::invalid_argument when the schedule's size differs from the placement's, and
  // std::logic_error when the schedule deadlocks (unmatched sends or receives).
  SimResult run(const Schedule& schedule) const;

  // CPU slowdown of ranks on `node` (1 unless the node holds more ranks than cores).
  double cpu_factor(int node) const { return cpu_factor_[static_cast<std::size_t>(node)]; }

 private:
  ClusterProfile profile_;
  Placement placement_;
  std::vector<int> node_of_rank_;
  std::vector<double> cpu_factor_;  // per node
};

}  // namespace colltune::sim
