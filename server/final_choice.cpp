#include "server/final_choice.h"

#include <limits>

namespace colltune {

SizePick choose_for_size(std::int64_t msg_size,
                         const std::map<TuningConfig, std::vector<double>>& samples,
                         double min_tolerance) {
  SizePick out;
  out.msg_size = msg_size;
  const FinalPick pick = pick_within_noise(samples, min_tolerance);
  out.default_us =
      pick.default_measured ? pick.default_us : std::numeric_limits<double>::quiet_NaN();
  if (!pick.found) return out;
  out.best = pick.config;
  out.best_us = pick.median_us;
  out.noise = pick.noise;
  out.default_within_noise = pick.default_within_noise;
  out.samples = pick.samples;
  return out;
}

}  // namespace colltune
