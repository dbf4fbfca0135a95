// A search strategy for one tuning context (collective, comm size): it proposes which
// configurations to benchmark next, learns from what the benchmarks measured, and finally
// names the best configuration per message size. Pure code: no I/O, deterministic for a seed.
//
// One evaluation = one OSU run of one configuration, which measures every message size at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/tuning_config.h"
#include "optimizer/benchmark_cost.h"
#include "optimizer/search_space.h"

namespace colltune {

// What one OSU run of one configuration measured: latency (µs) per message size.
// A size missing from `latency_us` was not measured (run failed or truncated).
struct Evaluation {
  TuningConfig config;
  std::vector<std::int64_t> msg_sizes;
  std::vector<double> latency_us;  // same length as msg_sizes
  bool failed = false;             // the run failed; the configuration should not be retried
  // What the run cost: its benchmark seconds as the backend observed them (local / Slurm: the
  // wall time of the benchmark process; sim / replay: the modelled time of the OSU run), not
  // multiplied by nodes. 0 = unknown (older stores, hand-made evaluations).
  double seconds = 0;
};

// JSON of an Evaluation, as the strategies keep it in their state: {config, msg_sizes,
// latency_us (null = not measured), failed, seconds}. from_json accepts states written before
// `failed` or `seconds` existed (false / 0) and throws std::invalid_argument when msg_sizes and
// latency_us differ in length.
void to_json(nlohmann::json& j, const Evaluation& e);
void from_json(const nlohmann::json& j, Evaluation& e);

// The pick for one message size.
struct Choice {
  std::int64_t msg_size = 0;
  TuningConfig config;
  double latency_us = 0;  // the strategy's estimate (median of observations)
  double default_us = 0;  // Open MPI default's estimate; NaN when never measured
  // How uncertain log(default_us / latency_us) is (its standard deviation under the
  // strategy's model); 0 = as good as known (measured, or a strategy without a model).
  double gain_sd = 0;
};

// How configurations compare with the default at every message size under a strategy's model:
// per configuration, one Choice per message size with `config` set to it, whatever the model
// ranks first there (Strategy::versus_default).
using VersusDefault = std::map<TuningConfig, std::vector<Choice>>;

struct StrategyOptions {
  std::uint64_t seed = 1;
  int budget = 0;                       // maximum evaluations (0 = strategy's own default)
  std::vector<std::int64_t> msg_sizes;  // sizes being tuned (OSU sizes)
  // Stop once the benchmark time of the observed runs reaches this (0 = no limit); runs are
  // priced with `cost`.
  double budget_seconds = 0;
  BenchmarkCost cost;
  // Stop rule of the Bayesian strategies: "" (strategy default), "ei" (colltune: expected
  // improvement below noise at every size), "thesis" (at most 150 evaluations, stop when the
  // best improved < 1 % over the last 15), "budget" (only the budgets stop).
  std::string stop_rule;
  // Strategy-specific settings (see each strategy's header); unknown keys are rejected.
  nlohmann::json settings = nlohmann::json::object();
  // Warm start (re-tuning after a small change): configurations that were best in an earlier
  // campaign of the same context, evaluated first (after the default), and that campaign's
  // final optimizer state, used as a prior where a strategy can (bo: its GP hyper-parameters).
  // Empty / null = cold start.
  std::vector<TuningConfig> warm_start_points;
  nlohmann::json warm_start_state = nullptr;
};

class Strategy {
 public:
  virtual ~Strategy() = default;

  virtual std::string name() const = 0;

  // Up to `max_count` configurations to evaluate next, all from the search space. An empty
  // result means the strategy has nothing more to ask (see done()).
  virtual std::vector<TuningConfig> suggest(int max_count) = 0;

  // Records one evaluation (in any order, possibly of a configuration suggested long ago).
  virtual void observe(const Evaluation& evaluation) = 0;

  // True when the search is finished (budget spent or stop rule met).
  virtual bool done() const = 0;

  // Evaluations the search will make at most (for progress display); -1 when unknown.
  virtual int planned_evaluations() const { return -1; }

  // Evaluations observed so far (a context's result reports it). Default: the count every
  // strategy's state keeps under "observations" (optimizer/observations.h).
  virtual int evaluations() const {
    const nlohmann::json s = state();
    return s.value("observations", nlohmann::json::object()).value("evaluations", 0);
  }

  // Why the search stopped ("budget", "space exhausted", ...); empty while it runs or when the
  // strategy does not say.
  virtual std::string stop_reason() const { return {}; }

  // Runs the search used as data without making them: a warm start's earlier runs (bo: those
  // of the configurations not measured again, StrategyOptions::warm_start_state). The search
  // knew them, so the engine's paired final phase counts them with the search's own runs in
  // its cap ("never more runs than the search made", docs/final-choice.md). 0 by default.
  virtual int reused_runs() const { return 0; }

  // Candidates worth re-measuring before the final choice, per message size (best first).
  virtual std::vector<TuningConfig> finalists(int per_size) const = 0;

  // Best configuration per message size from everything observed so far.
  virtual std::vector<Choice> recommend() const = 0;

  // How each of `configs` compares with the default under the strategy's model, as recommend()
  // reports a pick (its estimate, the default's, gain_sd); configurations the model cannot
  // place are left out. Empty by default (no model to ask).
  virtual VersusDefault versus_default(const std::set<TuningConfig>& configs) const {
    (void)configs;
    return {};
  }

  // Serialisable state; restore(state()) gives a strategy that behaves identically.
  virtual nlohmann::json state() const = 0;
  virtual void restore(const nlohmann::json& state) = 0;

  // The message sizes a pending suggestion is needed for; empty = all sizes (the default).
  // Only per-size strategies (one search per size, as in the thesis) narrow this, so that a
  // runner can measure just those sizes (`osu_* -m lo:hi`).
  virtual std::vector<std::int64_t> msg_sizes_wanted(const TuningConfig& config) const {
    (void)config;
    return {};
  }
};

// The initial design (Latin hypercube start) recorded in a strategy's serialised state, for
// displays that tell design runs from acquisition runs (the API's convergence view); nullopt
// when the state names a strategy without one (random, exhaustive, bo-per-size's per-size
// designs) or is not a strategy state. Each strategy reads its own format.
std::optional<std::vector<TuningConfig>> initial_design_of(const nlohmann::json& state);

// restore()'s first check, shared by the single-context strategies: throws
// std::invalid_argument unless `state` was made by the strategy named `name` with `seed` (a
// state of another strategy, or of the same one with another seed, would not resume the same
// search).
void check_state_is_for(const nlohmann::json& state, const std::string& name, std::uint64_t seed);

// Names accepted by make_strategy: "bo", "bo-per-size", "random", "exhaustive".
std::vector<std::string> strategy_names();

// Throws std::invalid_argument for an unknown name.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const SearchSpace& space,
                                        const StrategyOptions& options);

}  // namespace colltune
