// A Gaussian process on the grid "evaluated configurations x message sizes", exact and cheap
// because the kernel is separable and the noise is a Kronecker product of diagonals:
//
//   cov(y(c,s), y(c',s')) = k_c(c,c') k_s(s,s') + [c=c'][s=s'] tau_s^2 / r_c
//   k_c(c,c') = sigma_f^2 * (1 if alg(c)=alg(c') else rho) * Matern52_ARD((seg,fan), (seg',fan'))
//   k_s(s,s') = Matern52(|u_s - u_s'| / l_size)          (u = scaled log2 message size)
//   tau_s^2   = exp(eta0 + eta1 t_s + eta2 t_s^2) / scale_s^2,   t_s = 2 u_s - 1
//
// y is the per-size standardised mean of log latency over the r_c runs of configuration c
// (scale_s converts standardised units back to log units, so exp(eta...) is the per-run noise
// variance of log latency: CV^2 for small CVs). One OSU run fills a whole row, which is what
// makes the grid complete. With K~ = (R^-1/2 K_c R^-1/2) (x) (D^-1/2 K_s D^-1/2) + I, both
// factors are eigendecomposed: O(n^3 + m^3) per factorisation instead of O((nm)^3).
//
// The likelihood includes the within-run-group scatter of repeated runs, so repeats inform the
// noise term exactly. Hyper-parameters are a vector indexed by GridGpParam.
#pragma once

#include <vector>

#include <Eigen/Dense>

#include "optimizer/config_encoding.h"

namespace colltune {

enum GridGpParam : int {
  kLogSignalVar = 0,
  kLogitRho,
  kLogLengthSeg,
  kLogLengthFan,
  kLogLengthSize,
  kNoise0,
  kNoise1,
  kNoise2,
  kGridGpParamCount
};

struct GridData {
  std::vector<EncodedConfig> configs;  // n rows
  Eigen::VectorXd size_coord;          // m columns, in [0, 1]
  Eigen::MatrixXd z;                   // n x m, standardised mean of log latency
  Eigen::VectorXd repeats;             // n, runs behind each row (>= 1)
  Eigen::MatrixXd within_ss;           // n x m, sum of squared deviations of the runs (std. units)
  Eigen::MatrixXd within_dof;          // n x m, runs - 1 in the cell (0 for a single run)
  Eigen::VectorXd scale;               // m, log-latency units per standardised unit
};

class KroneckerGp {
 public:
  // Factorises; throws std::invalid_argument on inconsistent shapes.
  KroneckerGp(GridData data, Eigen::VectorXd theta);

  const GridData& data() const { return data_; }
  const Eigen::VectorXd& theta() const { return theta_; }

  // log p(observations | theta), including the replicate term.
  double log_likelihood() const { return log_likelihood_; }
  // Its gradient with respect to theta.
  Eigen::VectorXd log_likelihood_gradient() const;

  // Posterior of the latent standardised value of `points` at every size: mean and variance,
  // each points.size() x m.
  void predict(const std::vector<EncodedConfig>& points, Eigen::MatrixXd* mean,
               Eigen::MatrixXd* variance) const;

  // Per-run noise variance of log latency at each size (log units).
  Eigen::VectorXd noise_log_variance() const;

  // Covariance of configurations (without the size factor) and of sizes: exposed for tests.
  static Eigen::MatrixXd config_covariance(const std::vector<EncodedConfig>& a,
                                           const std::vector<EncodedConfig>& b,
                                           const Eigen::VectorXd& theta);
  static Eigen::MatrixXd size_covariance(const Eigen::VectorXd& u, const Eigen::VectorXd& v,
                                         const Eigen::VectorXd& theta);
  static Eigen::VectorXd noise_log_variance(const Eigen::VectorXd& theta,
                                            const Eigen::VectorXd& size_coord);

  // Weak priors that keep hyper-parameters sensible with little data, and box bounds.
  static double log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient);
  static Eigen::VectorXd default_theta();
  static Eigen::VectorXd lower_bounds();
  static Eigen::VectorXd upper_bounds();

 private:
  GridData data_;
  Eigen::VectorXd theta_;
  Eigen::MatrixXd kc_, ks_;                 // K_c (with signal variance), K_s
  Eigen::VectorXd sqrt_r_, inv_tau_, tau2_;  // row and column whitening
  Eigen::MatrixXd qc_, qs_;                 // eigenvectors of the whitened factors
  Eigen::VectorXd lc_, ls_;                 // their eigenvalues (clamped >= 0)
  Eigen::MatrixXd g_;                       // 1 / (lc_i ls_j + 1)
  Eigen::MatrixXd alpha_;                   // K^-1 y as an n x m matrix
  Eigen::MatrixXd alpha_ks_;                // alpha * K_s, for predictive means
  Eigen::MatrixXd pc_;                      // diag(sqrt r) Q_c
  Eigen::MatrixXd vs2_;                     // (K_s D^-1/2 Q_s)^2 elementwise, m x m
  double log_likelihood_ = 0;
};

// Maximises log likelihood + log prior over theta with L-BFGS-B from each start; returns the
// best theta (the first start when every run fails).
Eigen::VectorXd fit_grid_gp(const GridData& data, const std::vector<Eigen::VectorXd>& starts,
                            int max_iterations = 60);

}  // namespace colltune
