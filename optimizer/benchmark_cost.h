// What one OSU run costs in benchmark time, from what it measured: per message size, average
// latency x (iterations + warm-up iterations), plus a fixed launch overhead for the job.
// Defaults are OMB's (1000 iterations and 200 warm-ups up to 8 KiB, 100 and 10 above) and the
// ~0.4 s MPI start-up/teardown measured on this machine (docs/reference/osu-benchmarks.md §5.1).
#pragma once

#include <cstdint>
#include <vector>

namespace colltune {

struct BenchmarkCost {
  int iterations_small = 1000;
  int warmup_small = 200;
  int iterations_large = 100;
  int warmup_large = 10;
  std::int64_t large_message_size = 8192;  // sizes above this use the "large" counts
  double launch_overhead_s = 0.4;

  // Seconds of one run that measured `latency_us[i]` at `msg_sizes[i]` (non-finite skipped).
  double run_seconds(const std::vector<std::int64_t>& msg_sizes,
                     const std::vector<double>& latency_us) const;
};

}  // namespace colltune
