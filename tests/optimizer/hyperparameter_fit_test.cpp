// The model fits' shared pieces (optimizer/hyperparameter_fit.h): the guard every objective
// passes through, the best of several starts, and a model class's posterior mode.
#include "optimizer/hyperparameter_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace colltune {
namespace {

Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(v.size()));
  int i = 0;
  for (double d : v) x[i++] = d;
  return x;
}

TEST(HyperparameterFit, TheGuardTurnsFailuresIntoTheLargestValueAndNoGradient) {
  // Throws below 0, a non-finite value in [1, 2), a non-finite gradient in [2, 3), else x^2.
  const BoundedObjective f = guarded([](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    if (x[0] < 0) throw std::runtime_error("no model here");
    g = 2 * x;
    if (x[0] >= 1 && x[0] < 2) return std::nan("");
    if (x[0] >= 2 && x[0] < 3) g[1] = std::numeric_limits<double>::infinity();
    return x.squaredNorm();
  });
  Eigen::VectorXd g;
  for (double bad : {-1.0, 1.5, 2.5}) {
    EXPECT_EQ(f(vec({bad, 0.5}), g), std::numeric_limits<double>::max()) << bad;
    EXPECT_EQ(g, Eigen::VectorXd::Zero(2)) << bad;
  }
  EXPECT_DOUBLE_EQ(f(vec({0.5, 3.0}), g), 9.25);  // a good point passes through as it is
  EXPECT_EQ(g, vec({1.0, 6.0}));
}

TEST(HyperparameterFit, TheBestOfStartsKeepsTheLowerWellAndAnInitialPointNoStartBeats) {
  // Two wells, tilted: the one near -1 is lower than the one near +1.
  const BoundedObjective f = [](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    const double t = x[0];
    g = vec({4 * t * (t * t - 1) + 0.3});
    return (t * t - 1) * (t * t - 1) + 0.3 * t;
  };
  LbfgsbSettings settings;
  const Eigen::VectorXd lower = vec({-2}), upper = vec({2});
  const Eigen::VectorXd best =
      best_of_starts(f, vec({1.9}), {vec({1.5}), vec({-1.5}), vec({5.0})}, lower, upper, settings);
  EXPECT_NEAR(best[0], -1.04, 0.01);
  // Only a start in the upper well: the descent from it ends there, above a given initial point
  // in the lower well, which is kept as it was given.
  const Eigen::VectorXd kept = best_of_starts(f, vec({-1.0}), {vec({1.5})}, lower, upper, settings);
  EXPECT_EQ(kept[0], -1.0);
}

// A model class as fit_posterior_mode takes it: log likelihood -(t - 2)^2, log prior -t^2 (the
// posterior mode at t = 1), no model for t above 4.
struct ToyModel {
  ToyModel(const double& shift, const Eigen::VectorXd& theta) : t(theta[0] + shift) {
    if (theta[0] > 4) throw std::invalid_argument("no model above 4");
  }
  double log_likelihood() const { return -(t - 2) * (t - 2); }
  Eigen::VectorXd log_likelihood_gradient() const { return vec({-2 * (t - 2)}); }
  static double log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) {
    *gradient = vec({-2 * theta[0]});
    return -theta[0] * theta[0];
  }
  static Eigen::VectorXd default_theta() { return vec({3}); }
  static Eigen::VectorXd lower_bounds() { return vec({-5}); }
  static Eigen::VectorXd upper_bounds() { return vec({5}); }
  double t;
};

TEST(HyperparameterFit, APosteriorModeIsWhereLikelihoodAndPriorBalance) {
  LbfgsbSettings settings;
  const double no_shift = 0;
  // A start where no model can be built (4.5) is scored as the worst and does not stop the fit.
  EXPECT_NEAR(
      fit_posterior_mode<ToyModel>(no_shift, {vec({3.0}), vec({4.5}), vec({-4.0})}, settings)[0], 1,
      1e-4);
  EXPECT_NEAR(fit_posterior_mode<ToyModel>(no_shift, {vec({4.5}), vec({-4.0})}, settings)[0], 1,
              1e-4);
  // The data shift the likelihood's peak: -(t + 2 - 2)^2 - t^2 peaks at 0.
  const double shift = 2;
  EXPECT_NEAR(fit_posterior_mode<ToyModel>(shift, {vec({3.0})}, settings)[0], 0, 1e-4);
  // No starts: the class's default as given, unfitted.
  EXPECT_EQ(fit_posterior_mode<ToyModel>(no_shift, {}, settings)[0], 3);
}

}  // namespace
}  // namespace colltune
