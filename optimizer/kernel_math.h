// The small numerical pieces the Gaussian processes share (optimizer/kronecker_gp.h,
// optimizer/cluster_gp.h, the comm-size correlation of optimizer/cluster_bayes_strategy.h): one
// definition each, so that the models agree on what their kernel is and how their
// hyper-parameters are regularised.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <span>

namespace colltune {

inline constexpr double kSqrt5 = 2.2360679774997896964;
inline constexpr double kLog2Pi = 1.8378770664093454836;  // log(2 pi)

// Matern 5/2 correlation at scaled distance r >= 0.
inline double matern52(double r) {
  return (1.0 + kSqrt5 * r + 5.0 / 3.0 * r * r) * std::exp(-kSqrt5 * r);
}

// Matern 5/2 at scaled distance r, and the factor F with dk/dlog(l_d) = F * (delta_d / l_d)^2
// (the gradient of the kernel with respect to a log length-scale).
inline void matern52(double r, double* k, double* f) {
  const double e = std::exp(-kSqrt5 * r);
  *k = (1.0 + kSqrt5 * r + 5.0 / 3.0 * r * r) * e;
  *f = 5.0 / 3.0 * (1.0 + kSqrt5 * r) * e;
}

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// An independent Gaussian prior on one hyper-parameter (in the model's own units: log scales,
// logits, slopes).
struct GaussianPrior {
  double mean = 0, sd = 1;
};

// The priors' means: a model's starting hyper-parameters.
inline Eigen::VectorXd prior_means(std::span<const GaussianPrior> priors) {
  Eigen::VectorXd theta(static_cast<Eigen::Index>(priors.size()));
  for (std::size_t i = 0; i < priors.size(); ++i)
    theta[static_cast<Eigen::Index>(i)] = priors[i].mean;
  return theta;
}

// The log density of `theta` under the priors, up to a constant; with `gradient`, its gradient
// (resized to theta's size).
inline double gaussian_log_prior(std::span<const GaussianPrior> priors,
                                 const Eigen::VectorXd& theta,
                                 Eigen::VectorXd* gradient = nullptr) {
  double lp = 0;
  if (gradient) gradient->setZero(theta.size());
  for (std::size_t i = 0; i < priors.size(); ++i) {
    const auto k = static_cast<Eigen::Index>(i);
    const double d = (theta[k] - priors[i].mean) / priors[i].sd;
    lp -= 0.5 * d * d;
    if (gradient) (*gradient)[k] = -d / priors[i].sd;
  }
  return lp;
}

}  // namespace colltune
