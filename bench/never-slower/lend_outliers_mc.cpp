// colltune-bench-lend-outliers: a Monte Carlo of the paired test's pooled variance with and
// without the outlier test that keeps a neighbouring size's outlying pair out of the pool
// (optimizer/paired_test.h, pooled_variance; docs/final-choice.md, section 2). One candidate,
// 5 sizes, the middle one tested, one look of the engine's test (alpha 0.05 over 3 planned
// looks). Each pair is one candidate value and one default value at every size, log-normal
// with the case's sd, and each value is, at the case's rate, an outlier: U(1.3, 3.0) times
// (the simulated clusters' range). With the candidate as fast as the default, every "faster"
// is false: the promise is alpha / looks / 2 (0.0083) per size. With it 10 % faster at every
// size, the rate of "faster" is the test's power.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "optimizer/paired_test.h"

namespace {

constexpr int kSizes = 5;

struct Case {
  double sd;         // log units, every size but the middle
  double middle_sd;  // the tested size's
  double outlier_rate;
  int pairs;
};

// Rates of "faster" at the middle size: {every pair lent, outliers set aside}.
std::pair<double, double> rates(const Case& c, double true_log_ratio, int trials,
                                std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  auto value = [&](double sd) {
    double x = sd * normal(rng);
    if (uniform(rng) < c.outlier_rate) x += std::log(1.3 + 1.7 * uniform(rng));
    return x;
  };
  colltune::PairedTestOptions lent, robust;
  lent.lend_alpha = 0;
  double hits_lent = 0, hits_robust = 0;
  std::vector<std::vector<double>> d(kSizes, std::vector<double>(c.pairs));
  for (int t = 0; t < trials; ++t) {
    for (int s = 0; s < kSizes; ++s) {
      const double sd = s == kSizes / 2 ? c.middle_sd : c.sd;
      for (double& x : d[s]) x = true_log_ratio + value(sd) - value(sd);
    }
    hits_lent += colltune::paired_intervals(d, 0, lent)[kSizes / 2].verdict ==
                 colltune::PairedVerdict::faster;
    hits_robust += colltune::paired_intervals(d, 0, robust)[kSizes / 2].verdict ==
                   colltune::PairedVerdict::faster;
  }
  return {hits_lent / trials, hits_robust / trials};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Monte Carlo of the paired test's pooled variance with neighbours' outliers"};
  int trials = 20000;
  std::uint64_t seed = 1;
  app.add_option("--trials", trials, "trials per case")->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "random seed");
  CLI11_PARSE(app, argc, argv);
  std::mt19937_64 rng(seed);
  std::printf("promised per look: %.4f; %d trials per case\n\n", 0.05 / 3 / 2, trials);
  std::printf(
      "| sd per value | tested size's sd | outliers | pairs | false \"faster\", every pair lent "
      "| false \"faster\", outliers set aside | power at 10 %%, every pair lent "
      "| power at 10 %%, outliers set aside |\n|---|---|---|---|---|---|---|---|\n");
  std::vector<Case> cases;
  for (const double rate : {0.0, 0.02, 0.05})
    for (const int pairs : {2, 4, 6}) cases.push_back({0.05, 0.05, rate, pairs});
  for (const int pairs : {2, 4, 6}) cases.push_back({0.03, 0.03, 0.02, pairs});
  // The tested size noisier than its neighbours (its own variance must still decide).
  for (const double rate : {0.0, 0.05})
    for (const int pairs : {2, 4}) cases.push_back({0.03, 0.08, rate, pairs});
  for (const Case& c : cases) {
    const auto [null_lent, null_robust] = rates(c, 0.0, trials, rng);
    const auto [gain_lent, gain_robust] = rates(c, std::log(0.9), trials, rng);
    std::printf("| %.3g | %.3g | %.0f %% | %d | %.4f | %.4f | %.3f | %.3f |\n", c.sd, c.middle_sd,
                100 * c.outlier_rate, c.pairs, null_lent, null_robust, gain_lent, gain_robust);
    std::fflush(stdout);
  }
  return 0;
}
