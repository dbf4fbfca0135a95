// The campaign engine's final pick per message size, reproduced for the benchmark (it mirrors
// server/final_choice.cpp, which the benchmark does not link): from the final re-measurement
// runs only, the lowest median wins, but a configuration whose median is within the noise of
// the best (max of 2 %, the best's and its own scaled-MAD relative noise) is a tie, and ties go
// to Open MPI's default, then to the configuration with fewer knobs, then the lower id.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/tuning_config.h"

namespace colltune::bench {

TuningConfig engine_pick(const std::map<TuningConfig, std::vector<double>>& samples,
                         double min_tolerance = 0.02);

}  // namespace colltune::bench
