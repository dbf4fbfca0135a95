// Runs one strategy on one recorded landscape the way the campaign engine would: batches of
// suggestions, each run drawn from the landscape's repeats, then a final re-measurement of the
// strategy's finalists, then its recommendation; scored against the landscape's truth.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/optimizer/landscape.h"
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
  // "engine": pick per size from the final runs only, as the campaign engine does;
  // "strategy": the strategy's recommend() over everything it observed.
  std::string final_pick = "engine";
  std::string stop_rule;
  nlohmann::json settings = nlohmann::json::object();
  BenchmarkCost cost;
};

struct SimulationResult {
  int runs = 0, search_runs = 0, final_runs = 0, jobs = 0;
  double benchmark_seconds = 0;
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

// Relative regret of each choice against the landscape optimum (median of repeats); sizes the
// choices miss count as the default decision's regret (or NaN when it is not recorded).
std::vector<double> regrets(const Landscape& landscape, const std::vector<Choice>& choices);

// True when every size's choice is within 1 % of the optimum or within its point's noise.
bool on_target(const Landscape& landscape, const std::vector<Choice>& choices);

nlohmann::json to_json(const Landscape& landscape, const SimulationOptions& options,
                       const SimulationResult& result);

}  // namespace colltune::bench
