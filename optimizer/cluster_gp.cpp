#include "optimizer/cluster_gp.h"

#include <cmath>
#include <iterator>
#include <stdexcept>

#include "optimizer/hyperparameter_fit.h"
#include "optimizer/kernel_math.h"
#include "optimizer/symmetric_eigen.h"

namespace colltune {
namespace {

// Standardised data; configuration inputs in [0, 1]; comm size in doublings.
const GaussianPrior kClusterPriors[] = {
    {0.0, 1.5},                // log signal variance (configuration-specific part)
    {0.0, 2.0},                // logit rho
    {std::log(0.5), 1.0},      // log length-scale, segment size
    {std::log(0.5), 1.0},      // log length-scale, fan-out
    {std::log(3.0), 1.0},      // log length-scale, comm size (doublings)
    {std::log(0.3), 1.5},      // log shared variance
    {std::log(0.25), 1.0},     // log length-scale, message size
    {std::log(0.05), 1.5},     // log size nugget
    {2 * std::log(0.1), 2.0},  // log noise variance
    {std::log(0.1), 1.5},      // log comm-size nugget
    {std::log(0.02), 1.5},     // log shared slope variance
};
static_assert(std::size(kClusterPriors) == kClusterGpParamCount, "one prior per hyper-parameter");
constexpr int kParamsBeforeSlopes = kClusterLogSharedSlopeVar;

// K_row's hyper-parameters in natural units (variances, correlation, length-scales), in the
// order of ClusterGpParam: one unpacking for the kernel and its gradient.
struct RowKernel {
  double signal, shared, rho, ls_seg, ls_fan, ls_comm, nugget, shared_slope;
  static RowKernel from(const Eigen::VectorXd& theta) {
    return {std::exp(theta[kClusterLogSignalVar]),  std::exp(theta[kClusterLogSharedVar]),
            sigmoid(theta[kClusterLogitRho]),       std::exp(theta[kClusterLogLengthSeg]),
            std::exp(theta[kClusterLogLengthFan]),  std::exp(theta[kClusterLogLengthComm]),
            std::exp(theta[kClusterLogCommNugget]), std::exp(theta[kClusterLogSharedSlopeVar])};
  }
};

}  // namespace

Eigen::VectorXd ClusterGp::default_theta() {
  Eigen::VectorXd t = prior_means(kClusterPriors);
  t[kClusterLogitRho] = 0.5;
  return t;
}

Eigen::VectorXd ClusterGp::lower_bounds() {
  Eigen::VectorXd b(kClusterGpParamCount);
  b << -6, -6, std::log(0.02), std::log(0.02), std::log(0.3), -9, std::log(0.02), -9, -12, -9, -9;
  return b;
}

Eigen::VectorXd ClusterGp::upper_bounds() {
  Eigen::VectorXd b(kClusterGpParamCount);
  b << 4, 6, std::log(20.0), std::log(20.0), std::log(30.0), 3, std::log(20.0), 2, 0, 2, 2;
  return b;
}

double ClusterGp::log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) {
  return gaussian_log_prior(kClusterPriors, theta, gradient);
}

Eigen::VectorXd upgrade_cluster_theta(const std::vector<double>& saved) {
  const int n = static_cast<int>(saved.size());
  if (n != kClusterGpParamCount && n != kParamsBeforeSlopes)
    throw std::invalid_argument("bo-cluster: hyper-parameters of the wrong length");
  Eigen::VectorXd t = ClusterGp::default_theta();
  for (int i = 0; i < n; ++i) t[i] = saved[i];
  return t;
}

Eigen::MatrixXd ClusterGp::row_covariance(const std::vector<ClusterRow>& a,
                                          const std::vector<ClusterRow>& b,
                                          const Eigen::VectorXd& theta, double center) {
  const auto [signal, shared, rho, ls_seg, ls_fan, ls_comm, nugget, shared_slope] =
      RowKernel::from(theta);
  Eigen::MatrixXd k(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) {
      const EncodedConfig &x = a[i].config, &y = b[j].config;
      double ds = (x.seg - y.seg) / ls_seg, df = (x.fan - y.fan) / ls_fan;
      double kc = (x.category == y.category ? 1.0 : rho) * matern52(std::sqrt(ds * ds + df * df));
      double kp = matern52(std::abs(a[i].log2_comm - b[j].log2_comm) / ls_comm);
      double own = a[i].log2_comm == b[j].log2_comm ? nugget : 0.0;
      double lin = (a[i].log2_comm - center) * (b[j].log2_comm - center);
      k(i, j) = kp * (shared + signal * kc) + own * signal * kc + lin * shared_slope;
    }
  return k;
}

ClusterGp::ClusterGp(ClusterGridData data, Eigen::VectorXd theta)
    : data_(std::move(data)), theta_(std::move(theta)) {
  const int n = static_cast<int>(data_.rows.size());
  const int m = static_cast<int>(data_.size_coord.size());
  if (n == 0 || m == 0 || theta_.size() != kClusterGpParamCount || data_.log_latency.rows() != n ||
      data_.log_latency.cols() != m || data_.repeats.size() != n)
    throw std::invalid_argument("ClusterGp: inconsistent data shapes");

  for (const auto& r : data_.rows)
    if (r.offset.size() != 0 && r.offset.size() != m)
      throw std::invalid_argument("ClusterGp: an offset of the wrong length");
  // The known part of the rows' log latency: the trend and the kernel fit what is left.
  const Eigen::MatrixXd y = data_.log_latency - offsets(data_.rows);
  // Prior mean: per message size, least squares line in log2 P (weighted by repeats).
  center_.resize(m);
  slope_.setZero(m);
  scale_.resize(m);
  double sw = 0, sx = 0, sxx = 0;
  for (int i = 0; i < n; ++i) {
    double w = data_.repeats[i], x = data_.rows[i].log2_comm;
    sw += w, sx += w * x, sxx += w * x * x;
  }
  const double xbar = sx / sw, var_x = sxx / sw - xbar * xbar;
  center_log2_ = xbar;
  for (int s = 0; s < m; ++s) {
    double sy = 0, sxy = 0;
    for (int i = 0; i < n; ++i) {
      double w = data_.repeats[i], x = data_.rows[i].log2_comm, v = y(i, s);
      sy += w * v, sxy += w * x * v;
    }
    double ybar = sy / sw;
    slope_[s] = var_x > 1e-9 ? (sxy / sw - xbar * ybar) / var_x : 0.0;
    center_[s] = ybar - slope_[s] * xbar;
    double ss = 0;
    for (int i = 0; i < n; ++i) {
      double r = y(i, s) - center_[s] - slope_[s] * data_.rows[i].log2_comm;
      ss += data_.repeats[i] * r * r;
    }
    scale_[s] = std::max(std::sqrt(ss / sw), 0.02);
  }
  Eigen::MatrixXd z = (data_.log_latency - trend(data_.rows)) * scale_.cwiseInverse().asDiagonal();

  const double tau2 = std::exp(theta_[kClusterLogNoiseVar]);
  Eigen::MatrixXd kr = row_covariance(data_.rows, data_.rows, theta_, center_log2_);
  const double ls_size = std::exp(theta_[kClusterLogLengthSize]);
  const double nugget = std::exp(theta_[kClusterLogSizeNugget]);
  ks_.resize(m, m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      ks_(i, j) = matern52(std::abs(data_.size_coord[i] - data_.size_coord[j]) / ls_size) +
                  (i == j ? nugget : 0.0);
  sqrt_r_ = data_.repeats.array().sqrt();
  SymmetricEigen er = symmetric_eigen(sqrt_r_.asDiagonal() * kr * sqrt_r_.asDiagonal());
  SymmetricEigen es = symmetric_eigen(ks_);
  qr_ = std::move(er.vectors);
  qs_ = std::move(es.vectors);
  lr_ = er.values.cwiseMax(0.0);
  ls_ = es.values.cwiseMax(0.0);
  g_ = ((lr_ * ls_.transpose()).array() + tau2).inverse().matrix();
  Eigen::MatrixXd y_rot = qr_.transpose() * sqrt_r_.asDiagonal() * z * qs_;
  b_ = y_rot.cwiseProduct(g_);
  alpha_ = sqrt_r_.asDiagonal() * qr_ * b_ * qs_.transpose();
  alpha_ks_ = alpha_ * ks_;
  vs2_ = (qs_.transpose() * ks_).array().square().matrix();
  const double log_det = -g_.array().log().sum() - m * data_.repeats.array().log().sum();
  // The likelihood of the log latencies themselves: standardisation is a change of units.
  log_likelihood_ = -0.5 * y_rot.cwiseProduct(b_).sum() - 0.5 * log_det - 0.5 * n * m * kLog2Pi -
                    n * scale_.array().log().sum();
}

// In the whitened space (rows scaled by sqrt(r)) the data's covariance is
// C = (S K_row S) (x) K_s + tau^2 I, S = diag(sqrt r), and for a parameter p
//   d log L / dp = 1/2 a^T (dC/dp) a - 1/2 tr(C^-1 dC/dp),   a = C^-1 y.
// For a row parameter dC = (S dK_row S) (x) K_s, and both terms are sums of dK_row times one
// n x n matrix: the data term alpha K_s alpha^T (alpha = S a arranged n x m), the trace term
// S Q_r diag(sum_j g_ij l_s,j) Q_r^T S, from the eigen-terms the constructor already has. So
// every row parameter costs one pass over the n^2 pairs, after one O(n^3) product; the message
// -size parameters likewise with m x m matrices, and the noise from g_ and b_ directly.
Eigen::VectorXd ClusterGp::log_likelihood_gradient() const {
  const int n = static_cast<int>(data_.rows.size());
  const int m = static_cast<int>(data_.size_coord.size());
  Eigen::VectorXd grad = Eigen::VectorXd::Zero(kClusterGpParamCount);

  const Eigen::MatrixXd pc = sqrt_r_.asDiagonal() * qr_;
  const Eigen::MatrixXd row_weight =
      alpha_ks_ * alpha_.transpose() - pc * (g_ * ls_).asDiagonal() * pc.transpose();
  const auto [signal, shared, rho, ls_seg, ls_fan, ls_comm, nugget, shared_slope] =
      RowKernel::from(theta_);
  double d_signal = 0, d_rho = 0, d_seg = 0, d_fan = 0, d_comm = 0, d_shared = 0, d_nugget = 0,
         d_slope = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double w = row_weight(i, j);
      const ClusterRow &a = data_.rows[i], &b = data_.rows[j];
      const double ds = (a.config.seg - b.config.seg) / ls_seg;
      const double df = (a.config.fan - b.config.fan) / ls_fan;
      double m52c, fc;
      matern52(std::sqrt(ds * ds + df * df), &m52c, &fc);
      const bool same_alg = a.config.category == b.config.category;
      const double cat = same_alg ? 1.0 : rho;
      const double kc = cat * m52c;
      const double u = std::abs(a.log2_comm - b.log2_comm) / ls_comm;
      double kp, fp;
      matern52(u, &kp, &fp);
      const double own = a.log2_comm == b.log2_comm ? nugget : 0.0;
      const double lin = (a.log2_comm - center_log2_) * (b.log2_comm - center_log2_);
      const double config_weight = w * signal * (kp + own);  // times dk_c
      d_signal += config_weight * kc;
      if (!same_alg) d_rho += config_weight * rho * (1.0 - rho) * m52c;
      d_seg += config_weight * cat * fc * ds * ds;
      d_fan += config_weight * cat * fc * df * df;
      d_comm += w * fp * u * u * (shared + signal * kc);
      d_shared += w * kp * shared;
      d_nugget += w * own * signal * kc;
      d_slope += w * lin * shared_slope;
    }
  grad[kClusterLogSignalVar] = 0.5 * d_signal;
  grad[kClusterLogitRho] = 0.5 * d_rho;
  grad[kClusterLogLengthSeg] = 0.5 * d_seg;
  grad[kClusterLogLengthFan] = 0.5 * d_fan;
  grad[kClusterLogLengthComm] = 0.5 * d_comm;
  grad[kClusterLogSharedVar] = 0.5 * d_shared;
  grad[kClusterLogCommNugget] = 0.5 * d_nugget;
  grad[kClusterLogSharedSlopeVar] = 0.5 * d_slope;

  // Message-size parameters: dC = (S K_row S) (x) dK_s; the data term alpha^T K_row alpha, in
  // the eigenbasis Q_s b^T diag(l_r) b Q_s^T, the trace term Q_s diag(sum_i g_ij l_r,i) Q_s^T.
  Eigen::MatrixXd inner = b_.transpose() * lr_.asDiagonal() * b_;
  inner.diagonal() -= g_.transpose() * lr_;
  const Eigen::MatrixXd size_weight = qs_ * inner * qs_.transpose();
  const double ls_size = std::exp(theta_[kClusterLogLengthSize]);
  double d_size = 0;
  for (int s = 0; s < m; ++s)
    for (int t = 0; t < m; ++t) {
      const double u = std::abs(data_.size_coord[s] - data_.size_coord[t]) / ls_size;
      double k, f;
      matern52(u, &k, &f);
      d_size += size_weight(s, t) * f * u * u;
    }
  grad[kClusterLogLengthSize] = 0.5 * d_size;
  grad[kClusterLogSizeNugget] = 0.5 * std::exp(theta_[kClusterLogSizeNugget]) * size_weight.trace();
  // Noise: dC = tau^2 I.
  const double tau2 = std::exp(theta_[kClusterLogNoiseVar]);
  grad[kClusterLogNoiseVar] = 0.5 * tau2 * (b_.squaredNorm() - g_.sum());
  return grad;
}

Eigen::MatrixXd ClusterGp::offsets(const std::vector<ClusterRow>& points) const {
  const int m = static_cast<int>(data_.size_coord.size());
  Eigen::MatrixXd o = Eigen::MatrixXd::Zero(static_cast<int>(points.size()), m);
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].offset.size() == 0) continue;
    if (points[i].offset.size() != m)
      throw std::invalid_argument("ClusterGp: an offset of the wrong length");
    o.row(static_cast<int>(i)) = points[i].offset.transpose();
  }
  return o;
}

Eigen::MatrixXd ClusterGp::trend(const std::vector<ClusterRow>& points) const {
  Eigen::MatrixXd t = offsets(points);
  for (std::size_t i = 0; i < points.size(); ++i)
    t.row(i) += (center_ + slope_ * points[i].log2_comm).transpose();
  return t;
}

void ClusterGp::predict(const std::vector<ClusterRow>& points, Eigen::MatrixXd* mean,
                        Eigen::MatrixXd* variance) const {
  Eigen::MatrixXd kx = row_covariance(data_.rows, points, theta_, center_log2_);  // n x T
  if (mean) *mean = trend(points) + (kx.transpose() * alpha_ks_) * scale_.asDiagonal();
  if (variance) {
    Eigen::VectorXd prior_row(points.size());  // grows with (log2 P - x0)^2
    for (std::size_t t = 0; t < points.size(); ++t)
      prior_row[t] = row_covariance({points[t]}, {points[t]}, theta_, center_log2_)(0, 0);
    Eigen::MatrixXd pc = (qr_.transpose() * sqrt_r_.asDiagonal() * kx).array().square().matrix();
    Eigen::MatrixXd reduction = pc.transpose() * g_ * vs2_;  // T x m
    Eigen::MatrixXd prior = prior_row * ks_.diagonal().transpose();
    *variance =
        ((prior - reduction).cwiseMax(1e-10)) * scale_.array().square().matrix().asDiagonal();
  }
}

void ClusterGp::predict_joint(const ClusterRow& point, Eigen::VectorXd* mean,
                              Eigen::MatrixXd* covariance) const {
  Eigen::MatrixXd row_mean;
  predict({point}, &row_mean, nullptr);
  *mean = row_mean.row(0).transpose();
  // Prior k_row(x, x) K_s minus the reduction sum_j w_j a_j a_j^T, a_j = row j of Q_s^T K_s and
  // w_j = sum_i pc_i^2 g_ij (the same eigen-terms as predict's variance, kept as outer products).
  const Eigen::MatrixXd kx = row_covariance(data_.rows, {point}, theta_, center_log2_);
  const Eigen::VectorXd pc2 =
      (qr_.transpose() * sqrt_r_.asDiagonal() * kx).col(0).array().square().matrix();
  const Eigen::VectorXd w = g_.transpose() * pc2;   // m
  const Eigen::MatrixXd a = qs_.transpose() * ks_;  // m x m
  const double prior_row = row_covariance({point}, {point}, theta_, center_log2_)(0, 0);
  Eigen::MatrixXd cov = prior_row * ks_ - a.transpose() * w.asDiagonal() * a;
  for (int s = 0; s < cov.rows(); ++s) cov(s, s) = std::max(cov(s, s), 1e-10);
  *covariance = scale_.asDiagonal() * cov * scale_.asDiagonal();
}

Eigen::VectorXd ClusterGp::noise_sd() const {
  return std::exp(0.5 * theta_[kClusterLogNoiseVar]) * scale_;
}

Eigen::VectorXd fit_cluster_gp(const ClusterGridData& data,
                               const std::vector<Eigen::VectorXd>& starts, int max_iterations) {
  LbfgsbSettings settings;
  settings.max_iterations = max_iterations;
  settings.epsilon = 1e-3;
  settings.epsilon_rel = 1e-5;
  settings.max_linesearch = 20;
  return fit_posterior_mode<ClusterGp>(data, starts, settings);
}

}  // namespace colltune
