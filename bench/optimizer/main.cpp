// colltune-bench-optimizer: scores search strategies on recorded landscapes without running MPI.
// Prints one JSON object per line per (landscape group, seed); see bench/README.md.
#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "bench/optimizer/landscape.h"
#include "bench/optimizer/sim_landscape.h"
#include "bench/optimizer/simulation.h"
#include "optimizer/search_space.h"

namespace {

using colltune::bench::Landscape;

// Decision time of "bo" for a batch of 4 as the number of evaluated configurations grows:
// feed n configurations (default first, the rest in random order), then time suggest(4)
// twice: the first includes a full multi-start hyper-parameter fit, the second (after
// observing that batch) is the steady-state cost with the fitted hyper-parameters.
void timing_curve(const Landscape& l, const colltune::AlgorithmTable& table,
                  const std::vector<int>& counts, std::uint64_t seed, int batch) {
  using namespace colltune;
  SearchSpace space(l.collective, l.comm_size, table, l.configs());
  for (int n : counts) {
    if (n > static_cast<int>(space.size()) - 2 * batch) break;
    StrategyOptions so;
    so.seed = seed;
    so.msg_sizes = l.msg_sizes;
    so.stop_rule = "budget";
    so.budget = 100000;
    so.settings = {{"initial_points", 1}, {"repeat_default", false}};
    auto s = make_strategy("bo", space, so);
    Rng rng(seed + n);
    auto feed = [&](const TuningConfig& c) {
      Evaluation e;
      e.config = c;
      e.msg_sizes = l.msg_sizes;
      e.latency_us = l.draw(c, l.msg_sizes, rng);
      s->observe(e);
    };
    for (const auto& c : s->suggest(1)) feed(c);  // the design: just the default
    std::vector<TuningConfig> order = space.points();
    rng.shuffle(order);
    int fed = 1;
    for (const auto& c : order) {
      if (fed >= n) break;
      if (c.is_default()) continue;
      feed(c);
      ++fed;
    }
    auto time_batch = [&](std::vector<TuningConfig>* out) {
      auto t0 = std::chrono::steady_clock::now();
      *out = s->suggest(batch);
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
          .count();
    };
    std::vector<TuningConfig> got;
    double first = time_batch(&got);
    for (const auto& c : got) feed(c);
    double steady = time_batch(&got);
    nlohmann::json j = {{"collective", std::string(name(l.collective))},
                        {"comm_size", l.comm_size},
                        {"sizes", l.msg_sizes.size()},
                        {"evaluated", n},
                        {"batch", batch},
                        {"decision_ms_with_full_fit", first},
                        {"decision_ms_steady", steady}};
    std::cout << j.dump() << std::endl;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace colltune;
  CLI::App app{"Score colltune search strategies on recorded latency landscapes (no MPI)."};
  std::string landscape_path, collective_name;
  int comm_size = 0, seeds = 10, seed_base = 1;
  bench::SimulationOptions o;
  std::string settings_text = "{}";
  bool curve = false, holdout = false, separate_default = false;
  std::vector<int> curve_counts = {10, 20, 30, 40, 60, 80, 100, 120};
  auto* landscape_option =
      app.add_option("--landscape", landscape_path, "landscape CSV")->check(CLI::ExistingFile);
  // Or a ground-truth landscape from the simulated cluster (bench/optimizer/sim_landscape.h):
  // every configuration x OSU size, truth = the model's noise-free latency.
  bench::SimLandscapeOptions sim;
  auto* sim_option = app.add_option("--sim", sim.profile,
                                    "simulated cluster profile (name or JSON) instead of a CSV; "
                                    "--comm-size (default: the profile's full size), --collective");
  sim_option->excludes(landscape_option);
  app.add_option("--sim-repeats", sim.repeats, "noisy runs per configuration (--sim)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--sim-seed", sim.seed, "noise seed of the landscape (--sim)");
  app.add_option("--sim-threads", sim.threads, "simulation threads (--sim)")
      ->check(CLI::Range(1, 64));
  app.add_option("--sim-cache", sim.cache_path, "CSV cache of noise-free latencies (--sim)");
  app.add_option("--sim-max-size", sim.max_size, "largest OSU size (--sim; default 1 MiB)");
  app.add_flag("--sim-verbose", sim.verbose, "simulation timing on stderr (--sim)");
  app.add_option("--strategy", o.strategy, "bo, bo-per-size, random, exhaustive");
  app.add_option("--seeds", seeds, "number of seeds (runs per landscape group)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--seed-base", seed_base, "first seed");
  app.add_option("--budget", o.budget, "maximum search evaluations (0 = strategy default)");
  app.add_option("--budget-seconds", o.budget_seconds, "maximum benchmark seconds (0 = none)");
  app.add_option("--collective", collective_name, "only this collective");
  app.add_option("--comm-size", comm_size, "only this communicator size");
  app.add_option("--batch", o.batch, "suggestions per job")->check(CLI::Range(1, 1000));
  app.add_option("--finalists", o.finalists, "finalists per size re-measured after the search");
  app.add_option("--final-repeats", o.final_repeats, "runs per finalist");
  app.add_option("--final-pick", o.final_pick, "engine (final runs only) or strategy (recommend())")
      ->check(CLI::IsMember({"engine", "strategy"}));
  app.add_option("--stop-rule", o.stop_rule, "ei, thesis or budget (default: the strategy's)");
  app.add_option("--settings", settings_text, "strategy settings as a JSON object");
  app.add_option("--launch-overhead", o.cost.launch_overhead_s, "seconds added per run");
  app.add_flag("--holdout-truth", holdout,
               "score against the median of half the repeats, draw runs from the other half");
  app.add_flag("--separate-default", separate_default,
               "score the default apart from the configuration its fixed decision runs at each "
               "size (by default they are one point: landscape.h)");
  app.add_flag("--timing-curve", curve, "print bo's decision time as evaluations grow instead");
  app.add_option("--curve-counts", curve_counts, "evaluated configurations for --timing-curve")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  try {
    o.settings = nlohmann::json::parse(settings_text);
    const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
    std::optional<Collective> only;
    if (!collective_name.empty()) {
      only = parse_collective(collective_name);
      if (!only) throw std::invalid_argument("unknown collective '" + collective_name + "'");
    }
    std::vector<Landscape> landscapes;
    if (*sim_option) {
      if (holdout)
        throw std::invalid_argument(
            "--holdout-truth is for recorded landscapes: with --sim the truth is noise-free");
      if (only) sim.collectives = {*only};
      sim.comm_size = comm_size;
      landscapes = bench::sim_landscapes(sim, table);
      comm_size = landscapes.front().comm_size;
    } else if (*landscape_option) {
      landscapes = bench::load_landscapes(landscape_path, table, holdout, !separate_default);
    } else {
      throw std::invalid_argument("--landscape FILE.csv or --sim PROFILE is required");
    }
    int matched = 0;
    for (const auto& l : landscapes) {
      if (only && l.collective != *only) continue;
      if (comm_size > 0 && l.comm_size != comm_size) continue;
      ++matched;
      if (curve) {
        timing_curve(l, table, curve_counts, static_cast<std::uint64_t>(seed_base), o.batch);
        continue;
      }
      if (o.strategy.empty()) throw std::invalid_argument("--strategy is required");
      for (int k = 0; k < seeds; ++k) {
        bench::SimulationOptions run = o;
        run.seed = static_cast<std::uint64_t>(seed_base + k);
        auto result = bench::simulate(l, table, run);
        std::cout << bench::to_json(l, run, result).dump() << std::endl;
      }
    }
    if (matched == 0) throw std::runtime_error("no landscape group matches the filters");
  } catch (const std::exception& e) {
    std::cerr << "colltune-bench-optimizer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
