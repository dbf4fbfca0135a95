#include "optimizer/kronecker_gp.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <LBFGSB.h>

namespace colltune {
namespace {

constexpr double kSqrt5 = 2.2360679774997896964;
constexpr double kLog2Pi = 1.8378770664093454836;

// Matern 5/2 at scaled distance r, and the factor F with dk/dlog(l_d) = F * (delta_d / l_d)^2.
inline void matern52(double r, double* k, double* f) {
  const double e = std::exp(-kSqrt5 * r);
  *k = (1.0 + kSqrt5 * r + 5.0 / 3.0 * r * r) * e;
  *f = 5.0 / 3.0 * (1.0 + kSqrt5 * r) * e;
}

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Prior means and standard deviations of theta (standardised data, inputs in [0, 1]).
struct Prior {
  double mean, sd;
};
const Prior kPriors[kGridGpParamCount] = {
    {0.0, 1.5},                 // log signal variance ~ 1 after standardisation
    {0.0, 2.0},                 // logit rho
    {std::log(0.5), 1.0},       // log length-scale, segment size
    {std::log(0.5), 1.0},       // log length-scale, fan-out
    {std::log(0.25), 1.0},      // log length-scale, message size
    {2 * std::log(0.1), 1.5},   // noise: log variance at mid size, ~10 % CV
    {0.0, 1.5},                 // noise: linear in t
    {0.0, 1.5},                 // noise: quadratic in t
};

// Diagonal of P^T M P, i.e. p_i^T M p_i for each column p_i.
Eigen::VectorXd quadratic_diagonal(const Eigen::MatrixXd& p, const Eigen::MatrixXd& m) {
  Eigen::MatrixXd mp = m * p;
  return (p.array() * mp.array()).colwise().sum().transpose();
}

}  // namespace

Eigen::VectorXd KroneckerGp::default_theta() {
  Eigen::VectorXd t(kGridGpParamCount);
  for (int i = 0; i < kGridGpParamCount; ++i) t[i] = kPriors[i].mean;
  t[kLogitRho] = 0.5;
  return t;
}

Eigen::VectorXd KroneckerGp::lower_bounds() {
  Eigen::VectorXd b(kGridGpParamCount);
  b << -6, -6, std::log(0.02), std::log(0.02), std::log(0.02), -14, -6, -6;
  return b;
}

Eigen::VectorXd KroneckerGp::upper_bounds() {
  Eigen::VectorXd b(kGridGpParamCount);
  b << 4, 6, std::log(20.0), std::log(20.0), std::log(20.0), 1, 6, 6;
  return b;
}

double KroneckerGp::log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) {
  double lp = 0;
  if (gradient) gradient->setZero(kGridGpParamCount);
  for (int i = 0; i < kGridGpParamCount; ++i) {
    double d = (theta[i] - kPriors[i].mean) / kPriors[i].sd;
    lp -= 0.5 * d * d;
    if (gradient) (*gradient)[i] = -d / kPriors[i].sd;
  }
  return lp;
}

Eigen::MatrixXd KroneckerGp::config_covariance(const std::vector<EncodedConfig>& a,
                                               const std::vector<EncodedConfig>& b,
                                               const Eigen::VectorXd& theta) {
  const double signal = std::exp(theta[kLogSignalVar]);
  const double rho = sigmoid(theta[kLogitRho]);
  const double ls_seg = std::exp(theta[kLogLengthSeg]), ls_fan = std::exp(theta[kLogLengthFan]);
  Eigen::MatrixXd k(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) {
      double ds = (a[i].seg - b[j].seg) / ls_seg, df = (a[i].fan - b[j].fan) / ls_fan;
      double m, f;
      matern52(std::sqrt(ds * ds + df * df), &m, &f);
      k(i, j) = signal * (a[i].category == b[j].category ? 1.0 : rho) * m;
    }
  return k;
}

Eigen::MatrixXd KroneckerGp::size_covariance(const Eigen::VectorXd& u, const Eigen::VectorXd& v,
                                             const Eigen::VectorXd& theta) {
  const double ls = std::exp(theta[kLogLengthSize]);
  Eigen::MatrixXd k(u.size(), v.size());
  for (int i = 0; i < u.size(); ++i)
    for (int j = 0; j < v.size(); ++j) {
      double m, f;
      matern52(std::abs(u[i] - v[j]) / ls, &m, &f);
      k(i, j) = m;
    }
  return k;
}

Eigen::VectorXd KroneckerGp::noise_log_variance(const Eigen::VectorXd& theta,
                                                const Eigen::VectorXd& size_coord) {
  Eigen::VectorXd out(size_coord.size());
  for (int s = 0; s < size_coord.size(); ++s) {
    double t = 2.0 * size_coord[s] - 1.0;
    out[s] = std::exp(theta[kNoise0] + theta[kNoise1] * t + theta[kNoise2] * t * t);
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
      data_.repeats.size() != n || data_.scale.size() != m || data_.within_ss.rows() != n ||
      data_.within_ss.cols() != m || data_.within_dof.rows() != n || data_.within_dof.cols() != m)
    throw std::invalid_argument("KroneckerGp: inconsistent data shapes");

  kc_ = config_covariance(data_.configs, data_.configs, theta_);
  ks_ = size_covariance(data_.size_coord, data_.size_coord, theta_);
  sqrt_r_ = data_.repeats.array().sqrt();
  Eigen::VectorXd noise = noise_log_variance(theta_, data_.size_coord);
  tau2_ = noise.array() / data_.scale.array().square();
  inv_tau_ = tau2_.array().rsqrt();

  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ec(sqrt_r_.asDiagonal() * kc_ *
                                                    sqrt_r_.asDiagonal());
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(inv_tau_.asDiagonal() * ks_ *
                                                    inv_tau_.asDiagonal());
  qc_ = ec.eigenvectors();
  qs_ = es.eigenvectors();
  lc_ = ec.eigenvalues().cwiseMax(0.0);
  ls_ = es.eigenvalues().cwiseMax(0.0);
  g_ = ((lc_ * ls_.transpose()).array() + 1.0).inverse().matrix();

  Eigen::MatrixXd y_white = sqrt_r_.asDiagonal() * data_.z * inv_tau_.asDiagonal();
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
  const Eigen::MatrixXd a_ks = alpha_ks_;           // A K_s
  const Eigen::VectorXd g_ls = g_ * ls_;            // sum_j G_ij ls_j
  auto config_term = [&](const Eigen::MatrixXd& dkc) {
    double quad = alpha_.cwiseProduct(dkc * a_ks).sum();
    double trace = quadratic_diagonal(pc_, dkc).dot(g_ls);
    return 0.5 * quad - 0.5 * trace;
  };
  grad[kLogSignalVar] = config_term(kc_);
  grad[kLogitRho] = config_term(d_rho);
  grad[kLogLengthSeg] = config_term(d_seg);
  grad[kLogLengthFan] = config_term(d_fan);

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

  // Noise polynomial.
  Eigen::VectorXd g_col = g_.colwise().sum().transpose();  // sum_i G_ij
  Eigen::MatrixXd qs2 = qs_.array().square().matrix();
  Eigen::VectorXd inv_r = data_.repeats.cwiseInverse();
  Eigen::VectorXd a2_r = (inv_r.transpose() * alpha_.array().square().matrix()).transpose();
  for (int p = 0; p < 3; ++p) {
    Eigen::VectorXd w(m);
    for (int s = 0; s < m; ++s) w[s] = std::pow(2.0 * data_.size_coord[s] - 1.0, p);
    double quad = (a2_r.array() * tau2_.array() * w.array()).sum();
    double trace = g_col.dot(qs2.transpose() * w);
    double rep = 0;
    for (int i = 0; i < n; ++i)
      for (int s = 0; s < m; ++s) {
        double dof = data_.within_dof(i, s);
        if (dof > 0) rep += (0.5 * data_.within_ss(i, s) / tau2_[s] - 0.5 * dof) * w[s];
      }
    grad[kNoise0 + p] = 0.5 * quad - 0.5 * trace + rep;
  }
  return grad;
}

void KroneckerGp::predict(const std::vector<EncodedConfig>& points, Eigen::MatrixXd* mean,
                          Eigen::MatrixXd* variance) const {
  Eigen::MatrixXd kx = config_covariance(points, data_.configs, theta_);
  if (mean) *mean = kx * alpha_ks_;
  if (variance) {
    Eigen::MatrixXd u2 = (kx * pc_).array().square().matrix();
    *variance = (-(u2 * g_ * vs2_.transpose())).array() + std::exp(theta_[kLogSignalVar]);
    *variance = variance->cwiseMax(1e-12);
  }
}

Eigen::VectorXd fit_grid_gp(const GridData& data, const std::vector<Eigen::VectorXd>& starts,
                            int max_iterations) {
  const Eigen::VectorXd lb = KroneckerGp::lower_bounds(), ub = KroneckerGp::upper_bounds();
  auto objective = [&data](const Eigen::VectorXd& theta, Eigen::VectorXd& grad) -> double {
    Eigen::VectorXd prior_grad;
    try {
      KroneckerGp gp(data, theta);
      double value = gp.log_likelihood() + KroneckerGp::log_prior(theta, &prior_grad);
      grad = -(gp.log_likelihood_gradient() + prior_grad);
      if (!std::isfinite(value) || !grad.allFinite()) throw std::runtime_error("non-finite");
      return -value;
    } catch (const std::exception&) {
      grad = Eigen::VectorXd::Zero(theta.size());
      return std::numeric_limits<double>::max();
    }
  };
  LBFGSpp::LBFGSBParam<double> param;
  param.max_iterations = max_iterations;
  param.epsilon = 1e-4;
  param.epsilon_rel = 1e-6;
  param.max_linesearch = 30;

  Eigen::VectorXd best = starts.empty() ? KroneckerGp::default_theta() : starts.front();
  best = best.cwiseMax(lb).cwiseMin(ub);
  Eigen::VectorXd scratch(best.size());
  double best_value = objective(best, scratch);
  for (const auto& start : starts) {
    Eigen::VectorXd x = start.cwiseMax(lb).cwiseMin(ub);
    double fx = 0;
    try {
      LBFGSpp::LBFGSBSolver<double> solver(param);
      solver.minimize(objective, x, fx, lb, ub);
    } catch (const std::exception&) {
      // Line-search failures leave x at the last accepted iterate; score it below.
    }
    fx = objective(x, scratch);
    if (std::isfinite(fx) && fx < best_value) best_value = fx, best = x;
  }
  return best;
}

}  // namespace colltune
