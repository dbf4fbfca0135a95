// The final-choice rule for one message size, shared by the campaign engine
// (campaign/final_choice.*) and the optimizer benchmark: from repeated measurements per
// configuration, the lowest median wins, but a configuration whose median is within the noise
// of the best is a tie, and ties go to Open MPI's default first, then to the simpler
// configuration (fewer knobs, then lower algorithm id). Pure code.
#pragma once

#include <map>
#include <vector>

#include "core/stats.h"
#include "core/tuning_config.h"

namespace colltune {

// median(): core/stats.h.

// Relative noise of samples: scaled median absolute deviation over the median (a robust
// standard deviation; 0 for fewer than 2 samples).
double relative_noise(const std::vector<double>& samples);

// Default first, then fewer effective knobs, then lower configuration order: the
// configuration an admin can reason about most easily.
bool simpler_config(const TuningConfig& a, const TuningConfig& b);

struct FinalPick {
  bool found = false;    // false when no configuration has a sample
  TuningConfig config;   // the pick
  double median_us = 0;  // median of the pick's samples
  double noise = 0;      // relative tolerance of the tie test that admitted the pick
  int samples = 0;       // samples of the pick
  bool default_measured = false;
  double default_us = 0;  // median of the default's samples (when measured)
  bool default_within_noise = false;
};

// `samples`: latencies per configuration at one size. A configuration ties with the best when
// its median <= best median x (1 + max(min_tolerance, best's noise, its own noise)).
FinalPick pick_within_noise(const std::map<TuningConfig, std::vector<double>>& samples,
                            double min_tolerance = 0.02);

}  // namespace colltune
