#include "optimizer/paired_test.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "core/stats.h"

namespace colltune {
namespace {

// Continued fraction of the regularized incomplete beta function (modified Lentz).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < 1e-14) break;
  }
  return h;
}

// I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

// P(T <= t) for Student's t with df degrees of freedom.
double student_t_cdf(double t, double df) {
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

double sum_sq_dev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s;
}

}  // namespace

std::string_view to_string(PairedVerdict verdict) {
  switch (verdict) {
    case PairedVerdict::faster:
      return "faster";
    case PairedVerdict::slower:
      return "slower";
    case PairedVerdict::open:
      return "tie";
  }
  return "tie";
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df >= 1)) throw std::invalid_argument("student_t_quantile: bad input");
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  // Bisection on the CDF: monotone, and 200 halvings of [0, 1e6] are far below double precision.
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

bool still_open(const PairedInterval& interval, double min_gain) {
  if (interval.verdict == PairedVerdict::faster) return false;
  return !(interval.pairs >= 2 && interval.lower > 1 - min_gain);
}

int next_look_rounds(int looks_done, int runs_spent, int configs_per_round,
                     const SequentialOptions& options) {
  if (configs_per_round < 2 || looks_done >= options.test.looks) return 0;
  int rounds = std::max(1, options.rounds_per_look);
  if (options.max_runs > 0)
    rounds = std::min(rounds, (options.max_runs - runs_spent) / configs_per_round);
  return std::max(0, rounds);
}

int planned_looks(int first_configs, const SequentialOptions& options) {
  const int max_looks = std::max(1, options.test.looks);
  if (options.max_runs <= 0) return max_looks;
  const int first = std::max(1, options.rounds_per_look) * std::max(2, first_configs);
  const int later = std::max(0, options.max_runs - first) / 2;
  return std::clamp(1 + later, 1, max_looks);
}

std::vector<double> log_ratios(const std::vector<std::pair<double, double>>& pairs) {
  std::vector<double> out;
  for (const auto& [candidate, fixed] : pairs)
    if (candidate > 0 && fixed > 0 && std::isfinite(candidate) && std::isfinite(fixed))
      out.push_back(std::log(candidate / fixed));
  return out;
}

std::vector<PairedInterval> paired_intervals(
    const std::vector<std::vector<double>>& log_ratios, double min_gain,
    const PairedTestOptions& options,
    const std::vector<const std::vector<std::vector<double>>*>& lent) {
  for (const auto* other : lent)
    if (!other || other->size() != log_ratios.size())
      throw std::invalid_argument("paired_intervals: a lent table must cover the same sizes");
  const double alpha_look =
      options.alpha / std::max(1, options.looks) / std::max(1, options.tests_per_size);
  const double threshold = std::log(1 - std::clamp(min_gain, 0.0, 0.99));
  const int n_sizes = static_cast<int>(log_ratios.size());
  std::vector<PairedInterval> out(log_ratios.size());
  for (int k = 0; k < n_sizes; ++k) {
    PairedInterval& r = out[static_cast<std::size_t>(k)];
    const auto& d = log_ratios[static_cast<std::size_t>(k)];
    r.pairs = static_cast<int>(d.size());
    r.confidence = 1 - alpha_look;
    r.lower = 0;
    r.upper = std::numeric_limits<double>::infinity();
    if (d.empty()) continue;
    const double m = mean(d);
    r.ratio = std::exp(m);
    if (d.size() < 2) continue;
    const int first = std::max(0, k - options.pool_radius);
    const int last = std::min(n_sizes - 1, k + options.pool_radius);
    // The window: this size and its neighbours, then the same message sizes of every lent
    // communicator size (each a neighbour like the others: pooled_variance).
    std::vector<std::vector<double>> window(log_ratios.begin() + first,
                                            log_ratios.begin() + last + 1);
    for (const auto* other : lent)
      window.insert(window.end(), other->begin() + first, other->begin() + last + 1);
    const PooledVariance pooled = pooled_variance(window, k - first, options.lend_alpha);
    const double own_var = sum_sq_dev(d) / static_cast<double>(d.size() - 1);
    const double var = std::max(own_var, pooled.variance);
    const double t = student_t_quantile(1 - alpha_look / 2, pooled.df);
    const double half = t * std::sqrt(var / static_cast<double>(d.size()));
    r.lower = std::exp(m - half);
    r.upper = std::exp(m + half);
    if (m + half < threshold)
      r.verdict = PairedVerdict::faster;
    else if (m - half > 0)
      r.verdict = PairedVerdict::slower;
  }
  return out;
}

PooledVariance pooled_variance(std::span<const std::vector<double>> window, int own,
                               double lend_alpha) {
  const int n_sizes = static_cast<int>(window.size());
  // kept[j][i]: pair i of size j counts in the reference scale of the outlier test.
  std::vector<std::vector<bool>> kept;
  for (const auto& w : window) kept.emplace_back(w.size(), true);
  auto size_stats = [&](int j, int skip) {  // (sum of squares, pairs, mean) of j's kept pairs
    const auto& w = window[static_cast<std::size_t>(j)];
    double sum = 0;
    int n = 0;
    for (int i = 0; i < static_cast<int>(w.size()); ++i)
      if (kept[j][i] && i != skip) sum += w[i], ++n;
    if (n == 0) return std::tuple<double, int, double>{0, 0, 0};
    const double m = sum / n;
    double ss = 0;
    for (int i = 0; i < static_cast<int>(w.size()); ++i)
      if (kept[j][i] && i != skip) ss += (w[i] - m) * (w[i] - m);
    return std::tuple<double, int, double>{ss, n, m};
  };
  auto total = [&] {
    double ss = 0, df = 0;
    for (int j = 0; j < n_sizes; ++j) {
      const auto [s, n, m] = size_stats(j, -1);
      if (n >= 2) ss += s, df += n - 1;
    }
    return std::pair<double, double>{ss, df};
  };
  // Bonferroni outlier test on externally studentized residuals, one pair at a time: the pair
  // furthest from the other pairs of its size, scaled by the window's pooled variance without
  // it, is set aside while its t exceeds the Bonferroni bound over the pairs tested.
  while (lend_alpha > 0) {
    const auto [ss_all, df_all] = total();
    double worst_t = 0, worst_df = 0;
    int worst_j = -1, worst_i = -1, tested = 0;
    for (int j = 0; j < n_sizes; ++j) {
      const auto& w = window[static_cast<std::size_t>(j)];
      const auto [ss_j, n_j, m_j] = size_stats(j, -1);
      if (n_j < 2) continue;  // no other pair of its size to measure a residual against
      for (int i = 0; i < static_cast<int>(w.size()); ++i) {
        if (!kept[j][i]) continue;
        const auto [ss_rest, n_rest, m_rest] = size_stats(j, i);
        const double df = df_all - 1;
        const double ss = ss_all - ss_j + ss_rest;
        if (df < 1 || ss <= 0) continue;
        ++tested;
        const double t =
            std::abs(w[i] - m_rest) / std::sqrt(ss / df * (1 + 1.0 / static_cast<double>(n_rest)));
        if (t > worst_t) worst_t = t, worst_df = df, worst_j = j, worst_i = i;
      }
    }
    if (worst_j < 0 || worst_t <= student_t_quantile(1 - lend_alpha / (2.0 * tested), worst_df))
      break;
    kept[worst_j][worst_i] = false;
  }
  // The own size lends itself all its pairs; the neighbours only those kept.
  std::fill(kept[own].begin(), kept[own].end(), true);
  const auto [ss, df] = total();
  PooledVariance out;
  out.df = df;
  out.variance = df > 0 ? ss / df : 0;
  for (const auto& k : kept)
    out.set_aside += static_cast<int>(std::count(k.begin(), k.end(), false));
  return out;
}

}  // namespace colltune
