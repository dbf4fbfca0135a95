#include "optimizer/kronecker_gp.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "optimizer/hyperparameter_fit.h"
#include "optimizer/kernel_math.h"
#include "optimizer/symmetric_eigen.h"

namespace colltune {
namespace {

// Quadratic (Lagrange) interpolation through the noise log-variances at t = -1, 0, 1.
inline double noise_basis(int k, double t) {
  if (k == 0) return 0.5 * t * (t - 1.0);
  if (k == 1) return 1.0 - t * t;
  return 0.5 * t * (t + 1.0);
}

// Prior means and standard deviations of theta (standardised data, inputs in [0, 1]).
const GaussianPrior kGridPriors[kGridGpParamCount] = {
    {0.0, 1.5},                // log signal variance ~ 1 after standardisation
    {0.0, 2.0},                // logit rho
    {std::log(0.5), 1.0},      // log length-scale, segment size
    {std::log(0.5), 1.0},      // log length-scale, fan-out
    {std::log(0.25), 1.0},     // log length-scale, message size
    {std::log(0.05), 1.5},     // log size nugget
    {0.1, 0.3},                // segment slope (log latency per doubling of segments)
    {2 * std::log(0.1), 1.5},  // noise: log variance at the smallest size, ~10 % CV
    {2 * std::log(0.1), 1.5},  // noise: log variance at the middle size
    {2 * std::log(0.1), 1.5},  // noise: log variance at the largest size
    {std::log(0.1), 1.5},      // log configuration nugget (own effect ~ 0.3 signal sd)
};

// The configuration kernel's identity term: the same configuration (encodings are distinct
// for distinct configurations of a space).
inline bool same_config(const EncodedConfig& a, const EncodedConfig& b) {
  return a.category == b.category && a.seg == b.seg && a.fan == b.fan;
}

// Diagonal of P^T M P, i.e. p_i^T M p_i for each column p_i.
Eigen::VectorXd quadratic_diagonal(const Eigen::MatrixXd& p, const Eigen::MatrixXd& m) {
  Eigen::MatrixXd mp = m * p;
  return (p.array() * mp.array()).colwise().sum().transpose();
}

}  // namespace

Eigen::VectorXd KroneckerGp::default_theta() {
  Eigen::VectorXd t = prior_means(kGridPriors);
  t[kLogitRho] = 0.5;
  return t;
}

Eigen::VectorXd KroneckerGp::lower_bounds() {
  Eigen::VectorXd b(kGridGpParamCount);
  b << -6, -6, std::log(0.02), std::log(0.02), std::log(0.02), -9, -1, -14, -14, -14, -9;
  return b;
}

Eigen::VectorXd KroneckerGp::upper_bounds() {
  Eigen::VectorXd b(kGridGpParamCount);
  // Noise: per-run CV of at most ~60 %; larger "noise" is model misfit, which must not pass
  // for noise (it would make every configuration look tied).
  const double max_noise = 2 * std::log(0.6);
  b << 4, 6, std::log(20.0), std::log(20.0), std::log(20.0), 2, 2, max_noise, max_noise, max_noise,
      2;
  return b;
}

double KroneckerGp::log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) {
  return gaussian_log_prior(kGridPriors, theta, gradient);
}

Eigen::MatrixXd KroneckerGp::config_covariance(const std::vector<EncodedConfig>& a,
                                               const std::vector<EncodedConfig>& b,
                                               const Eigen::VectorXd& theta) {
  const double signal = std::exp(theta[kLogSignalVar]);
  const double rho = sigmoid(theta[kLogitRho]);
  const double ls_seg = std::exp(theta[kLogLengthSeg]), ls_fan = std::exp(theta[kLogLengthFan]);
  const double own = std::exp(theta[kLogConfigNugget]);
  Eigen::MatrixXd k(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) {
      double ds = (a[i].seg - b[j].seg) / ls_seg, df = (a[i].fan - b[j].fan) / ls_fan;
      double m, f;
      matern52(std::sqrt(ds * ds + df * df), &m, &f);
      k(i, j) = signal * ((a[i].category == b[j].category ? 1.0 : rho) * m +
                          (same_config(a[i], b[j]) ? own : 0.0));
    }
  return k;
}

Eigen::MatrixXd KroneckerGp::size_covariance(const Eigen::VectorXd& u, const Eigen::VectorXd& v,
                                             const Eigen::VectorXd& theta) {
  const double ls = std::exp(theta[kLogLengthSize]);
  const double nugget = std::exp(theta[kLogSizeNugget]);
  Eigen::MatrixXd k(u.size(), v.size());
  for (int i = 0; i < u.size(); ++i)
    for (int j = 0; j < v.size(); ++j) {
      double m, f;
      matern52(std::abs(u[i] - v[j]) / ls, &m, &f);
      k(i, j) = m + (u[i] == v[j] ? nugget : 0.0);
    }
  return k;
}

Eigen::MatrixXd KroneckerGp::segment_feature(const std::vector<EncodedConfig>& points,
                                             const Eigen::VectorXd& size_log2) {
  Eigen::MatrixXd f = Eigen::MatrixXd::Zero(points.size(), size_log2.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].log2_segment <= 0) continue;
    for (int s = 0; s < size_log2.size(); ++s)
      f(i, s) = std::max(0.0, size_log2[s] - points[i].log2_segment);
  }
  return f;
}

Eigen::VectorXd KroneckerGp::noise_log_variance(const Eigen::VectorXd& theta,
                                                const Eigen::VectorXd& size_coord) {
  Eigen::VectorXd out(size_coord.size());
  for (int s = 0; s < size_coord.size(); ++s) {
    double t = 2.0 * size_coord[s] - 1.0;
    out[s] =
        std::exp(theta[kNoiseSmall] * noise_basis(0, t) + theta[kNoiseMid] * noise_basis(1, t) +
                 theta[kNoiseLarge] * noise_basis(2, t));
  }
  return out;
}

Eigen::VectorXd KroneckerGp::noise_log_variance() const {
  return noise_log_variance(theta_, data_.size_coord);
}

KroneckerGp::KroneckerGp(GridData data, Eigen::VectorXd theta)
    : data_(std::move(data)), theta_(std::move(theta)) {
  const int n = static_cast<int>(data_.configs.size());
  const int m = static_cast<int>(data_.size_coord.size());
  if (theta_.size() != kGridGpParamCount || data_.z.rows() != n || data_.z.cols() != m ||
      data_.repeats.size() != n || data_.scale.size() != m || data_.size_log2.size() != m ||
      data_.within_ss.rows() != n || data_.within_ss.cols() != m || data_.within_dof.rows() != n ||
      data_.within_dof.cols() != m)
    throw std::invalid_argument("KroneckerGp: inconsistent data shapes");

  kc_ = config_covariance(data_.configs, data_.configs, theta_);
  ks_ = size_covariance(data_.size_coord, data_.size_coord, theta_);
  sqrt_r_ = data_.repeats.array().sqrt();
  Eigen::VectorXd noise = noise_log_variance(theta_, data_.size_coord);
  tau2_ = noise.array() / data_.scale.array().square();
  inv_tau_ = tau2_.array().rsqrt();

  SymmetricEigen ec = symmetric_eigen(sqrt_r_.asDiagonal() * kc_ * sqrt_r_.asDiagonal());
  SymmetricEigen es = symmetric_eigen(inv_tau_.asDiagonal() * ks_ * inv_tau_.asDiagonal());
  qc_ = std::move(ec.vectors);
  qs_ = std::move(es.vectors);
  lc_ = ec.values.cwiseMax(0.0);
  ls_ = es.values.cwiseMax(0.0);
  g_ = ((lc_ * ls_.transpose()).array() + 1.0).inverse().matrix();

  feature_z_ =
      segment_feature(data_.configs, data_.size_log2) * data_.scale.cwiseInverse().asDiagonal();
  mean_z_ = theta_[kSegmentSlope] * feature_z_;
  Eigen::MatrixXd y_white = sqrt_r_.asDiagonal() * (data_.z - mean_z_) * inv_tau_.asDiagonal();
  Eigen::MatrixXd y_rot = qc_.transpose() * y_white * qs_;
  Eigen::MatrixXd b = y_rot.cwiseProduct(g_);
  alpha_ = sqrt_r_.asDiagonal() * (qc_ * b * qs_.transpose()) * inv_tau_.asDiagonal();
  alpha_ks_ = alpha_ * ks_;
  pc_ = sqrt_r_.asDiagonal() * qc_;
  vs2_ = (ks_ * inv_tau_.asDiagonal() * qs_).array().square().matrix();

  double quad = y_rot.cwiseProduct(b).sum();
  double log_det = -m * data_.repeats.array().log().sum() + n * tau2_.array().log().sum() -
                   g_.array().log().sum();
  log_likelihood_ = -0.5 * quad - 0.5 * log_det - 0.5 * n * m * kLog2Pi;
  for (int i = 0; i < n; ++i)
    for (int s = 0; s < m; ++s) {
      double dof = data_.within_dof(i, s);
      if (dof <= 0) continue;
      log_likelihood_ += -0.5 * data_.within_ss(i, s) / tau2_[s] -
                         0.5 * dof * (kLog2Pi + std::log(tau2_[s])) - 0.5 * std::log(dof + 1.0);
    }
}

Eigen::VectorXd KroneckerGp::log_likelihood_gradient() const {
  const int n = static_cast<int>(data_.configs.size());
  const int m = static_cast<int>(data_.size_coord.size());
  Eigen::VectorXd grad = Eigen::VectorXd::Zero(kGridGpParamCount);

  // Derivatives of K_c.
  const double rho = sigmoid(theta_[kLogitRho]);
  const double ls_seg = std::exp(theta_[kLogLengthSeg]), ls_fan = std::exp(theta_[kLogLengthFan]);
  const double signal = std::exp(theta_[kLogSignalVar]);
  Eigen::MatrixXd d_rho(n, n), d_seg(n, n), d_fan(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const auto& a = data_.configs[i];
      const auto& b = data_.configs[j];
      double ds = (a.seg - b.seg) / ls_seg, df = (a.fan - b.fan) / ls_fan;
      double k, f;
      matern52(std::sqrt(ds * ds + df * df), &k, &f);
      bool same = a.category == b.category;
      double c = same ? 1.0 : rho;
      d_rho(i, j) = same ? 0.0 : signal * rho * (1.0 - rho) * k;
      d_seg(i, j) = signal * c * f * ds * ds;
      d_fan(i, j) = signal * c * f * df * df;
    }
  const Eigen::MatrixXd a_ks = alpha_ks_;  // A K_s
  const Eigen::VectorXd g_ls = g_ * ls_;   // sum_j G_ij ls_j
  auto config_term = [&](const Eigen::MatrixXd& dkc) {
    double quad = alpha_.cwiseProduct(dkc * a_ks).sum();
    double trace = quadratic_diagonal(pc_, dkc).dot(g_ls);
    return 0.5 * quad - 0.5 * trace;
  };
  grad[kLogSignalVar] = config_term(kc_);
  grad[kLogitRho] = config_term(d_rho);
  grad[kLogLengthSeg] = config_term(d_seg);
  grad[kLogLengthFan] = config_term(d_fan);
  {
    Eigen::MatrixXd d_own = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (same_config(data_.configs[i], data_.configs[j]))
          d_own(i, j) = signal * std::exp(theta_[kLogConfigNugget]);
    grad[kLogConfigNugget] = config_term(d_own);
  }

  // Derivative of K_s.
  const double ls_size = std::exp(theta_[kLogLengthSize]);
  Eigen::MatrixXd d_size(m, m);
  for (int s = 0; s < m; ++s)
    for (int t = 0; t < m; ++t) {
      double d = (data_.size_coord[s] - data_.size_coord[t]) / ls_size;
      double k, f;
      matern52(std::abs(d), &k, &f);
      d_size(s, t) = f * d * d;
    }
  {
    Eigen::MatrixXd kc_a = kc_ * alpha_;
    double quad = alpha_.cwiseProduct(kc_a * d_size).sum();
    Eigen::MatrixXd ps = inv_tau_.asDiagonal() * qs_;
    double trace = (lc_.transpose() * g_).dot(quadratic_diagonal(ps, d_size));
    grad[kLogLengthSize] = 0.5 * quad - 0.5 * trace;
  }

  {
    Eigen::MatrixXd kc_a = kc_ * alpha_;
    Eigen::VectorXd d_nugget = Eigen::VectorXd::Constant(m, std::exp(theta_[kLogSizeNugget]));
    double quad = alpha_.cwiseProduct(kc_a * d_nugget.asDiagonal()).sum();
    Eigen::MatrixXd ps = inv_tau_.asDiagonal() * qs_;
    double trace = (lc_.transpose() * g_).dot(quadratic_diagonal(ps, d_nugget.asDiagonal()));
    grad[kLogSizeNugget] = 0.5 * quad - 0.5 * trace;
  }

  grad[kSegmentSlope] = feature_z_.cwiseProduct(alpha_).sum();

  // Noise polynomial.
  Eigen::VectorXd g_col = g_.colwise().sum().transpose();  // sum_i G_ij
  Eigen::MatrixXd qs2 = qs_.array().square().matrix();
  Eigen::VectorXd inv_r = data_.repeats.cwiseInverse();
  Eigen::VectorXd a2_r = (inv_r.transpose() * alpha_.array().square().matrix()).transpose();
  for (int p = 0; p < 3; ++p) {
    Eigen::VectorXd w(m);
    for (int s = 0; s < m; ++s) w[s] = noise_basis(p, 2.0 * data_.size_coord[s] - 1.0);
    double quad = (a2_r.array() * tau2_.array() * w.array()).sum();
    double trace = g_col.dot(qs2.transpose() * w);
    double rep = 0;
    for (int i = 0; i < n; ++i)
      for (int s = 0; s < m; ++s) {
        double dof = data_.within_dof(i, s);
        if (dof > 0) rep += (0.5 * data_.within_ss(i, s) / tau2_[s] - 0.5 * dof) * w[s];
      }
    grad[kNoiseSmall + p] = 0.5 * quad - 0.5 * trace + rep;
  }
  return grad;
}

void KroneckerGp::predict(const std::vector<EncodedConfig>& points, Eigen::MatrixXd* mean,
                          Eigen::MatrixXd* variance) const {
  Eigen::MatrixXd kx = config_covariance(points, data_.configs, theta_);
  if (mean)
    *mean = kx * alpha_ks_ + theta_[kSegmentSlope] * segment_feature(points, data_.size_log2) *
                                 data_.scale.cwiseInverse().asDiagonal();
  if (variance) {
    Eigen::MatrixXd u2 = (kx * pc_).array().square().matrix();
    const double prior = std::exp(theta_[kLogSignalVar]) *
                         (1.0 + std::exp(theta_[kLogConfigNugget])) *
                         (1.0 + std::exp(theta_[kLogSizeNugget]));
    *variance = (-(u2 * g_ * vs2_.transpose())).array() + prior;
    *variance = variance->cwiseMax(1e-12);
  }
}

Eigen::MatrixXd KroneckerGp::loo_residuals(Eigen::MatrixXd* sd) const {
  // diag(K^-1) at cell (j, s) = (r_j / tau_s^2) * ((Qc o Qc) G (Qs o Qs)^T)_{js}.
  Eigen::MatrixXd diag =
      qc_.array().square().matrix() * g_ * qs_.array().square().matrix().transpose();
  diag = data_.repeats.asDiagonal() * diag * tau2_.cwiseInverse().asDiagonal();
  if (sd) *sd = diag.cwiseInverse().cwiseSqrt();
  return alpha_.cwiseQuotient(diag);
}

double KroneckerGp::measurement_share() const {
  double scatter = 2.0, dof = 2.0;  // pseudo-observations at share 1
  for (int j = 0; j < data_.within_dof.rows(); ++j)
    for (int s = 0; s < data_.within_dof.cols(); ++s) {
      scatter += data_.within_ss(j, s) / tau2_[s];
      dof += data_.within_dof(j, s);
    }
  return std::clamp(scatter / dof, 0.02, 1.0);
}

void KroneckerGp::observed_cell_posterior(double share, Eigen::MatrixXd* mean,
                                          Eigen::MatrixXd* var) const {
  Eigen::MatrixXd sd;
  Eigen::MatrixXd residual = loo_residuals(&sd);
  const int n = static_cast<int>(residual.rows()), m = static_cast<int>(residual.cols());
  mean->resize(n, m);
  var->resize(n, m);
  for (int j = 0; j < n; ++j)
    for (int s = 0; s < m; ++s) {
      const double noise = tau2_[s] / data_.repeats[j];
      const double others_mean = data_.z(j, s) - residual(j, s);
      const double others_var =
          std::max(sd(j, s) * sd(j, s) - noise, 1e-12) + (1.0 - share) * tau2_[s];
      const double own_var = share * noise;
      (*mean)(j, s) = (others_mean * own_var + data_.z(j, s) * others_var) / (others_var + own_var);
      (*var)(j, s) = others_var * own_var / (others_var + own_var);
    }
}

int winsorize_outliers(GridData& data, const Eigen::VectorXd& theta, double limit) {
  KroneckerGp gp(data, theta);
  Eigen::MatrixXd sd;
  Eigen::MatrixXd residual = gp.loo_residuals(&sd);
  int changed = 0;
  for (int j = 0; j < residual.rows(); ++j)
    for (int s = 0; s < residual.cols(); ++s) {
      // Only slow surprises: interference slows a run down, nothing makes it faster than the
      // configuration can go, so a fast surprise is a real feature (e.g. a protocol switch).
      double bound = limit * sd(j, s);
      if (residual(j, s) <= bound) continue;
      data.z(j, s) -= residual(j, s) - bound;
      ++changed;
    }
  return changed;
}

GridData subset_rows(const GridData& data, int max_rows) {
  const int n = static_cast<int>(data.configs.size());
  if (n <= max_rows) return data;
  std::vector<int> keep, rest;
  for (int j = 0; j < n; ++j) (data.repeats[j] > 1 ? keep : rest).push_back(j);
  if (static_cast<int>(keep.size()) > max_rows) keep.resize(max_rows);
  const int wanted = max_rows - static_cast<int>(keep.size());
  for (int k = 0; k < wanted; ++k)
    keep.push_back(rest[static_cast<std::size_t>(k) * rest.size() / wanted]);
  std::sort(keep.begin(), keep.end());
  GridData out;
  const int m = static_cast<int>(data.size_coord.size());
  out.size_coord = data.size_coord;
  out.size_log2 = data.size_log2;
  out.scale = data.scale;
  out.z.resize(keep.size(), m);
  out.repeats.resize(keep.size());
  out.within_ss.resize(keep.size(), m);
  out.within_dof.resize(keep.size(), m);
  for (std::size_t i = 0; i < keep.size(); ++i) {
    out.configs.push_back(data.configs[keep[i]]);
    out.z.row(i) = data.z.row(keep[i]);
    out.repeats[i] = data.repeats[keep[i]];
    out.within_ss.row(i) = data.within_ss.row(keep[i]);
    out.within_dof.row(i) = data.within_dof.row(keep[i]);
  }
  return out;
}

Eigen::VectorXd fit_grid_gp(const GridData& data, const std::vector<Eigen::VectorXd>& starts,
                            int max_iterations) {
  LbfgsbSettings settings;
  settings.max_iterations = max_iterations;
  settings.epsilon = 1e-4;
  settings.epsilon_rel = 1e-6;
  settings.max_linesearch = 30;
  return fit_posterior_mode<KroneckerGp>(data, starts, settings);
}

}  // namespace colltune
