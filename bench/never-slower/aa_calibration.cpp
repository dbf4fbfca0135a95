// colltune-bench-aa: how often the paired test (optimizer/paired_test.h) calls two runs of the
// *same* code different. Input: a JSON array of OSU runs made back to back with one command
// line (bench/never-slower/aa_runs.py), each {"<message size>": avg_us, ...}. The runs are cut
// into tests of N rounds, ordered as a final-phase look orders them: D C1 .. Ck, then Ck .. C1 D
// (`--nominees` k candidates, all the same code as the default D, each paired with the round's
// one default run). Every nominee gets the engine's intervals (`paired_intervals`: one look,
// alpha 0.05, pooled over 2 neighbouring sizes on each side, a neighbour's outliers not lent
// unless `--lend-alpha 0`), and every size of every nominee whose interval excludes 1 is a false
// verdict ("faster" or "slower"). The test promises at
// most alpha per size and nominee; the rate is printed with the share of tests in which any was
// called different (sizes of one run, and nominees of one round, are correlated, so that share
// is not alpha x sizes x nominees).
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "optimizer/paired_test.h"

int main(int argc, char** argv) {
  CLI::App app{"A/A calibration of the paired test on runs of one command"};
  std::string input;
  std::vector<int> pair_counts = {2, 3, 4};
  int nominees = 1;
  double alpha = 0.05;
  app.add_option("runs", input, "JSON array of runs, each {\"<msg size>\": avg_us}")->required();
  app.add_option("--pairs", pair_counts, "pairs (rounds) per test (one or more)");
  app.add_option("--nominees", nominees, "candidates per round, all sharing its default run")
      ->check(CLI::PositiveNumber);
  app.add_option("--alpha", alpha, "the test's alpha (one look)");
  double lend_alpha = colltune::PairedTestOptions{}.lend_alpha;
  app.add_option("--lend-alpha", lend_alpha,
                 "level of the outlier test before pooling (0 = every pair lent)");
  CLI11_PARSE(app, argc, argv);
  try {
    std::ifstream in(input);
    if (!in) throw std::runtime_error("cannot open " + input);
    const nlohmann::json j = nlohmann::json::parse(in);
    std::vector<std::map<std::int64_t, double>> runs;
    for (const auto& run : j) {
      std::map<std::int64_t, double> rows;
      for (const auto& [size, us] : run.items()) rows[std::stoll(size)] = us.get<double>();
      runs.push_back(std::move(rows));
    }
    if (runs.empty()) throw std::runtime_error(input + ": no runs");
    std::vector<std::int64_t> sizes;
    for (const auto& [size, us] : runs.front()) sizes.push_back(size);
    colltune::PairedTestOptions options;
    options.alpha = alpha;
    options.looks = 1;
    options.lend_alpha = lend_alpha;
    std::printf(
        "| pairs per test | tests | sizes x nominees tested | called different "
        "| rate (alpha %.2f) | of which \"faster\" (promised <= %.2f) "
        "| tests with any size called different |\n"
        "|---|---|---|---|---|---|---|\n",
        alpha, alpha);
    for (const int n : pair_counts) {
      int tests = 0, tested = 0, different = 0, faster = 0, any = 0;
      const std::size_t per_round = static_cast<std::size_t>(nominees) + 1;
      const std::size_t per_test = static_cast<std::size_t>(n) * per_round;
      for (std::size_t start = 0; start + per_test <= runs.size(); start += per_test) {
        // Round r: runs r x (k + 1) .. r x (k + 1) + k, the default first in an even round and
        // last in an odd one (A B / B A). Per nominee, per size: log(nominee / default) of
        // every round.
        std::vector<std::vector<std::vector<double>>> log_ratios(
            static_cast<std::size_t>(nominees), std::vector<std::vector<double>>(sizes.size()));
        for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
          auto run = [&](std::size_t i) -> const std::map<std::int64_t, double>& {
            return runs[start + r * per_round + (r % 2 == 0 ? i : per_round - 1 - i)];
          };
          const auto& fixed = run(0);
          for (std::size_t c = 0; c < log_ratios.size(); ++c) {
            const auto& candidate = run(c + 1);
            for (std::size_t k = 0; k < sizes.size(); ++k) {
              const auto cs = candidate.find(sizes[k]), fs = fixed.find(sizes[k]);
              if (cs != candidate.end() && fs != fixed.end() && cs->second > 0 && fs->second > 0)
                log_ratios[c][k].push_back(std::log(cs->second / fs->second));
            }
          }
        }
        bool some = false;
        for (const auto& by_size : log_ratios)
          for (const auto& iv : colltune::paired_intervals(by_size, 0, options)) {
            if (iv.pairs < 2) continue;
            ++tested;
            if (iv.verdict != colltune::PairedVerdict::open) ++different, some = true;
            if (iv.verdict == colltune::PairedVerdict::faster) ++faster;
          }
        ++tests;
        any += some;
      }
      const double per = tested ? 1.0 / tested : 0.0;
      std::printf("| %d | %d | %d | %d | %.3f | %.3f | %d of %d |\n", n, tests, tested, different,
                  different * per, faster * per, any, tests);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "colltune-bench-aa: %s\n", e.what());
    return 2;
  }
}
