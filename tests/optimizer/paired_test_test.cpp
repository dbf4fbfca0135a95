// The sequential paired test on synthetic paired data whose truth is known: a real 10 % gain is
// accepted, no gain (or noise only) is not, a slower candidate is never chosen, the cap holds.
#include "optimizer/paired_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace colltune {
namespace {

TEST(StudentT, KnownQuantiles) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.995, 5), 4.032, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 100000), 1.960, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.025, 10), -2.228, 1e-3);
  EXPECT_THROW(student_t_quantile(1.0, 3), std::invalid_argument);
}

struct Outcome {
  std::vector<PairedInterval> intervals;
  int runs = 0;
  int looks = 0;
};

// One candidate against the default at `sizes` sizes: the true log-ratio `mu` at every size,
// per-pair noise `sigma` (each run's own log-normal noise; the pair difference has sd
// sigma * sqrt(2)). Runs the sequential procedure to its end.
Outcome simulate(double mu, double sigma, int sizes, const SequentialOptions& options,
                 std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, sigma);
  std::vector<std::vector<double>> d(static_cast<std::size_t>(sizes));
  Outcome out;
  std::vector<bool> open(static_cast<std::size_t>(sizes), true);
  for (;;) {
    bool any_open = false;
    for (bool o : open) any_open = any_open || o;
    if (!any_open) break;
    const int rounds = next_look_rounds(out.looks, out.runs, 2, options);
    if (rounds == 0) break;
    ++out.looks;
    out.runs += 2 * rounds;
    for (int r = 0; r < rounds; ++r)
      for (auto& v : d) v.push_back(mu + noise(rng) - noise(rng));
    out.intervals = paired_intervals(d, options.min_gain, options.test);
    for (std::size_t k = 0; k < open.size(); ++k) {
      const auto& iv = out.intervals[k];
      // Decided: proven faster, or the interval already lies above the threshold.
      open[k] = still_open(iv, options.min_gain);
    }
  }
  return out;
}

int count(const std::vector<PairedInterval>& v, PairedVerdict verdict) {
  int n = 0;
  for (const auto& r : v) n += r.verdict == verdict;
  return n;
}

SequentialOptions demo_options() {
  SequentialOptions o;
  o.test.looks = 3;
  o.rounds_per_look = 2;
  o.max_runs = 12;  // the cost of the demo's search at one collective
  return o;
}

TEST(SequentialPairedTest, RealTenPercentGainIsAccepted) {
  std::mt19937_64 rng(11);
  int accepted = 0, total = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const Outcome o = simulate(std::log(0.9), 0.02, 19, demo_options(), rng);
    accepted += count(o.intervals, PairedVerdict::faster);
    total += 19;
    for (const auto& iv : o.intervals) EXPECT_LT(iv.ratio, 1.0);
  }
  EXPECT_GT(accepted, total * 9 / 10) << accepted << " of " << total;
}

TEST(SequentialPairedTest, NoGainIsNotAccepted) {
  std::mt19937_64 rng(12);
  int false_wins = 0, total = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Outcome o = simulate(0.0, 0.05, 19, demo_options(), rng);
    false_wins += count(o.intervals, PairedVerdict::faster);
    total += 19;
  }
  // alpha = 5 % per size is the bound; Bonferroni over looks keeps it well below.
  EXPECT_LT(false_wins, total * 5 / 100) << false_wins << " of " << total;
}

TEST(SequentialPairedTest, NoiseOnlyWithMinimumGainIsNotAccepted) {
  // A real 1 % gain under 10 % noise with a 3 % minimum gain: never a win.
  std::mt19937_64 rng(13);
  SequentialOptions options = demo_options();
  options.min_gain = 0.03;
  int wins = 0;
  for (int trial = 0; trial < 200; ++trial)
    wins +=
        count(simulate(std::log(0.99), 0.10, 19, options, rng).intervals, PairedVerdict::faster);
  EXPECT_LT(wins, 200 * 19 * 2 / 100);
}

TEST(SequentialPairedTest, SlowerCandidateIsNeverChosen) {
  std::mt19937_64 rng(14);
  for (int trial = 0; trial < 200; ++trial) {
    const Outcome o = simulate(std::log(1.10), 0.05, 19, demo_options(), rng);
    EXPECT_EQ(count(o.intervals, PairedVerdict::faster), 0);
  }
}

TEST(SequentialPairedTest, CapAndLooksAreRespected) {
  std::mt19937_64 rng(15);
  for (int cap : {4, 5, 7, 12, 30}) {
    SequentialOptions options = demo_options();
    options.max_runs = cap;
    const Outcome o = simulate(0.0, 0.3, 19, options, rng);  // never decided: runs to the cap
    EXPECT_LE(o.runs, cap);
    EXPECT_LE(o.looks, options.test.looks);
    EXPECT_GE(o.runs, std::min(cap - 1, 12)) << "the procedure stopped before its cap";
  }
  EXPECT_EQ(next_look_rounds(0, 0, 3, demo_options()), 2);
  EXPECT_EQ(next_look_rounds(1, 6, 3, demo_options()), 2);
  EXPECT_EQ(next_look_rounds(2, 12, 3, demo_options()), 0);  // cap reached
  EXPECT_EQ(next_look_rounds(3, 0, 3, demo_options()), 0);   // looks used up
  EXPECT_EQ(next_look_rounds(0, 0, 1, demo_options()), 0);   // nothing to compare
}

TEST(SequentialPairedTest, PlannedLooksFollowTheCap) {
  SequentialOptions o = demo_options();  // 3 looks, 2 rounds per look
  o.max_runs = 6;                        // one candidate: 4 runs, then one 2-run look
  EXPECT_EQ(planned_looks(2, o), 2);
  o.max_runs = 4;
  EXPECT_EQ(planned_looks(2, o), 1);
  o.max_runs = 100;
  EXPECT_EQ(planned_looks(3, o), 3);
  o.max_runs = 0;
  EXPECT_EQ(planned_looks(3, o), 3);
}

TEST(SequentialPairedTest, DecidedSizesStopEarly) {
  // A large, clear gain is decided at the first look: no more runs than one ABBA block.
  std::mt19937_64 rng(16);
  const Outcome o = simulate(std::log(0.5), 0.01, 19, demo_options(), rng);
  EXPECT_EQ(o.looks, 1);
  EXPECT_EQ(o.runs, 4);
  EXPECT_EQ(count(o.intervals, PairedVerdict::faster), 19);
}

TEST(PairedIntervals, SignificantlySlowerAndSpeedupBounds) {
  std::vector<std::vector<double>> d = {{0.20, 0.22, 0.18, 0.21}, {}, {0.0, 0.01, -0.01, 0.0}};
  PairedTestOptions options;
  const auto iv = paired_intervals(d, 0.0, options);
  ASSERT_EQ(iv.size(), 3u);
  EXPECT_EQ(iv[0].verdict, PairedVerdict::slower);
  EXPECT_GT(iv[0].lower, 1.0);
  EXPECT_EQ(iv[1].pairs, 0);
  EXPECT_EQ(iv[1].verdict, PairedVerdict::open);
  EXPECT_EQ(iv[2].verdict, PairedVerdict::open);
  EXPECT_LE(iv[2].speedup_lower(), iv[2].speedup());
  EXPECT_GE(iv[2].speedup_upper(), iv[2].speedup());
  EXPECT_NEAR(iv[0].confidence, 1 - 0.05 / 3, 1e-12);
}

// Five sizes of four pairs, a 10 % gain with little noise; at the second size one run was an
// outlier (its pair's log-ratio 0.9 above the others). Lent to its neighbours, that pair would
// widen their intervals so much that none is proven; set aside, it widens only its own size's.
std::vector<std::vector<double>> gain_with_one_outlier() {
  const double g = std::log(0.9);
  std::vector<std::vector<double>> d;
  for (int s = 0; s < 5; ++s) d.push_back({g + 0.03, g - 0.02, g + 0.01, g - 0.025 + 0.005 * s});
  d[1][2] += 0.9;
  return d;
}

TEST(PairedIntervals, AnOutlierAtOneSizeIsNotLentToItsNeighbours) {
  const auto d = gain_with_one_outlier();
  PairedTestOptions lend_all;
  lend_all.lend_alpha = 0;
  const auto before = paired_intervals(d, 0.0, lend_all);
  for (int s : {0, 2, 3}) EXPECT_EQ(before[s].verdict, PairedVerdict::open) << s;
  const auto after = paired_intervals(d, 0.0, PairedTestOptions{});
  for (int s : {0, 2, 3, 4}) EXPECT_EQ(after[s].verdict, PairedVerdict::faster) << s;
  // The outlier's own size still counts it: not proven there.
  EXPECT_EQ(after[1].verdict, PairedVerdict::open);
  EXPECT_EQ(after[1].upper, before[1].upper);
  EXPECT_EQ(pooled_variance(d, 2, 0.05).set_aside, 1);
  EXPECT_EQ(pooled_variance(d, 1, 0.05).set_aside, 0);  // its own size lends it to itself
  EXPECT_EQ(pooled_variance(d, 1, 0.05).df, 15);
  EXPECT_EQ(pooled_variance(d, 2, 0.05).df, 14);
}

TEST(PairedIntervals, WithoutOutliersEveryPairIsLent) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 0.05);
  std::vector<std::vector<double>> d(5);
  for (auto& at_size : d)
    for (int i = 0; i < 4; ++i) at_size.push_back(noise(rng));
  const PooledVariance robust = pooled_variance(d, 2, 0.05), lent = pooled_variance(d, 2, 0);
  EXPECT_EQ(robust.set_aside, 0);
  EXPECT_DOUBLE_EQ(robust.variance, lent.variance);
  EXPECT_EQ(robust.df, 15);
  // Two pairs at a size: an outlying pair difference sets one of them aside, and the size
  // lends nothing (one pair has no variance to lend).
  std::vector<std::vector<double>> two(3, {0.01, -0.01});
  two[0] = {0.01, 1.5};
  const PooledVariance p = pooled_variance(two, 1, 0.05);
  EXPECT_EQ(p.set_aside, 1);
  EXPECT_EQ(p.df, 2);
  EXPECT_NEAR(p.variance, 0.0002, 1e-12);
}

// One message size measured with two pairs (a look that tests a nominee at one size: one
// degree of freedom), a 10 % gain with 2 % noise: Student's quantile at one degree of freedom
// is too wide to prove it. The same candidate's pairs at a neighbouring comm size (another
// mean: it is 30 % slower there) lend their variance and their degrees of freedom, not their
// mean: the gain is proven, at the size's own ratio.
TEST(PairedIntervals, ANeighbouringCommSizeLendsItsVarianceNotItsMean) {
  const double g = std::log(0.9);
  const std::vector<std::vector<double>> own = {{g + 0.02, g - 0.02}};
  const std::vector<std::vector<double>> other = {{0.3 + 0.01, 0.3 - 0.02, 0.3 + 0.015, 0.3}};
  PairedTestOptions options;
  const auto alone = paired_intervals(own, 0.0, options);
  EXPECT_EQ(alone[0].verdict, PairedVerdict::open);
  const auto lent = paired_intervals(own, 0.0, options, {&other});
  EXPECT_EQ(lent[0].verdict, PairedVerdict::faster);
  EXPECT_DOUBLE_EQ(lent[0].ratio, alone[0].ratio);
  EXPECT_NEAR(lent[0].ratio, 0.9, 1e-12);
  EXPECT_EQ(lent[0].pairs, 2);
  EXPECT_LT(lent[0].upper, alone[0].upper);
  // A quiet neighbour never makes the interval narrower than the size's own variance allows.
  const std::vector<std::vector<double>> quiet = {{0.3, 0.3001, 0.2999, 0.3}};
  const std::vector<std::vector<double>> noisy_own = {{g + 0.08, g - 0.08}};
  const auto q = paired_intervals(noisy_own, 0.0, options, {&quiet});
  const double own_sd = std::sqrt(2 * 0.08 * 0.08);
  const double t = student_t_quantile(1 - 0.05 / 3 / 2, 4);  // df 1 + 3
  EXPECT_NEAR(std::log(q[0].upper) - g, t * own_sd / std::sqrt(2.0), 1e-9);
  // A noisier neighbour widens it: lending is no one-way street.
  const std::vector<std::vector<double>> loud = {{0.3 + 0.2, 0.3 - 0.2, 0.3 + 0.15, 0.3 - 0.1}};
  EXPECT_EQ(paired_intervals(own, 0.0, options, {&loud})[0].verdict, PairedVerdict::open);
  // A table of other message sizes is refused.
  const std::vector<std::vector<double>> two_sizes = {{0.1, 0.2}, {0.1, 0.2}};
  EXPECT_THROW(paired_intervals(own, 0.0, options, {&two_sizes}), std::invalid_argument);
}

// The neighbour's outlier at a message size goes through the same test as a neighbouring
// message size's: set aside, not lent.
TEST(PairedIntervals, ANeighbouringCommSizesOutlierIsNotLent) {
  const double g = std::log(0.9);
  const std::vector<std::vector<double>> own = {{g + 0.02, g - 0.02, g + 0.01}};
  std::vector<std::vector<double>> other = {{0.01, -0.02, 0.015, 0.0}};
  PairedTestOptions options;
  const auto clean = paired_intervals(own, 0.0, options, {&other});
  other[0][2] += 1.2;
  const auto with_outlier = paired_intervals(own, 0.0, options, {&other});
  EXPECT_EQ(clean[0].verdict, PairedVerdict::faster);
  EXPECT_EQ(with_outlier[0].verdict, PairedVerdict::faster);
  PairedTestOptions lend_all = options;
  lend_all.lend_alpha = 0;
  EXPECT_EQ(paired_intervals(own, 0.0, lend_all, {&other})[0].verdict, PairedVerdict::open);
}

}  // namespace
}  // namespace colltune
