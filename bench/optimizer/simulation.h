// Runs one strategy on one recorded landscape the way the campaign engine would: batches of
// suggestions, each run drawn from the landscape's repeats, then a final re-measurement of the
// strategy's finalists, then its recommendation; scored against the landscape's truth.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench/optimizer/landscape.h"
#include "optimizer/paired_final.h"
#include "optimizer/search_space.h"
#include "optimizer/strategy.h"

namespace colltune::bench {

struct SimulationOptions {
  std::string strategy;
  std::uint64_t seed = 1;
  int budget = 0;  // evaluations for the search (0 = strategy default)
  double budget_seconds = 0;
  int batch = 4;          // suggestions per job
  int finalists = 2;      // per size, re-measured after the search (0 = none)
  int final_repeats = 3;  // runs per finalist (and of the default, always re-measured)
  // "paired": the campaign engine's final phase (its default): one nominee per size among the
  // `finalists`, tested against the default in paired rounds (draw_paired_final below);
  // "engine": the median method's final phase (finalists and the default, final_repeats runs
  // each, lowest median within noise); "strategy": the strategy's recommend() over everything
  // it observed, no final phase.
  std::string final_pick = "engine";
  std::string stop_rule;
  nlohmann::json settings = nlohmann::json::object();
  BenchmarkCost cost;
};

struct SimulationResult {
  int runs = 0, search_runs = 0, final_runs = 0, jobs = 0;
  double benchmark_seconds = 0;
  double search_seconds = 0;  // of benchmark_seconds, the search's (the rest: the final phase)
  // The paired final phase (final_pick "paired"): its looks, distinct nominees, the message
  // sizes with a nominee and those where it was proven faster.
  int final_looks = 0, final_nominees = 0, nominated_sizes = 0, proven_sizes = 0;
  double regret_mean = 0, regret_median = 0, regret_max = 0;
  std::optional<int> runs_to_target;
  double decision_ms = 0, decision_ms_max = 0;
  std::size_t space_size = 0;
  std::vector<Choice> choices;
  std::vector<double> regrets;  // per landscape size, same order as msg_sizes
  // Per landscape size: whether the search ran the size's optimal configuration (the lowest
  // truth) at least once. A strategy cannot pick what it never measured.
  std::vector<bool> optimum_searched;
  // "bo" only: why it stopped, its hyper-parameters, its noise sd (log units) at the
  // smallest, middle and largest size.
  std::string stop_reason;
  std::vector<double> hyperparameters, noise_sd;
};

SimulationResult simulate(const Landscape& landscape, const AlgorithmTable& table,
                          const SimulationOptions& options);

// The paired final phase of one context drawn from its landscape, as the campaign engine runs
// it on a backend (campaign_engine.cpp; the plan is optimizer/paired_final.h, the test
// optimizer/paired_test.h): the nominees of `picks` among `finalists` (search latencies
// `search`), each re-measured against the default in rounds, look after look while open,
// within final_run_cap(search_runs, final_repeats, nominees) runs, each over the look's message
// sizes only (look_size_span). The written choice per
// message size is the nominee when proven faster, else the default.
struct PairedFinalState;
struct PairedFinalOptions {
  int final_repeats = 3;  // the engine's spec default
  double min_gain = 0;    // the engine's spec default
  BenchmarkCost cost;
  // A budget for the whole campaign (the engine's cluster.total_node_seconds, the same rules:
  // plan_first_looks, affordable_nominees): the node-seconds not spent when this size's phase
  // starts (unset = no budget), the nodes a run here holds, what one run here is expected to
  // cost (FinalLookBudget::run_price), the node-seconds of the planned first looks of the sizes
  // whose phase comes after, and the nominees this size's planned first look tests.
  std::optional<double> unspent_node_seconds;
  double nodes = 1;
  SpanPrice run_price;
  double reserved_after = 0;
  std::set<TuningConfig> planned;
  // A leftover look after every size's phase (the engine's leftover_look_budget,
  // optimizer/paired_final.h): `planned` holds every nominee, nothing is held back for other
  // sizes, and the nominees no look tested get a first look past the size's looks and cap.
  bool leftover = false;
  // Where the phase's pairs are kept between calls (null = not kept): a call with a state that
  // holds a size's earlier phase goes on from it, as the engine's final phase goes on from the
  // runs it stored.
  PairedFinalState* state = nullptr;
  // The strategy's comparisons of the finalists with the default (final_nominees' `model`;
  // empty = none, as for a strategy without a model).
  VersusDefault model;
  // The phases of the neighbouring comm sizes of a whole-cluster campaign (borrowed for the
  // call): their pairs of the same candidate lend their variance to this size's intervals, as
  // the engine's (paired_intervals' `lent`). Their landscapes must have this one's message sizes.
  std::vector<const PairedFinalState*> lent;
};
struct PairedFinalDraw {
  std::vector<Choice> choices;  // one per landscape message size
  int runs = 0, looks = 0;
  double benchmark_seconds = 0;
  int nominated_sizes = 0, proven_sizes = 0;
  int nominees = 0;        // distinct nominated configurations
  int untested_sizes = 0;  // nominated sizes whose nominee the budget could not pay to test
};
// A size's final phase so far: what it drew and its pairs.
struct PairedFinalState {
  bool started = false;
  PairedFinalDraw drawn;
  std::map<TuningConfig, std::vector<std::vector<double>>> log_ratios;
  std::map<TuningConfig, std::vector<PairedInterval>> intervals;
};
PairedFinalDraw draw_paired_final(const Landscape& landscape, const SearchSpace& space,
                                  const std::vector<Choice>& picks,
                                  const std::vector<TuningConfig>& finalists,
                                  const SearchLatencies& search, int search_runs,
                                  const PairedFinalOptions& options, Rng& draws);

// The rules stage's re-measure of the file written at one comm size (campaign/rules_stage.cpp,
// docs/final-choice.md section 4), drawn from the landscape: `rounds` pairs of a "file" run
// (each message size runs its choice; the default where the choice is the default or the
// landscape has no point for it) and a "no file" run (the default), every message size tested
// with paired_intervals as the stage tests them (min_gain 0, 2 planned looks; the second look,
// of `rounds` more pairs, only where a changed size measured slower without proof either way).
// Every changed size proven slower goes back to the default. One re-measuring pass: the stage's
// pass over the rewritten file is not drawn.
struct RemeasureDraw {
  std::vector<Choice> choices;  // the input with the sizes proven slower at the default
  int runs = 0, looks = 0, reverted = 0;
  double benchmark_seconds = 0;
};
RemeasureDraw draw_remeasure(const Landscape& landscape, const SearchSpace& space,
                             std::vector<Choice> choices, int rounds, const BenchmarkCost& cost,
                             Rng& draws);

// What a perfect model would nominate to a size's final phase (colltune-bench-cluster
// --oracle-nominees, an experiment: the regret the final phase leaves when the nomination is
// not the cause): `picks` with each message size's configuration replaced by the landscape's
// optimal one there (Landscape::optimal_config), its truth as the estimate, the default's truth
// beside it, and no uncertainty. A size the landscape does not hold keeps its pick.
std::vector<Choice> oracle_choices(const Landscape& landscape, std::vector<Choice> picks);

// Relative regret of each choice against the landscape optimum (median of repeats); sizes the
// choices miss count as the default decision's regret (or NaN when it is not recorded).
std::vector<double> regrets(const Landscape& landscape, const std::vector<Choice>& choices);

// True when every size's choice is within 1 % of the optimum or within its point's noise.
bool on_target(const Landscape& landscape, const std::vector<Choice>& choices);

nlohmann::json to_json(const Landscape& landscape, const SimulationOptions& options,
                       const SimulationResult& result);

}  // namespace colltune::bench
