// colltune-bench-aa: how often the paired test (optimizer/paired_test.h) calls two runs of the
// *same* code different. Input: a JSON array of OSU runs made back to back with one command
// line (bench/never-slower/aa_runs.py), each {"<message size>": avg_us, ...}. The runs are cut
// into tests of N pairs, paired as a final-phase look pairs them (A B / B A rounds); each test
// gets the engine's intervals (one look, alpha 0.05, pooled over 2 neighbouring sizes on each
// side), and every size whose interval excludes 1 is a false verdict ("faster" or "slower").
// The test promises at most alpha per size; the rate over sizes is printed with the share of
// tests in which any size was called different (sizes of one run are correlated, so that share
// is not alpha x sizes).
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
  double alpha = 0.05;
  app.add_option("runs", input, "JSON array of runs, each {\"<msg size>\": avg_us}")->required();
  app.add_option("--pairs", pair_counts, "pairs per test (one or more)");
  app.add_option("--alpha", alpha, "the test's alpha (one look)");
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
    std::printf(
        "| pairs per test | tests | sizes tested | called different | rate (alpha %.2f) | of "
        "which \"faster\" (promised <= %.2f) | tests with any size called different |\n"
        "|---|---|---|---|---|---|---|\n",
        alpha, alpha);
    for (const int n : pair_counts) {
      int tests = 0, tested = 0, different = 0, faster = 0, any = 0;
      for (std::size_t start = 0; start + 2 * n <= runs.size(); start += 2 * n) {
        // Round r: runs 2r and 2r+1, in the order A B then B A (the candidate is the second
        // run of an even round and the first of an odd one).
        std::vector<std::vector<double>> log_ratios(sizes.size());
        for (int r = 0; r < n; ++r) {
          const auto& first = runs[start + 2 * r];
          const auto& second = runs[start + 2 * r + 1];
          const auto& candidate = r % 2 == 0 ? second : first;
          const auto& fixed = r % 2 == 0 ? first : second;
          for (std::size_t k = 0; k < sizes.size(); ++k) {
            const auto c = candidate.find(sizes[k]), f = fixed.find(sizes[k]);
            if (c != candidate.end() && f != fixed.end() && c->second > 0 && f->second > 0)
              log_ratios[k].push_back(std::log(c->second / f->second));
          }
        }
        const auto intervals = colltune::paired_intervals(log_ratios, 0, options);
        bool some = false;
        for (const auto& iv : intervals) {
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
