// A Gaussian process on the grid "evaluated configurations x message sizes", exact and cheap
// because the kernel is separable and the noise is a Kronecker product of diagonals:
//
//   cov(y(c,s), y(c',s')) = k_c(c,c') k_s(s,s') + [c=c'][s=s'] tau_s^2 / r_c
//   k_c(c,c') = sigma_f^2 * [(1 if alg(c)=alg(c') else rho) * Matern52_ARD((seg,fan), (seg',fan'))
//                            + eta [c=c']]
//   k_s(s,s') = Matern52(|u_s - u_s'| / l_size) + lambda [s=s']   (u = scaled log2 size)
//   tau_s^2   = exp(q(t_s)) / scale_s^2,   t_s = 2 u_s - 1, q the quadratic through the noise
//               log-variances (kNoiseSmall, kNoiseMid, kNoiseLarge) at t = -1, 0, 1
//
// The prior mean is w * log2(number of segments) / scale_s (segments = message size / segment
// size for configurations that segment): the segmentation cost grows with the message size at
// a fixed segment size, a diagonal structure a separable kernel represents poorly.
// eta is the configuration's own effect: a deviation of one configuration from what its
// neighbours in (algorithm, segment size, fan-out) predict, smooth over message sizes like the
// rest (it is multiplied by k_s). A chain's fan-out is its tree's shape and a segment size can
// match a cache or a protocol threshold, so one configuration can be fast over a band of sizes
// while its neighbours are not: without eta the model could only call that noise (one run per
// configuration gives no way to tell), and it shrank such narrow optima away. With eta a
// deviation seen consistently over neighbouring sizes is kept, and a configuration never run
// keeps sigma_f^2 eta of prior variance that no neighbour can explain away.
// lambda lets part of the configuration effect (still smooth over configurations) differ from
// one size to the next, so that a fast change of ranking with size is not taken for noise.
// y is the per-size standardised mean of log latency over the r_c runs of configuration c
// (scale_s converts standardised units back to log units, so exp(q) is the per-run noise
// variance of log latency: CV^2 for small CVs). One OSU run fills a whole row, which is what
// makes the grid complete. With K~ = (R^-1/2 K_c R^-1/2) (x) (D^-1/2 K_s D^-1/2) + I, both
// factors are eigendecomposed: O(n^3 + m^3) per factorisation instead of O((nm)^3).
//
// The likelihood includes the within-run-group scatter of repeated runs, so repeats inform the
// noise term exactly. Hyper-parameters are a vector indexed by GridGpParam.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "optimizer/config_encoding.h"

namespace colltune {

enum GridGpParam : int {
  kLogSignalVar = 0,
  kLogitRho,
  kLogLengthSeg,
  kLogLengthFan,
  kLogLengthSize,
  kLogSizeNugget,    // size-independent share of the configuration effect
  kSegmentSlope,     // mean: log-latency cost per doubling of the number of segments
  kNoiseSmall,       // noise log-variance at the smallest size (t = -1)
  kNoiseMid,         // ... at the middle size (t = 0)
  kNoiseLarge,       // ... at the largest size (t = 1)
  kLogConfigNugget,  // log eta: the configuration's own effect (share of the signal variance)
  kGridGpParamCount
};

struct GridData {
  std::vector<EncodedConfig> configs;  // n rows
  Eigen::VectorXd size_coord;          // m columns, in [0, 1]
  Eigen::VectorXd size_log2;           // m, log2 of the message size (for segment counts)
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

  // Share of the noise variance that is run-to-run measurement noise, from the scatter of
  // repeated runs (pooled over sizes, with a weak pull towards 1); 1 without repeats. The rest
  // is discrepancy: behaviour of one configuration at one size that the smooth kernel misses,
  // real in that it comes back when the configuration is run again.
  double measurement_share() const;

  // Posterior of the actual value (smooth part + discrepancy) of every observed cell, in
  // standardised units (n x m): the leave-one-out prediction from the other cells combined with
  // the cell's own runs, which carry only the measurement noise. With share 1 this is the
  // usual posterior at the training inputs.
  void observed_cell_posterior(double share, Eigen::MatrixXd* mean, Eigen::MatrixXd* var) const;

  // Leave-one-cell-out residuals y - E[y | all other cells] (standardised units, n x m), and
  // their predictive standard deviations in `sd`. Exact, from the eigendecompositions.
  Eigen::MatrixXd loo_residuals(Eigen::MatrixXd* sd) const;

  // log2(number of segments) of configurations at each size (points x m).
  static Eigen::MatrixXd segment_feature(const std::vector<EncodedConfig>& points,
                                         const Eigen::VectorXd& size_log2);

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
  Eigen::MatrixXd kc_, ks_;                  // K_c (with signal variance), K_s
  Eigen::VectorXd sqrt_r_, inv_tau_, tau2_;  // row and column whitening
  Eigen::MatrixXd qc_, qs_;                  // eigenvectors of the whitened factors
  Eigen::VectorXd lc_, ls_;                  // their eigenvalues (clamped >= 0)
  Eigen::MatrixXd g_;                        // 1 / (lc_i ls_j + 1)
  Eigen::MatrixXd mean_z_;                   // prior mean of the rows (standardised)
  Eigen::MatrixXd feature_z_;                // segment feature / scale (n x m)
  Eigen::MatrixXd alpha_;                    // K^-1 (y - mean) as an n x m matrix
  Eigen::MatrixXd alpha_ks_;                 // alpha * K_s, for predictive means
  Eigen::MatrixXd pc_;                       // diag(sqrt r) Q_c
  Eigen::MatrixXd vs2_;                      // (K_s D^-1/2 Q_s)^2 elementwise, m x m
  double log_likelihood_ = 0;
};

// Robustness against outlier runs (one run slowed by a scheduler hiccup): cells slower than
// their leave-one-out prediction by more than `limit` predictive standard deviations are
// pulled back to that limit. One-sided: nothing makes a run faster than the configuration can
// go, so fast surprises are kept as real features. Returns the cells changed.
int winsorize_outliers(GridData& data, const Eigen::VectorXd& theta, double limit = 2.5);

// At most `max_rows` rows of the data, for fitting hyper-parameters in bounded time: rows with
// repeated runs first (they carry the noise level), then evenly spaced over the rest.
GridData subset_rows(const GridData& data, int max_rows);

// Maximises log likelihood + log prior over theta with L-BFGS-B from each start; returns the
// best theta (the first start when every run fails).
Eigen::VectorXd fit_grid_gp(const GridData& data, const std::vector<Eigen::VectorXd>& starts,
                            int max_iterations = 60);

}  // namespace colltune
