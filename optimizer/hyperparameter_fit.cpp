#include "optimizer/hyperparameter_fit.h"

#include <LBFGSB.h>

#include <cmath>
#include <exception>
#include <limits>
#include <utility>

namespace colltune {

BoundedObjective guarded(BoundedObjective objective) {
  return [f = std::move(objective)](const Eigen::VectorXd& x, Eigen::VectorXd& gradient) {
    try {
      const double value = f(x, gradient);
      if (std::isfinite(value) && gradient.allFinite()) return value;
    } catch (const std::exception&) {
    }
    gradient = Eigen::VectorXd::Zero(x.size());
    return std::numeric_limits<double>::max();
  };
}

void minimize_within_bounds(const BoundedObjective& objective, Eigen::VectorXd& x,
                            const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                            const LbfgsbSettings& settings) {
  double fx = 0;
  try {
    LBFGSpp::LBFGSBSolver<double> solver(settings);
    solver.minimize(objective, x, fx, lower, upper);
  } catch (const std::exception&) {
    // Line-search failures leave x at the last accepted iterate.
  }
}

Eigen::VectorXd best_of_starts(const BoundedObjective& objective, const Eigen::VectorXd& initial,
                               const std::vector<Eigen::VectorXd>& starts,
                               const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                               const LbfgsbSettings& settings) {
  Eigen::VectorXd best = initial;
  Eigen::VectorXd scratch;
  double best_value = objective(best, scratch);
  for (const auto& start : starts) {
    Eigen::VectorXd x = start.cwiseMax(lower).cwiseMin(upper);
    minimize_within_bounds(objective, x, lower, upper, settings);
    const double fx = objective(x, scratch);
    if (std::isfinite(fx) && fx < best_value) best_value = fx, best = x;
  }
  return best;
}

}  // namespace colltune
