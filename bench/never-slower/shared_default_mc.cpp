// colltune-bench-shared-default: a Monte Carlo of the paired test at one look when several
// nominees share each round's default run (bench/README.md, "Pooling the variance over a look's
// nominees, measured and not kept"). Every nominee of a look is paired with the same default
// run of each round, so their log-ratios share that run's noise. Four tests of nominee 0 at the
// middle of 5 sizes (alpha 0.05 over 3 planned looks, docs/final-choice.md):
// - per candidate: the engine's `paired_intervals` on the nominee's own pairs (what ships);
// - pooled as independent: the variance pooled over the nominees' pairs as well, with their
//   degrees of freedom summed as if the pairs were independent;
// - split: the rounds x nominees table at each size split into round effects (the default's
//   noise, seen by every nominee; R - 1 df) and a residual (the nominees' own noise;
//   (R - 1)(K - 1) df); var(d) = MS_round / K + (1 - 1/K) MS_residual, pooled over the window,
//   Satterthwaite's degrees of freedom. Valid when the nominees' own noise is alike;
// - split, guarded: per candidate where the nominee's own variance over the window exceeds the
//   split's, else split.
// All but the first also take the size's own variance where larger, as the engine does. A round
// draws one default value and one value per nominee at each size (normal in log units,
// optionally with the sim's outliers: U(1.3, 2.5) times, at 2 % of values). With every nominee
// as fast as the default, each "faster" of nominee 0 is false: the promise per look is
// alpha / looks / 2 (0.0083). With nominee 0 10 % faster, the rate is the test's power.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "optimizer/paired_test.h"

namespace {

constexpr int kSizes = 5;
constexpr double kAlphaLook = 0.05 / 3;

struct Case {
  double sd_default, sd_nominee, sd_tested;  // log units; sd_tested: nominee 0's own
  int nominees, rounds;
  double outlier_rate;
};

constexpr int kTests = 4;
const char* const kTestNames[kTests] = {"per candidate", "pooled as independent", "split",
                                        "split, guarded"};

double sum_sq_dev(const std::vector<double>& v) {
  double m = 0, s = 0;
  for (double x : v) m += x / static_cast<double>(v.size());
  for (double x : v) s += (x - m) * (x - m);
  return s;
}

// d[s][r][k]: log(nominee k / default) at size s in round r. Which tests call nominee 0 faster
// at the middle size.
std::vector<bool> faster(const std::vector<std::vector<std::vector<double>>>& d) {
  const int rounds = static_cast<int>(d[0].size()), nominees = static_cast<int>(d[0][0].size());
  const double n = rounds, k = nominees;
  std::vector<std::vector<double>> own(kSizes);  // nominee 0's pairs per size
  double naive_ss = 0, naive_df = 0, ss_round = 0, ss_residual = 0, own_ss = 0;
  for (int s = 0; s < kSizes; ++s) {
    std::vector<double> row_mean(static_cast<std::size_t>(rounds), 0),
        column_mean(static_cast<std::size_t>(nominees), 0);
    double grand = 0;
    for (int r = 0; r < rounds; ++r)
      for (int c = 0; c < nominees; ++c) {
        const double x = d[s][r][c];
        row_mean[r] += x / k, column_mean[c] += x / n, grand += x / (n * k);
      }
    for (int c = 0; c < nominees; ++c) {
      std::vector<double> column;
      for (int r = 0; r < rounds; ++r) column.push_back(d[s][r][c]);
      naive_ss += sum_sq_dev(column), naive_df += n - 1;
      if (c == 0) own[s] = column, own_ss += sum_sq_dev(column);
    }
    for (int r = 0; r < rounds; ++r) {
      ss_round += k * (row_mean[r] - grand) * (row_mean[r] - grand);
      for (int c = 0; c < nominees; ++c) {
        const double e = d[s][r][c] - row_mean[r] - column_mean[c] + grand;
        ss_residual += e * e;
      }
    }
  }
  const double df_round = kSizes * (n - 1), df_residual = kSizes * (n - 1) * (k - 1);
  const double a_round = ss_round / df_round / k;
  const double a_residual = df_residual > 0 ? (1 - 1 / k) * ss_residual / df_residual : 0;
  const double split = a_round + a_residual;
  double denominator = a_round * a_round / df_round;
  if (df_residual > 0) denominator += a_residual * a_residual / df_residual;
  const double split_df = denominator > 0
                              ? std::clamp(split * split / denominator, 1.0, df_round + df_residual)
                              : df_round + df_residual;
  const std::vector<double>& mine = own[kSizes / 2];
  const double m = std::accumulate(mine.begin(), mine.end(), 0.0) / n;
  const double own_var = sum_sq_dev(mine) / (n - 1);
  const double own_window = own_ss / df_round;
  auto proven = [&](double var, double df) {
    return m + colltune::student_t_quantile(1 - kAlphaLook / 2, df) *
                   std::sqrt(std::max(own_var, var) / n) <
           0;
  };
  colltune::PairedTestOptions options;  // alpha 0.05, 3 looks, 2 neighbours each side
  const bool per_candidate = colltune::paired_intervals(own, 0, options)[kSizes / 2].verdict ==
                             colltune::PairedVerdict::faster;
  return {per_candidate, proven(naive_ss / naive_df, naive_df), proven(split, split_df),
          own_window > split ? per_candidate : proven(split, split_df)};
}

std::vector<double> rates(const Case& c, double true_log_ratio, int trials, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  auto noise = [&](double sd) {
    double x = sd * normal(rng);
    if (uniform(rng) < c.outlier_rate) x += std::log(1.3 + 1.2 * uniform(rng));
    return x;
  };
  std::vector<double> hits(kTests, 0);
  std::vector<std::vector<std::vector<double>>> d(
      kSizes, std::vector<std::vector<double>>(static_cast<std::size_t>(c.rounds),
                                               std::vector<double>(c.nominees)));
  for (int t = 0; t < trials; ++t) {
    for (auto& at_size : d)
      for (auto& round : at_size) {
        const double fixed = noise(c.sd_default);
        for (int k = 0; k < c.nominees; ++k)
          round[k] = (k == 0 ? true_log_ratio + noise(c.sd_tested) : noise(c.sd_nominee)) - fixed;
      }
    const std::vector<bool> f = faster(d);
    for (int i = 0; i < kTests; ++i) hits[i] += f[i];
  }
  for (double& h : hits) h /= trials;
  return hits;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Monte Carlo of the paired test with nominees sharing the default's runs"};
  int trials = 20000;
  std::uint64_t seed = 1;
  app.add_option("--trials", trials, "trials per case")->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "random seed");
  CLI11_PARSE(app, argc, argv);
  std::mt19937_64 rng(seed);
  std::printf("promised per look: %.4f; %d trials per case (standard error about %.4f)\n\n",
              kAlphaLook / 2, trials, std::sqrt(0.0083 * (1 - 0.0083) / trials));
  std::printf(
      "| default's sd | nominees' sd | tested nominee's sd | outliers | nominees | rounds ");
  for (const char* name : kTestNames) std::printf("| false \"faster\", %s ", name);
  for (const char* name : kTestNames) std::printf("| power at 10 %%, %s ", name);
  std::printf("|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const std::vector<Case> cases = {
      // Alike noise.
      {0.05, 0.05, 0.05, 3, 2, 0},
      {0.05, 0.05, 0.05, 9, 2, 0},
      {0.05, 0.05, 0.05, 9, 4, 0},
      // The default's noise dominates.
      {0.08, 0.03, 0.03, 3, 2, 0},
      {0.08, 0.03, 0.03, 9, 2, 0},
      // The tested nominee is noisier than the others (its own sd 1.5x and 2.7x theirs).
      {0.03, 0.03, 0.045, 9, 2, 0},
      {0.03, 0.03, 0.08, 9, 2, 0},
      {0.03, 0.03, 0.08, 3, 4, 0},
      // The sim's outliers.
      {0.08, 0.08, 0.08, 9, 2, 0.02},
      {0.08, 0.08, 0.08, 3, 4, 0.02},
  };
  for (const Case& c : cases) {
    const std::vector<double> null = rates(c, 0.0, trials, rng);
    const std::vector<double> gain = rates(c, std::log(0.9), trials, rng);
    std::printf("| %.3g | %.3g | %.3g | %s | %d | %d ", c.sd_default, c.sd_nominee, c.sd_tested,
                c.outlier_rate > 0 ? "2 %" : "none", c.nominees, c.rounds);
    for (double x : null) std::printf("| %.4f ", x);
    for (double x : gain) std::printf("| %.3f ", x);
    std::printf("|\n");
    std::fflush(stdout);
  }
  return 0;
}
