#include "runner/sim/noise.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>
#include <stdexcept>

namespace colltune::sim {

NoiseModel NoiseModel::none() {
  NoiseModel m;
  m.run_sigma = m.small_sigma = m.large_sigma = 0;
  m.small_outlier_rate = m.large_outlier_rate = 0;
  return m;
}

bool NoiseModel::enabled() const {
  return run_sigma > 0 || small_sigma > 0 || large_sigma > 0 || small_outlier_rate > 0 ||
         large_outlier_rate > 0;
}

namespace {

// Position of `bytes` between small_bytes (0) and large_bytes (1) on a log scale.
double size_weight(const NoiseModel& m, std::int64_t bytes) {
  if (bytes <= m.small_bytes || m.large_bytes <= m.small_bytes) return 0;
  if (bytes >= m.large_bytes) return 1;
  return std::log2(static_cast<double>(bytes) / static_cast<double>(m.small_bytes)) /
         std::log2(static_cast<double>(m.large_bytes) / static_cast<double>(m.small_bytes));
}

}  // namespace

double NoiseModel::sigma_at(std::int64_t bytes) const {
  const double w = size_weight(*this, bytes);
  return small_sigma + w * (large_sigma - small_sigma);
}

double NoiseModel::outlier_rate_at(std::int64_t bytes) const {
  const double w = size_weight(*this, bytes);
  return small_outlier_rate + w * (large_outlier_rate - small_outlier_rate);
}

NoiseModel NoiseModel::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("noise: expected an object");
  NoiseModel m;
  m.run_sigma = j.value("run_sigma", m.run_sigma);
  m.small_sigma = j.value("small_sigma", m.small_sigma);
  m.large_sigma = j.value("large_sigma", m.large_sigma);
  m.small_bytes = j.value("small_bytes", m.small_bytes);
  m.large_bytes = j.value("large_bytes", m.large_bytes);
  m.small_outlier_rate = j.value("small_outlier_rate", m.small_outlier_rate);
  m.large_outlier_rate = j.value("large_outlier_rate", m.large_outlier_rate);
  m.outlier_min = j.value("outlier_min", m.outlier_min);
  m.outlier_max = j.value("outlier_max", m.outlier_max);
  auto bad = [](const std::string& what) { throw std::invalid_argument("noise: " + what); };
  if (m.run_sigma < 0 || m.small_sigma < 0 || m.large_sigma < 0) bad("sigmas must be >= 0");
  if (m.small_outlier_rate < 0 || m.small_outlier_rate > 1 || m.large_outlier_rate < 0 ||
      m.large_outlier_rate > 1)
    bad("outlier rates must be in [0, 1]");
  if (!(m.outlier_min >= 1) || m.outlier_max < m.outlier_min)
    bad("need 1 <= outlier_min <= outlier_max");
  if (m.small_bytes < 1 || m.large_bytes < m.small_bytes)
    bad("need 1 <= small_bytes <= large_bytes");
  return m;
}

nlohmann::json NoiseModel::to_json() const {
  return {{"run_sigma", run_sigma},
          {"small_sigma", small_sigma},
          {"large_sigma", large_sigma},
          {"small_bytes", small_bytes},
          {"large_bytes", large_bytes},
          {"small_outlier_rate", small_outlier_rate},
          {"large_outlier_rate", large_outlier_rate},
          {"outlier_min", outlier_min},
          {"outlier_max", outlier_max}};
}

double standard_normal(Rng& rng) {
  // 1 - uniform() is in (0, 1], so the logarithm is finite.
  const double u1 = 1.0 - rng.uniform();
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

RunNoise::RunNoise(const NoiseModel& model, std::uint64_t run_seed)
    : model_(model), rng_(run_seed) {
  if (model_.run_sigma > 0) run_factor_ = std::exp(model_.run_sigma * standard_normal(rng_));
}

double RunNoise::factor(std::int64_t bytes) {
  double f = run_factor_;
  const double sigma = model_.sigma_at(bytes);
  if (sigma > 0) f *= std::exp(sigma * standard_normal(rng_));
  const double rate = model_.outlier_rate_at(bytes);
  if (rate > 0 && rng_.uniform() < rate)
    f *= model_.outlier_min + rng_.uniform() * (model_.outlier_max - model_.outlier_min);
  return f;
}

}  // namespace colltune::sim
