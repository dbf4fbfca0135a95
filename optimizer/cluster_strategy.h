// Whole-cluster search (issue #15): one search over a collective at several communicator sizes
// at once. One surrogate covers (configuration x message size x communicator size), so that a
// run at one size informs its neighbours; the strategy chooses both the configuration and the
// communicator size of each run, weighing what a run teaches against what it costs (a run at
// P=512 costs far more node-seconds than one at P=16), and it predicts the best configuration at
// communicator sizes it never ran, with a confidence.
//
// Pure code like Strategy (strategy.h): no I/O, deterministic for a seed, state() / restore().
// The engine owns the runs: it asks suggest(), runs each suggestion at its comm size, and hands
// every evaluation back with observe().
//
// This header is the contract between the optimizer and the campaign plumbing; implementations
// live in optimizer/cluster_*.{h,cpp}.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/algorithm_table.h"
#include "core/collective.h"
#include "core/tuning_config.h"
#include "optimizer/strategy.h"

namespace colltune {

// A communicator size the campaign may run, with its layout and price.
struct ClusterSize {
  int comm_size = 0;
  int nodes = 1;
  int ppn = 0;  // ranks per node; 0 = comm_size / nodes
  // Expected node-seconds of one run at this size (benchmark seconds x nodes); the strategy
  // compares these, so only their ratios matter. 0 = let the strategy estimate from comm_size.
  double run_cost = 0;
};

struct ClusterStrategyOptions {
  std::uint64_t seed = 1;
  std::vector<std::int64_t> msg_sizes;  // OSU message sizes tuned (same at every comm size)
  std::vector<ClusterSize> sizes;       // sizes the campaign may run, ascending comm_size
  // Maximum evaluations over all sizes (0 = strategy default) and maximum node-seconds
  // (0 = no limit). Node-seconds are counted from what was spent: the sum over the observed
  // runs of Evaluation::seconds x the nodes of their size; a run that reports 0 seconds, and a
  // run still pending, counts at the strategy's price for it (see the implementation).
  int budget = 0;
  double budget_node_seconds = 0;
  // What the search holds back from budget_node_seconds for what follows it, given the
  // strategy as it stands: the search stops when spent + pending + reserve reaches the budget.
  // Called with the strategy itself (its picks, finalists and prices, which follow what the runs
  // teach) whenever its observations or its model changed, never during observe(); what it
  // captures must outlive the strategy's search. A budget for a whole campaign holds back the
  // first looks of its final phases this way (first_look_reserve, optimizer/paired_final.h).
  // Empty = nothing held back.
  std::function<double(const class ClusterStrategy&)> reserve;
  // Collective calls one run makes at each message size (warm-up + timed iterations), keyed by
  // message size; when it covers every msg_sizes entry, the strategy prices each candidate
  // (configuration, comm size) from the latencies it predicts for it:
  //   seconds = launch overhead + sum over message sizes of calls x predicted latency,
  // the overhead fitted from the observed runs' seconds, x the nodes of the size. Empty = every
  // run at a size costs ClusterSize::run_cost (or the strategy's estimate), given a unit by what
  // the runs that reported their seconds cost (timed_run_price, optimizer/run_prices.h).
  std::map<std::int64_t, double> calls_per_run;
  // Strategy-specific settings (see the implementation's header); unknown keys are rejected.
  nlohmann::json settings = nlohmann::json::object();
};

struct ClusterSuggestion {
  int comm_size = 0;  // one of options.sizes
  TuningConfig config;
};

// The pick at one (comm size, message size).
struct ClusterChoice {
  int comm_size = 0;
  std::int64_t msg_size = 0;
  TuningConfig config;    // the Open MPI default (algorithm 0) when the model is not confident
  double latency_us = 0;  // estimate for config (observed median when measured, else the model)
  double default_us = 0;  // estimate for the default (NaN when unknown)
  bool measured = false;  // config was observed at this comm size; false = predicted
  // Probability, under the model, that `config` is faster than the default at this point
  // (1 for measured picks that beat the default in the observations).
  double confidence = 0;
  // The standard deviation of log(default / config) behind `confidence` under the model (0
  // where the confidence is 1, or 0.5 for want of a model or because the model's pick is the
  // default; a pick that fell back to the default keeps the rejected pick's, as `confidence`).
  double gain_sd = 0;
};

class ClusterStrategy {
 public:
  virtual ~ClusterStrategy() = default;

  virtual std::string name() const = 0;

  // Up to `max_count` (comm size, configuration) pairs to run next; empty = nothing more to ask.
  virtual std::vector<ClusterSuggestion> suggest(int max_count) = 0;

  // Records one evaluation made at `comm_size` (in any order).
  virtual void observe(int comm_size, const Evaluation& evaluation) = 0;

  // True when the budget is spent or the model's predictions at the sizes it did not run are
  // good enough (stop_reason() says which).
  virtual bool done() const = 0;
  virtual std::string stop_reason() const = 0;

  // Runs used as data at `comm_size` without making them (a warm start's earlier runs), as
  // Strategy::reused_runs() per context; 0 by default.
  virtual int reused_runs(int comm_size) const {
    (void)comm_size;
    return 0;
  }

  // The most runs the search makes over all sizes: its run budget (ClusterStrategyOptions::
  // budget, or the strategy's own cap when that is 0); 0 = no cap in runs.
  virtual int max_evaluations() const { return 0; }

  // The node-seconds one run of `config` at `comm_size` (one of options.sizes) is expected to
  // cost: the price the strategy charges its budget for it, learnt from the runs it observed.
  virtual double run_price(int comm_size, const TuningConfig& config) const = 0;

  // The node-seconds one run of `config` at `comm_size` is expected to cost when it measures
  // only the message sizes from `min_size` to `max_size` (a final phase's look: one launch, the
  // calls at those sizes). A strategy without a price per message size charges the whole run.
  virtual double span_price(int comm_size, const TuningConfig& config, std::int64_t min_size,
                            std::int64_t max_size) const {
    (void)min_size;
    (void)max_size;
    return run_price(comm_size, config);
  }

  // The node-seconds the search may still spend before its node-second budget stops it:
  // budget_node_seconds less what the reserve holds back, less what its observed runs cost and
  // the prices of the runs it suggested that are still pending (<= 0 once spent); +infinity
  // without a node-second budget. A wrapper that sends runs of its own (a warm start's
  // re-measured points) spends from it before it asks the strategy.
  virtual double node_seconds_left() const = 0;
  // Candidates worth re-measuring at a comm size that was run, per message size, best first.
  virtual std::vector<TuningConfig> finalists(int comm_size, int per_size) const = 0;

  // The pick for every message size at each of `comm_sizes` (measured or not, any size >= 2).
  // A predicted pick whose confidence is below `min_confidence` is the default.
  virtual std::vector<ClusterChoice> recommend(const std::vector<int>& comm_sizes,
                                               double min_confidence) const = 0;

  // How each of `configs` compares with the default at `comm_size` under the strategy's model,
  // as recommend() reports a pick there (its estimate, the default's and the gain_sd behind
  // the confidence). Configurations the model cannot place at that size (never run anywhere,
  // or failed there) are left out; empty without a model (the default implementation).
  virtual VersusDefault versus_default(int comm_size, const std::set<TuningConfig>& configs) const {
    (void)comm_size;
    (void)configs;
    return {};
  }

  virtual nlohmann::json state() const = 0;
  virtual void restore(const nlohmann::json& state) = 0;
};

// Names accepted by make_cluster_strategy (e.g. "bo-cluster").
std::vector<std::string> cluster_strategy_names();

// Throws std::invalid_argument for an unknown name or bad options (no sizes, a size < 2).
std::unique_ptr<ClusterStrategy> make_cluster_strategy(const std::string& name,
                                                       Collective collective,
                                                       const AlgorithmTable& table,
                                                       const ClusterStrategyOptions& options);

}  // namespace colltune
