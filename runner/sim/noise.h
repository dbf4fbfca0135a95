// Run-to-run noise of simulated OSU measurements: a multiplicative log-normal factor shared by all
// sizes of one run, one per size (wider for small messages), and rare outliers (more frequent
// for small messages). Every draw comes from a seed, so a simulated campaign is repeatable.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "core/rng.h"
#include "core/seed.h"

namespace colltune::sim {

struct NoiseModel {
  double run_sigma = 0.02;    // log-normal sigma of the per-run factor (job placement, clocks)
  double small_sigma = 0.08;  // per-size sigma at or below small_bytes
  double large_sigma = 0.02;  // per-size sigma at or above large_bytes (log-linear between)
  std::int64_t small_bytes = 1024;
  std::int64_t large_bytes = 262144;
  double small_outlier_rate = 0.02;  // probability that one size of one run is an outlier
  double large_outlier_rate = 0.005;
  double outlier_min = 1.3;  // an outlier multiplies the value by U(outlier_min, outlier_max)
  double outlier_max = 2.5;

  static NoiseModel none();
  bool enabled() const;
  double sigma_at(std::int64_t bytes) const;
  double outlier_rate_at(std::int64_t bytes) const;

  static NoiseModel from_json(const nlohmann::json& j);  // missing fields keep the defaults
  nlohmann::json to_json() const;
};

// A standard normal draw from Rng (Box-Muller), identical on every platform.
double standard_normal(Rng& rng);

// Seeds of independent, order-free streams per run: core/seed.h.
using colltune::mix_seed;

// The noise of one run: construct with the run's own seed, then ask for each size in order.
class RunNoise {
 public:
  RunNoise(const NoiseModel& model, std::uint64_t run_seed);
  // Multiplicative factor (> 0) for the measurement of one size of this run.
  double factor(std::int64_t bytes);

 private:
  NoiseModel model_;
  Rng rng_;
  double run_factor_ = 1;
};

}  // namespace colltune::sim
