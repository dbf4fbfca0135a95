#include "optimizer/dense_gp.h"

#include <cmath>
#include <stdexcept>

namespace colltune {

DenseGp::DenseGp(const Eigen::MatrixXd& k_train, double noise_variance, const Eigen::VectorXd& y) {
  Eigen::MatrixXd k = k_train;
  k.diagonal().array() += noise_variance;
  factorize(std::move(k), y);
}

DenseGp::DenseGp(const Eigen::MatrixXd& k_train, const Eigen::VectorXd& noise_variances,
                 const Eigen::VectorXd& y) {
  Eigen::MatrixXd k = k_train;
  k.diagonal() += noise_variances;
  factorize(std::move(k), y);
}

void DenseGp::factorize(Eigen::MatrixXd k, const Eigen::VectorXd& y) {
  llt_.compute(k);
  if (llt_.info() != Eigen::Success) throw std::runtime_error("DenseGp: covariance not PD");
  alpha_ = llt_.solve(y);
  const Eigen::MatrixXd& l = llt_.matrixLLT();
  double log_det = 2.0 * l.diagonal().array().log().sum();
  log_marginal_likelihood_ =
      -0.5 * y.dot(alpha_) - 0.5 * log_det - 0.5 * y.size() * std::log(2.0 * M_PI);
}

void DenseGp::predict(const Eigen::MatrixXd& k_cross, const Eigen::VectorXd& k_diag,
                      Eigen::VectorXd* mean, Eigen::VectorXd* variance) const {
  if (mean) *mean = k_cross.transpose() * alpha_;
  if (variance) {
    Eigen::MatrixXd v = llt_.matrixL().solve(k_cross);
    *variance = (k_diag - v.colwise().squaredNorm().transpose()).cwiseMax(1e-12);
  }
}

double DenseGp::log_marginal_likelihood_derivative(const Eigen::MatrixXd& dk) const {
  if (!inner_ready_) {
    const int n = static_cast<int>(alpha_.size());
    inner_cache_ = alpha_ * alpha_.transpose() - llt_.solve(Eigen::MatrixXd::Identity(n, n));
    inner_ready_ = true;
  }
  return 0.5 * inner_cache_.cwiseProduct(dk).sum();
}

}  // namespace colltune
