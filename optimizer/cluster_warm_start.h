// Warm start of a whole-cluster search (a re-tune of a whole-cluster campaign): the rule of the
// per-context warm start (campaign/retune_warm_start.h, BayesStrategy) applied per comm size,
// around any ClusterStrategy:
// - first the default and the earlier campaign's per-message-size picks at each comm size are
//   re-measured (the old optimum may have moved);
// - then the earlier campaign's search runs at that comm size become data for the
//   configurations not re-measured there, shifted per message size by the mean log change seen
//   on the configurations measured in both (the landscape after a small change is the old one,
//   moved; a message size without a common configuration takes the mean shift of the others,
//   a comm size without any the mean of all), so the model knows the old landscape, runs where
//   it is uncertain, and its stopping rule comes sooner;
// - under a node-second budget the re-measured points are runs like the search's: the first is
//   sent alone (before a run reported its seconds no price has a unit), the others while what
//   is left of the budget (ClusterStrategy::node_seconds_left) pays for them at the inner
//   strategy's prices, which follow what the runs cost; the rest are left out (summary());
// - then the wrapped strategy searches as usual. Picks at measured sizes still come from runs of
//   the new campaign (the engine's final phase re-measures every finalist); the predictions at
//   the sizes not run are recomputed by the model from old (shifted) and new runs.
// Pure code, deterministic, state() / restore() like every ClusterStrategy.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "optimizer/cluster_strategy.h"

namespace colltune {

struct ClusterWarmStart {
  // Per comm size: the configurations re-measured first (the default, the earlier picks).
  std::map<int, std::vector<TuningConfig>> points;
  // Per comm size: the earlier campaign's search runs (data, not re-run).
  std::map<int, std::vector<Evaluation>> prior;

  bool empty() const { return points.empty() && prior.empty(); }
  std::size_t prior_runs() const;
};

class WarmStartedClusterStrategy : public ClusterStrategy {
 public:
  // `inner` must allow for the prior runs it will observe (its evaluation budget raised by
  // warm.prior_runs()); `budget` caps the new evaluations (0 = the inner's limit only).
  WarmStartedClusterStrategy(std::unique_ptr<ClusterStrategy> inner, ClusterWarmStart warm,
                             int budget);

  std::string name() const override { return inner_->name(); }
  std::vector<ClusterSuggestion> suggest(int max_count) override;
  void observe(int comm_size, const Evaluation& evaluation) override;
  bool done() const override;
  std::string stop_reason() const override;
  // The new runs at most: `budget`, else the inner's cap less the prior runs it observes.
  int max_evaluations() const override;
  // The earlier runs handed to the model at `comm_size` (0 before they were).
  int reused_runs(int comm_size) const override;
  std::vector<TuningConfig> finalists(int comm_size, int per_size) const override {
    return inner_->finalists(comm_size, per_size);
  }
  std::vector<ClusterChoice> recommend(const std::vector<int>& comm_sizes,
                                       double min_confidence) const override {
    return inner_->recommend(comm_sizes, min_confidence);
  }
  nlohmann::json state() const override;
  void restore(const nlohmann::json& state) override;
  double run_price(int comm_size, const TuningConfig& config) const override {
    return inner_->run_price(comm_size, config);
  }
  // The inner strategy's, less the prices of the re-measured points still pending.
  double node_seconds_left() const override;
  double span_price(int comm_size, const TuningConfig& config, std::int64_t min_size,
                    std::int64_t max_size) const override {
    return inner_->span_price(comm_size, config, min_size, max_size);
  }

  // What the warm start did so far: {remeasured: [{comm_size, configs}] (the points sent),
  // not_remeasured (the points a node-second budget left out), reused_runs,
  // reused: [{comm_size, runs}], shift: [{comm_size, mean_log_shift}]} (reused and shift once
  // the prior runs were handed to the model).
  nlohmann::json summary() const;

 private:
  void feed_prior();  // hands the shifted prior runs to the inner strategy (once)

  std::unique_ptr<ClusterStrategy> inner_;
  ClusterWarmStart warm_;
  int budget_;
  std::vector<ClusterSuggestion> points_;  // all warm points, ascending comm size
  std::size_t next_point_ = 0;             // points sent
  bool closed_ = false;  // a node-second budget left the points from next_point_ out
  std::multiset<std::pair<int, TuningConfig>> pending_;
  std::vector<std::pair<int, Evaluation>> measured_;  // new evaluations (for the shift)
  int new_evaluations_ = 0;
  bool fed_ = false;
  std::map<int, int> reused_;    // comm size -> prior runs handed to the model
  std::map<int, double> shift_;  // comm size -> mean log shift over its message sizes
};

}  // namespace colltune
