// The eigendecomposition of a symmetric matrix, which the Kronecker-structured Gaussian
// processes (optimizer/kronecker_gp.h, optimizer/cluster_gp.h) factorise their covariances by.
// Eigen's SelfAdjointEigenSolver is a large template; instantiated once here instead of in each
// model it takes about 9 s of CPU less per translation unit that used it (Release) and 18 s
// under the sanitizers.
#pragma once

#include <Eigen/Dense>

namespace colltune {

// A = vectors * values.asDiagonal() * vectors^T: eigenvalues in increasing order, the
// orthonormal eigenvectors as the columns of `vectors`, in the same order.
struct SymmetricEigen {
  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;
};

// The decomposition of the symmetric matrix `a` (its lower triangle is what is read), by
// Eigen's SelfAdjointEigenSolver.
SymmetricEigen symmetric_eigen(const Eigen::MatrixXd& a);

}  // namespace colltune
