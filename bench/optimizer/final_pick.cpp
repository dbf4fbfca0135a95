#include "bench/optimizer/final_pick.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace colltune::bench {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double relative_noise(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  const double m = median_of(samples);
  std::vector<double> deviations;
  for (double v : samples) deviations.push_back(std::abs(v - m));
  return m > 0 ? 1.4826 * median_of(deviations) / m : 0;
}

bool simpler(const TuningConfig& a, const TuningConfig& b) {
  if (a.is_default() != b.is_default()) return a.is_default();
  const int knobs_a = (a.segsize > 0) + (a.fanout > 0);
  const int knobs_b = (b.segsize > 0) + (b.fanout > 0);
  if (knobs_a != knobs_b) return knobs_a < knobs_b;
  return a < b;
}

}  // namespace

TuningConfig engine_pick(const std::map<TuningConfig, std::vector<double>>& samples,
                         double min_tolerance) {
  const TuningConfig* best = nullptr;
  double best_median = std::numeric_limits<double>::infinity();
  for (const auto& [config, values] : samples) {
    if (values.empty()) continue;
    double m = median_of(values);
    if (m < best_median) best_median = m, best = &config;
  }
  if (!best) return TuningConfig{};
  const double best_noise = relative_noise(samples.at(*best));
  TuningConfig chosen = *best;
  for (const auto& [config, values] : samples) {
    if (values.empty()) continue;
    const double tolerance = std::max({min_tolerance, best_noise, relative_noise(values)});
    if (median_of(values) <= best_median * (1 + tolerance) && simpler(config, chosen))
      chosen = config;
  }
  return chosen;
}

}  // namespace colltune::bench
