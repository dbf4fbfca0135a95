#include "optimizer/expected_improvement.h"

#include <cmath>
#include <limits>

namespace colltune {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2 pi))

}  // namespace

double normal_pdf(double z) { return std::exp(-0.5 * z * z - kLogSqrt2Pi); }

double normal_cdf(double z) { return 0.5 * std::erfc(-z * kInvSqrt2); }

double log_h(double z) {
  if (z > -2.0) return std::log(z * normal_cdf(z) + normal_pdf(z));
  // For z <= -2, h(z) = phi(z) * (1 - x R(x)) with x = -z and R the Mills ratio. Writing R as
  // its continued fraction R(x) = 1/(x + 1/(x + 2/(x + 3/(x + ...)))) gives
  // 1 - x R(x) = c / (x + c) with c = 1/(x + 2/(x + 3/(x + ...))), free of cancellation.
  const double x = -z;
  double tail = x;
  for (int k = 80; k >= 2; --k) tail = x + k / tail;
  const double c = 1.0 / tail;
  return -0.5 * z * z - kLogSqrt2Pi + std::log(c) - std::log(x + c);
}

double log_expected_improvement(double mean, double sigma, double incumbent) {
  return std::log(sigma) + log_h((incumbent - mean) / sigma);
}

double expected_improvement(double mean, double sigma, double incumbent) {
  double z = (incumbent - mean) / sigma;
  return sigma * (z * normal_cdf(z) + normal_pdf(z));
}

double log_add_exp(double a, double b) {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  double hi = std::max(a, b), lo = std::min(a, b);
  return hi + std::log1p(std::exp(lo - hi));
}

}  // namespace colltune
