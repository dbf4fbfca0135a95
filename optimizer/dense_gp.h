// Exact Gaussian-process regression with a dense Cholesky factorisation, for small training
// sets (the per-size baseline, and as the reference the Kronecker GP is tested against).
#pragma once

#include <Eigen/Dense>

namespace colltune {

class DenseGp {
 public:
  // k_train: n x n prior covariance of the training inputs; noise_variance added on the
  // diagonal (a scalar, or one value per point); y: n targets. Throws std::runtime_error when
  // the covariance is not positive definite.
  DenseGp(const Eigen::MatrixXd& k_train, double noise_variance, const Eigen::VectorXd& y);
  DenseGp(const Eigen::MatrixXd& k_train, const Eigen::VectorXd& noise_variances,
          const Eigen::VectorXd& y);

  // k_cross: n x M covariances between training and test inputs; k_diag: M prior variances.
  void predict(const Eigen::MatrixXd& k_cross, const Eigen::VectorXd& k_diag, Eigen::VectorXd* mean,
               Eigen::VectorXd* variance) const;

  double log_marginal_likelihood() const { return log_marginal_likelihood_; }
  // d log p(y) / d theta = 0.5 tr((alpha alpha^T - K^-1) dK/dtheta), for a given dK.
  double log_marginal_likelihood_derivative(const Eigen::MatrixXd& dk) const;
  const Eigen::VectorXd& alpha() const { return alpha_; }

 private:
  void factorize(Eigen::MatrixXd k, const Eigen::VectorXd& y);

  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd alpha_;
  mutable bool inner_ready_ = false;
  mutable Eigen::MatrixXd inner_cache_;
  double log_marginal_likelihood_ = 0;
};

}  // namespace colltune
