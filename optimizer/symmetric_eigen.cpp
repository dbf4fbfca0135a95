#include "optimizer/symmetric_eigen.h"

namespace colltune {

SymmetricEigen symmetric_eigen(const Eigen::MatrixXd& a) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(a);
  return {solver.eigenvalues(), solver.eigenvectors()};
}

}  // namespace colltune
