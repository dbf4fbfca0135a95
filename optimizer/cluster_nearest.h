// "nearest": the whole-cluster search without a shared model (optimizer/cluster_strategy.h).
// It searches each communicator size it may run on its own (Open MPI's default first, then the
// configurations that won at the nearest sizes already measured, then the rest of the size's
// space in a seeded random order), spreading runs over the sizes so that the cheapest size with
// the fewest runs goes next; and it predicts a size it did not run from its nearest measured
// neighbours (in log2 P):
//
// - A measured size's pick is the configuration with the lowest median at each message size.
//   Its confidence that the pick beats the default is P(ln(d/b) > 0) under a normal model of the
//   log-latency noise (sigma from the repeated runs, at least 3 %).
// - A size between two measured sizes takes their common pick with the smaller of their
//   confidences; when they disagree, the nearer one's pick with its confidence scaled by the
//   share of the distance to the other (at most 1/2 off). Outside the measured range the
//   nearest measured size's pick holds with its confidence halved per octave of distance.
// - A predicted pick below `min_confidence` is the default (Open MPI's fixed decision).
//
// It is the fallback that lets the campaign plumbing run end to end; "bo-cluster" (one
// surrogate over sizes) replaces it where available. Settings: {"noise": relative noise floor
// (default 0.03)}; unknown keys are rejected. Budget default: 12 runs per size. Under a
// node-second budget it counts what the runs reported (a run that reported no seconds at its
// size's price, run_price) and its first batch is one run, since no price is in seconds before.
#pragma once

#include <map>
#include <optional>
#include <set>

#include "optimizer/cluster_strategy.h"
#include "optimizer/run_prices.h"
#include "optimizer/search_space.h"

namespace colltune {

class NearestClusterStrategy : public ClusterStrategy {
 public:
  NearestClusterStrategy(Collective collective, const AlgorithmTable& table,
                         const ClusterStrategyOptions& options);

  std::string name() const override { return "nearest"; }
  std::vector<ClusterSuggestion> suggest(int max_count) override;
  void observe(int comm_size, const Evaluation& evaluation) override;
  bool done() const override;
  std::string stop_reason() const override;
  int max_evaluations() const override { return budget_; }
  // search_budget() less what the observed runs cost and the suggested ones not yet observed at
  // their sizes' prices.
  double node_seconds_left() const override;
  std::vector<TuningConfig> finalists(int comm_size, int per_size) const override;
  std::vector<ClusterChoice> recommend(const std::vector<int>& comm_sizes,
                                       double min_confidence) const override;
  nlohmann::json state() const override;
  void restore(const nlohmann::json& state) override;
  // The size's price, whatever the configuration (this strategy prices sizes only): the mean
  // node-seconds of the runs observed there that reported their seconds; at a size without
  // such runs, its ClusterSize::run_cost (or its comm size) scaled by what the runs observed
  // elsewhere cost against theirs; before any, the run_cost (or comm size) itself.
  double run_price(int comm_size, const TuningConfig& config) const override;

 private:
  // What one measured size tells at one message size.
  struct SizePick {
    TuningConfig config;  // lowest median (the default when nothing beats it)
    double best_us = 0;
    double default_us = 0;  // NaN when the default was not measured
    double win_probability = 0;
  };
  const SearchSpace& space(int comm_size) const;
  std::optional<SizePick> measured_pick(int comm_size, std::int64_t msg_size) const;
  double relative_noise(int comm_size) const;
  double cost_of(const ClusterSize& size) const;
  int total_observed() const;
  int total_suggested() const;
  double node_seconds() const;
  // budget_node_seconds less the reserve (ClusterStrategyOptions::reserve) of this strategy.
  double search_budget() const;
  std::optional<TuningConfig> next_config(const ClusterSize& size);

  Collective collective_;
  const AlgorithmTable& table_;
  ClusterStrategyOptions options_;
  int budget_ = 0;
  double noise_floor_ = 0.03;
  mutable std::map<int, SearchSpace> spaces_;
  // search_budget()'s reserve, with the observations it was priced at (reset by restore).
  mutable std::optional<std::pair<int, double>> reserve_;
  // comm size -> config -> message size -> latencies (µs)
  std::map<int, std::map<TuningConfig, std::map<std::int64_t, std::vector<double>>>> observed_;
  std::map<int, std::set<TuningConfig>> failed_;
  std::map<int, std::set<TuningConfig>> suggested_;  // pending or observed, per size
  std::map<int, int> evaluations_;                   // observe() calls per size
  // Per size: the observed runs that reported their seconds, and their node-seconds.
  std::map<int, TimedRuns> timed_;
};

}  // namespace colltune
