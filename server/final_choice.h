// The final pick per message size from re-measured finalists: lowest median, but a
// configuration whose gap to the best is within the measured noise is a tie, and ties go to
// Open MPI's default first, then to the simpler configuration (fewer knobs, lower id).
// The rule itself (and median / relative_noise) lives in optimizer/final_choice.h, which the
// optimizer benchmark shares; this is the engine's view of it.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/tuning_config.h"
#include "optimizer/final_choice.h"

namespace colltune {

struct SizePick {
  std::int64_t msg_size = 0;
  TuningConfig best;
  double best_us = 0;     // median of the pick's samples
  double default_us = 0;  // median of the default's samples; NaN if not measured
  double noise = 0;       // relative noise used for the tie test
  bool default_within_noise = false;
  int samples = 0;  // samples of the pick
};

// `samples`: latencies per configuration at one size. `min_tolerance`: smallest relative gap
// treated as real (e.g. 0.02). Returns nullopt-like pick with samples = 0 when nothing measured.
SizePick choose_for_size(std::int64_t msg_size,
                         const std::map<TuningConfig, std::vector<double>>& samples,
                         double min_tolerance = 0.02);

}  // namespace colltune
