#include "optimizer/final_choice.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace colltune {

double relative_noise(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  // Scaled median absolute deviation: one scheduler hiccup does not inflate it.
  const double m = median(samples);
  std::vector<double> deviations;
  for (double v : samples) deviations.push_back(std::abs(v - m));
  return m > 0 ? 1.4826 * median(deviations) / m : 0;
}

bool simpler_config(const TuningConfig& a, const TuningConfig& b) {
  if (a.is_default() != b.is_default()) return a.is_default();
  const int knobs_a = (a.segsize > 0) + (a.fanout > 0);
  const int knobs_b = (b.segsize > 0) + (b.fanout > 0);
  if (knobs_a != knobs_b) return knobs_a < knobs_b;
  return a < b;
}

FinalPick pick_within_noise(const std::map<TuningConfig, std::vector<double>>& samples,
                            double min_tolerance) {
  FinalPick pick;
  const TuningConfig* best = nullptr;
  double best_median = std::numeric_limits<double>::infinity();
  for (const auto& [config, values] : samples) {
    if (values.empty()) continue;
    const double m = median(values);
    if (m < best_median) {
      best_median = m;
      best = &config;
    }
  }
  if (!best) return pick;
  const double best_noise = relative_noise(samples.at(*best));

  TuningConfig chosen = *best;
  double chosen_tolerance = best_noise;
  for (const auto& [config, values] : samples) {
    if (values.empty()) continue;
    const double tolerance = std::max({min_tolerance, best_noise, relative_noise(values)});
    const bool tied = median(values) <= best_median * (1 + tolerance);
    if (tied && simpler_config(config, chosen)) {
      chosen = config;
      chosen_tolerance = tolerance;
    }
    if (config.is_default()) {
      pick.default_measured = true;
      pick.default_us = median(values);
      pick.default_within_noise = tied;
    }
  }
  pick.found = true;
  pick.config = chosen;
  pick.median_us = median(samples.at(chosen));
  pick.noise = std::max({min_tolerance, chosen_tolerance, best_noise});
  pick.samples = static_cast<int>(samples.at(chosen).size());
  return pick;
}

}  // namespace colltune
