// The sequential paired test behind every "is this faster than Open MPI's default?" decision
// (the final choice of the campaign engine and the re-measurement of the rules stage). Pure code.
//
// Data: at one message size, n pairs (candidate run, default run) measured next to each other
// in time. The test works on d_i = log(candidate_us / default_us): a ratio, so that sizes of
// every magnitude share one scale, and a log, so that a 10 % gain and a 10 % loss are symmetric.
//
// Interval: a Student-t interval for the mean of d at confidence 1 - alpha_look, where
// alpha_look = alpha / (looks x tests) (Bonferroni over the planned looks of the sequential
// procedure and over the candidates tested at one size, so the chance of ever accepting a
// candidate that is not faster stays <= alpha whatever the stopping rule does). The variance is
// pooled over the size and its pool_radius neighbours on each side (OSU sizes are powers of two,
// neighbours have similar noise); the size's own variance is used when it is larger, so one noisy
// size is not hidden by quiet neighbours, and a neighbour's outlying pair is not lent to the pool
// (pooled_variance). Degrees of freedom: sum over the window of (pairs counted - 1). In a
// whole-cluster campaign the same candidate's pairs at the neighbouring communicator sizes join
// that window too (paired_intervals' `lent`).
// The full method and why: docs/final-choice.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace colltune {

// Quantile of Student's t distribution with `df` degrees of freedom (df >= 1), 0 < p < 1.
double student_t_quantile(double p, double df);

struct PairedTestOptions {
  double alpha = 0.05;     // family-wise error per size and decision
  int looks = 3;           // planned looks (alpha is split over them)
  int tests_per_size = 1;  // candidates tested at one size (alpha is split over them)
  int pool_radius = 2;     // neighbouring sizes whose variance is pooled (each side)
  // A neighbour's pair is lent to the pooled variance unless an outlier test at this level
  // (over the window's pairs) sets it aside; 0 = every pair is lent. See pooled_variance.
  double lend_alpha = 0.05;
};

// What an interval says about a candidate against the default.
enum class PairedVerdict {
  faster,  // the whole interval of the ratio lies below 1 - min_gain
  slower,  // the whole interval lies above 1 (significantly slower)
  open,    // neither: a tie unless more pairs decide it
};
std::string_view to_string(PairedVerdict verdict);

struct PairedInterval {
  int pairs = 0;     // pairs behind the interval
  double ratio = 1;  // exp(mean d): candidate latency / default latency (< 1 = faster)
  double lower = 0;  // interval of the ratio at the test's confidence
  double upper = 0;  // (0, +inf) when too few pairs to say anything
  double confidence = 0.95;
  PairedVerdict verdict = PairedVerdict::open;

  // The speed-up (default / candidate) and its interval, as reports show it.
  double speedup() const { return 1 / ratio; }
  double speedup_lower() const { return upper > 0 ? 1 / upper : 0; }
  double speedup_upper() const { return lower > 0 ? 1 / lower : 0; }
};

// One interval per size. `log_ratios[k]`: the paired log-differences at the k-th size (sizes in
// increasing order, neighbours pooled by index). `min_gain`: a candidate is `faster` only when
// its ratio's upper bound is below 1 - min_gain.
// `lent` (borrowed for the call; none by default): the same candidate's log-differences at
// other communicator sizes of a whole-cluster campaign, indexed as `log_ratios` (the same
// message sizes), each one lending its pairs at the window's message sizes to the pooled
// variance as one more neighbour does: through the outlier test, to the variance and its
// degrees of freedom, never to the mean; the size's own variance still wins when larger. A
// table of another length is a programming error (std::invalid_argument). Why, and what it
// measured: docs/final-choice.md, "Neighbouring communicator sizes".
std::vector<PairedInterval> paired_intervals(
    const std::vector<std::vector<double>>& log_ratios, double min_gain,
    const PairedTestOptions& options,
    const std::vector<const std::vector<std::vector<double>>*>& lent = {});

// The variance of d pooled over a window of sizes (`window`, in increasing order) for the size
// at index `own`. With lend_alpha > 0, the pairs of the window are first put through a
// Bonferroni outlier test at level lend_alpha: one at a time, the pair whose externally
// studentized residual (its distance to the mean of the other pairs of its size, scaled by the
// window's pooled variance without it) is largest is set aside while that t exceeds Student's
// quantile at 1 - lend_alpha / (2 x pairs tested). Pairs set aside at a neighbouring size are
// not lent: one run's outlier at one size would otherwise widen the intervals of its
// neighbours. The own size always counts all its pairs, so an outlier still widens the interval
// of the size it was measured at. `df`: sum over the sizes of (pairs counted - 1).
struct PooledVariance {
  double variance = 0;
  double df = 0;
  int set_aside = 0;  // pairs of neighbouring sizes not lent
};
PooledVariance pooled_variance(std::span<const std::vector<double>> window, int own,
                               double lend_alpha);

// True while more pairs could change the decision: not proven faster, and the interval still
// reaches below 1 - min_gain (so a candidate that cannot win any more is decided too).
bool still_open(const PairedInterval& interval, double min_gain);

// The sequential procedure: look after look, repeats are added only while some candidate is
// still open at a size it is nominated for, never beyond `looks` looks or `max_runs` runs.
struct SequentialOptions {
  double min_gain = 0;      // smallest relative gain a candidate must prove
  PairedTestOptions test;   // test.looks = the planned looks
  int rounds_per_look = 2;  // A/B then B/A: one ABBA block per look
  int max_runs = 0;         // cap on the runs of the whole procedure (0 = looks x rounds only)
};

// Rounds to add at the next look (0 = stop): `looks_done` looks were made, `runs_spent` runs
// spent, each round of the next look runs `configs_per_round` configurations (the default and
// every candidate still open). A last look may be shorter to stay within max_runs; a look of
// less than one round is not made.
int next_look_rounds(int looks_done, int runs_spent, int configs_per_round,
                     const SequentialOptions& options);

// The looks the procedure can make at most within options.max_runs when the first look runs
// `first_configs` configurations per round and every later look at least 2 (the default and
// one candidate) for at least one round; never more than options.test.looks. The Bonferroni
// split (PairedTestOptions::looks) uses this number: looks that cannot happen cost no alpha.
int planned_looks(int first_configs, const SequentialOptions& options);

// Pairs (candidate_us, default_us) -> log-differences, skipping non-positive values.
std::vector<double> log_ratios(const std::vector<std::pair<double, double>>& pairs);

}  // namespace colltune
