// How well a profile reproduces measurements, and fitting a profile's numbers to them.
// Measurements are a landscape CSV (the replay format, replay_backend.h): each cell's median
// over its repeats is compared with the noise-free simulation of the same call.
//
// For an autotuner, what matters is less the absolute error than whether the simulator ranks
// the configurations like the machine does; compare() therefore also reports, per instance
// (collective, comm size, nodes, message size), the Spearman rank correlation between
// simulated and measured latencies, whether both pick the same best configuration, and the
// regret of trusting the simulator: measured latency of the simulator's pick / measured best - 1.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "runner/replay_backend.h"
#include "runner/sim/cluster_profile.h"
#include "runner/sim/sim_model.h"

namespace colltune::sim {

struct CellComparison {
  Collective collective = Collective::bcast;
  int comm_size = 0;
  int nodes = 0;
  TuningConfig config;
  std::int64_t msg_size = 0;
  double measured_us = 0;   // median of the recorded repeats
  double simulated_us = 0;  // NaN when the call could not be simulated
};

struct InstanceAgreement {
  Collective collective = Collective::bcast;
  int comm_size = 0;
  int nodes = 0;
  std::int64_t msg_size = 0;
  int configs = 0;      // configurations compared (simulated and measured)
  double spearman = 0;  // rank correlation, simulated vs measured
  bool same_best = false;
  double regret = 0;  // measured(sim's best) / measured best - 1
};

struct ComparisonReport {
  std::vector<CellComparison> cells;
  std::vector<InstanceAgreement> instances;  // with at least 2 configurations
  double median_abs_log2_ratio = 0;  // over cells: typical factor between sim and measurement
  double geometric_mean_ratio = 0;   // simulated / measured
  double mean_spearman = 0;
  double same_best_fraction = 0;
  double median_regret = 0;
  double p90_regret = 0;
  nlohmann::json to_json() const;
};

struct CompareOptions {
  std::set<Collective> collectives;  // empty: every modelled collective in the data
  int max_comm_size = 1 << 30;       // skip larger communicators (simulation cost)
  bool include_default = true;       // compare algorithm 0 cells too
};

// Placement of a cell: the recorded node count (packed, block) when the data has one, else
// the profile's default placement.
ComparisonReport compare(const SimModel& model, const ReplayDataset& measured,
                         const CompareOptions& options = {});

// Numbers of a profile a fit may change, as JSON pointers into ClusterProfile::to_json():
// per level "/intra_node/pieces/<i>/{latency_us,overhead_us,bandwidth_gbps}" and
// "/intra_node/contention" (same for inter_node when the profile has several nodes), plus
// "/reduce_ns_per_byte" and "/oversubscription_penalty".
std::vector<std::string> fittable_parameters(const ClusterProfile& profile);

struct FitOptions {
  std::vector<std::string> parameters;  // empty: fittable_parameters(start)
  int max_evaluations = 600;
  CompareOptions compare;
};

struct FitResult {
  ClusterProfile profile;   // the start profile with the fitted numbers
  double initial_loss = 0;  // mean squared natural-log ratio over cells
  double final_loss = 0;
  int evaluations = 0;
  std::map<std::string, double> values;  // fitted value per parameter
};

// Nelder-Mead on the parameters (log scale; contention on a logit scale) minimising the mean
// squared log ratio between simulated and measured medians. Throws std::invalid_argument for
// unknown parameters or data without comparable cells.
FitResult fit_profile(const ClusterProfile& start, const ReplayDataset& measured,
                      const FitOptions& options = {});

}  // namespace colltune::sim
