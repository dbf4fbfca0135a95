#include "optimizer/benchmark_cost.h"

#include <cmath>

namespace colltune {

double BenchmarkCost::run_seconds(const std::vector<std::int64_t>& msg_sizes,
                                  const std::vector<double>& latency_us) const {
  double us = 0;
  for (std::size_t i = 0; i < msg_sizes.size() && i < latency_us.size(); ++i) {
    if (!std::isfinite(latency_us[i])) continue;
    bool large = msg_sizes[i] > large_message_size;
    int reps = large ? iterations_large + warmup_large : iterations_small + warmup_small;
    us += latency_us[i] * reps;
  }
  return launch_overhead_s + us * 1e-6;
}

}  // namespace colltune
