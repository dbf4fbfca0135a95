// A Gaussian process over (configuration, communicator size) x message size, for the
// whole-cluster search (cluster_strategy.h). One OSU run of a configuration at a comm size P
// measures every message size, so the observations fill whole rows of the grid
// "(configuration, P) pairs x message sizes", and a separable kernel keeps inference exact and
// cheap (eigendecompositions of the two factors, O(n^3 + m^3)):
//
//   cov(y(c,P,s), y(c',P',s')) = K_row((c,P),(c',P')) K_s(s,s') + [same cell] tau^2 / r
//   K_row = k_P(P,P') * (v_shared + sigma_f^2 * k_c(c,c')) + [P=P'] sigma_f^2 mu k_c(c,c')
//         + (x - x0)(x' - x0) v_slope                                       (x = log2 P)
//   k_c   = (1 if alg(c)=alg(c') else rho) * M52(seg,fan)
//   k_P   = Matern52(|log2 P - log2 P'| / l_P)
//   K_s   = Matern52(|u_s - u_s'| / l_size) + lambda [s=s']   (u = scaled log2 message size)
//
// v_shared is the part every configuration shares at a comm size (everything gets slower as P
// grows); sigma_f^2 the configuration-specific part, smooth in log2 P with the same l_P, so a
// configuration's advantage at P=64 carries over to P=128 as far as the data say it does; mu
// is the part of it that belongs to one comm size only (a power-of-two size, a size where a
// tree fills one more level): without it such a feature is either smoothed away or, with a
// short l_P, nothing carries over between sizes. The
// prior mean is a per-message-size linear trend in log2 P (least squares on the rows), so the
// model extrapolates log latency linearly in log2 P rather than back to a constant.
// Rows may carry an offset (ClusterRow::offset, e.g. the log latency of an analytic cost
// model): it is subtracted before the trend is fitted and added back to every prediction.
// The last term is the uncertainty of that trend (universal kriging with a Bayesian linear
// trend): the least-squares slope is an estimate, and v_slope, its variance per doubling^2
// around x0 (the repeat-weighted mean log2 P of the rows), makes the posterior variance grow
// with (x - x0)^2, without bound, beyond the measured sizes, where a stationary kernel would
// level off at its prior variance. (A slope per configuration, sigma_f^2 beta k_c (x-x0)(x'-x0),
// was tried and not kept: bench/README.md "Whole-cluster", docs/whole-cluster.md.)
// y is log latency (mean over the r runs of the cell), standardised per message size.
// Hyper-parameters: a vector indexed by ClusterGpParam, fitted by MAP (fit_cluster_gp).
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "optimizer/config_encoding.h"

namespace colltune {

enum ClusterGpParam : int {
  kClusterLogSignalVar = 0,
  kClusterLogitRho,
  kClusterLogLengthSeg,
  kClusterLogLengthFan,
  kClusterLogLengthComm,  // in doublings of P
  kClusterLogSharedVar,
  kClusterLogLengthSize,
  kClusterLogSizeNugget,
  kClusterLogNoiseVar,        // per-run noise variance (standardised units)
  kClusterLogCommNugget,      // share of the configuration part specific to one comm size
  kClusterLogSharedSlopeVar,  // trend slope variance per doubling^2 (standardised units)
  kClusterGpParamCount
};

// One row of the grid: a configuration at a comm size.
struct ClusterRow {
  EncodedConfig config;
  double log2_comm = 1;
  // A known part of the row's log latency per message size (empty = none): the prior mean is
  // offset + trend, so the kernel models what the offset does not explain. The whole-cluster
  // search puts the log of the analytic cost model's latency here (algorithm_cost_model.h);
  // a model is built with offsets on every row or on none.
  Eigen::VectorXd offset;
};

// Hyper-parameter vectors of an older length (a state saved before a parameter was added)
// padded with the prior means of the new ones; throws std::invalid_argument otherwise.
Eigen::VectorXd upgrade_cluster_theta(const std::vector<double>& saved);

struct ClusterGridData {
  std::vector<ClusterRow> rows;  // n
  Eigen::VectorXd size_coord;    // m, scaled log2 message size in [0, 1]
  Eigen::MatrixXd log_latency;   // n x m, mean over the cell's runs of log latency (µs)
  Eigen::VectorXd repeats;       // n, runs behind each row (>= 1)
};

class ClusterGp {
 public:
  // Throws std::invalid_argument on inconsistent shapes or no rows.
  ClusterGp(ClusterGridData data, Eigen::VectorXd theta);

  const ClusterGridData& data() const { return data_; }
  const Eigen::VectorXd& theta() const { return theta_; }
  double log_likelihood() const { return log_likelihood_; }
  // The gradient of log_likelihood() with respect to theta (exact; one O(n^3 + m^3) pass on
  // top of the constructor's eigendecompositions, then O(n^2) per row parameter).
  Eigen::VectorXd log_likelihood_gradient() const;

  // Posterior of the latent log latency (µs, log units) of `points` at every message size:
  // mean and variance, each points.size() x m.
  void predict(const std::vector<ClusterRow>& points, Eigen::MatrixXd* mean,
               Eigen::MatrixXd* variance) const;

  // The posterior of one row across the message sizes: mean (m) and covariance (m x m) of the
  // latent log latency (log units). Its diagonal is predict()'s variance.
  void predict_joint(const ClusterRow& point, Eigen::VectorXd* mean,
                     Eigen::MatrixXd* covariance) const;

  // Per-run noise standard deviation of log latency at each message size (log units).
  Eigen::VectorXd noise_sd() const;

  // `center` = x0 of the linear trend term (log2 P).
  static Eigen::MatrixXd row_covariance(const std::vector<ClusterRow>& a,
                                        const std::vector<ClusterRow>& b,
                                        const Eigen::VectorXd& theta, double center);
  double center() const { return center_log2_; }
  static Eigen::VectorXd default_theta();
  static Eigen::VectorXd lower_bounds();
  static Eigen::VectorXd upper_bounds();
  // With `gradient`, also its gradient (resized to theta's size).
  static double log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient = nullptr);

 private:
  // Prior mean (log units): the offsets plus the trend.
  Eigen::MatrixXd trend(const std::vector<ClusterRow>& points) const;
  Eigen::MatrixXd offsets(const std::vector<ClusterRow>& points) const;  // zero where empty

  ClusterGridData data_;
  Eigen::VectorXd theta_;
  Eigen::VectorXd center_, scale_;  // per message size: trend intercept at log2 P = 0, sd
  Eigen::VectorXd slope_;           // per message size: trend slope per doubling of P
  double center_log2_ = 0;          // x0: repeat-weighted mean log2 P of the rows
  Eigen::MatrixXd ks_;
  Eigen::VectorXd sqrt_r_;
  Eigen::MatrixXd qr_, qs_;
  Eigen::VectorXd lr_, ls_;
  Eigen::MatrixXd g_;         // 1 / (lr_i ls_j + tau^2)
  Eigen::MatrixXd b_;         // the standardised data in the eigenbasis, times g_ (n x m)
  Eigen::MatrixXd alpha_;     // K^-1 (z - 0) arranged n x m
  Eigen::MatrixXd alpha_ks_;  // K^-1 (z - 0) arranged n x m, times K_s
  Eigen::MatrixXd vs2_;       // (Q_s^T K_s)^2 elementwise, m x m
  double log_likelihood_ = 0;
};

// MAP hyper-parameters (L-BFGS-B on the exact gradient) from each start; the best.
Eigen::VectorXd fit_cluster_gp(const ClusterGridData& data,
                               const std::vector<Eigen::VectorXd>& starts, int max_iterations = 40);

}  // namespace colltune
