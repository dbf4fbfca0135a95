#include "optimizer/expected_improvement.h"

#include <gtest/gtest.h>

#include <cmath>

namespace colltune {
namespace {

// E[max(f* - X, 0)] for X ~ N(mu, sigma^2) by the trapezoid rule on a fine grid.
double ei_by_quadrature(double mu, double sigma, double incumbent) {
  const int steps = 200000;
  const double lo = mu - 12 * sigma, hi = incumbent;
  if (hi <= lo) return 0.0;
  const double h = (hi - lo) / steps;
  double sum = 0;
  for (int i = 0; i <= steps; ++i) {
    double x = lo + i * h;
    double f = (incumbent - x) * normal_pdf((x - mu) / sigma) / sigma;
    sum += (i == 0 || i == steps) ? 0.5 * f : f;
  }
  return sum * h;
}

TEST(ExpectedImprovement, MatchesDefinitionByQuadrature) {
  struct Case {
    double mu, sigma, incumbent;
  } cases[] = {{0, 1, 0}, {1, 0.5, 0.2}, {-1, 2, 0.5}, {3, 0.3, 2.5}, {0.1, 0.01, 0.12}};
  for (const auto& c : cases) {
    double expected = ei_by_quadrature(c.mu, c.sigma, c.incumbent);
    EXPECT_NEAR(expected_improvement(c.mu, c.sigma, c.incumbent), expected, 1e-7 + 1e-6 * expected);
    EXPECT_NEAR(std::exp(log_expected_improvement(c.mu, c.sigma, c.incumbent)), expected,
                1e-7 + 1e-6 * expected);
  }
}

TEST(ExpectedImprovement, ClosedFormAtZero) {
  // z = 0: EI = sigma * phi(0) = sigma / sqrt(2 pi).
  EXPECT_NEAR(expected_improvement(2.0, 3.0, 2.0), 3.0 / std::sqrt(2 * M_PI), 1e-15);
}

TEST(ExpectedImprovement, LogFormIsAccurateAndFiniteInTheFarTail) {
  // Reference h(z) = z Phi(z) + phi(z) in long double where it does not underflow.
  for (double z = -30; z <= 8; z += 0.25) {
    long double zl = z;
    long double phi = std::exp(-0.5L * zl * zl) / std::sqrt(2.0L * M_PIl);
    long double cdf = 0.5L * std::erfc(-zl / std::sqrt(2.0L));
    long double h = zl * cdf + phi;
    EXPECT_NEAR(log_h(z), static_cast<double>(std::log(h)), 1e-9 * std::max(1.0, std::abs(z * z)))
        << "z=" << z;
  }
  // Where EI underflows to 0, its log stays finite and keeps ranking candidates.
  EXPECT_EQ(expected_improvement(100.0, 1.0, 0.0), 0.0);
  double far = log_expected_improvement(100.0, 1.0, 0.0);
  double farther = log_expected_improvement(200.0, 1.0, 0.0);
  EXPECT_TRUE(std::isfinite(far));
  EXPECT_GT(far, farther);
  // Asymptotically h(z) ~ phi(z) / z^2.
  double z = -1e4;
  EXPECT_NEAR(log_h(z), -0.5 * z * z - 0.5 * std::log(2 * M_PI) - 2 * std::log(-z), 1e-6);
}

TEST(ExpectedImprovement, LogAddExp) {
  EXPECT_NEAR(log_add_exp(std::log(2.0), std::log(3.0)), std::log(5.0), 1e-15);
  EXPECT_EQ(log_add_exp(-INFINITY, 1.5), 1.5);
  EXPECT_NEAR(log_add_exp(1000.0, 1000.0), 1000.0 + std::log(2.0), 1e-12);
}

}  // namespace
}  // namespace colltune
