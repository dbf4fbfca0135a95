// Fitting a model's (hyper-)parameters by bounded quasi-Newton descent: L-BFGS-B from LBFGS++,
// with several starts. The one home of the solver for every model of this folder (the grid GP,
// the whole-cluster GP, the per-size GP of the thesis method and the cost model's machine
// coefficients): the solver is a large template, and instantiated once here instead of once per
// model it takes about 14 s of CPU less per translation unit that used it (Release) and 23 s
// under the sanitizers.
#pragma once

#include <LBFGSpp/Param.h>

#include <Eigen/Dense>
#include <functional>
#include <vector>

namespace colltune {

// A function to minimise: its value at x, with its gradient at x written to `gradient` (the
// function sizes it). Where it cannot be evaluated it should return a large finite value and a
// zero gradient, which the line search backs away from. The fit calls it only while it runs and
// keeps neither argument.
using BoundedObjective = std::function<double(const Eigen::VectorXd& x, Eigen::VectorXd& gradient)>;

// The solver's settings; LBFGS++'s own defaults where a caller sets nothing.
using LbfgsbSettings = LBFGSpp::LBFGSBParam<double>;

// `objective` as the solver should see it: where it throws (a std::exception: a model that
// cannot be built at x) or gives a value or gradient that is not finite, the largest finite
// value and a zero gradient, which the line search backs away from.
BoundedObjective guarded(BoundedObjective objective);

// Minimises `objective` from `x` within the box [lower, upper] (LBFGS++ moves x into the box
// first) and leaves the minimiser in `x`. When the solver gives up (a line search that finds
// no decrease, which LBFGS++ reports by throwing), `x` is the last iterate it accepted: still a
// descent from the start, for the caller to score. `lower` and `upper` have x's size.
void minimize_within_bounds(const BoundedObjective& objective, Eigen::VectorXd& x,
                            const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                            const LbfgsbSettings& settings);

// The best of several local fits: scores `initial` as given, then minimises from each of
// `starts` (each moved into the box first) and returns the point of lowest finite objective
// value; on a tie, the earlier one.
Eigen::VectorXd best_of_starts(const BoundedObjective& objective, const Eigen::VectorXd& initial,
                               const std::vector<Eigen::VectorXd>& starts,
                               const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                               const LbfgsbSettings& settings);

// The hyper-parameters of most posterior density of a model class: best_of_starts over the
// negative log posterior -(log likelihood + log prior), guarded, within the class's bounds,
// from the first of `starts` (the class's default without any) as given and from every start.
// `Model` is built as Model(data, theta) (it may throw where theta gives no model) and has
// log_likelihood(), log_likelihood_gradient() and the static log_prior(theta, &gradient),
// default_theta(), lower_bounds() and upper_bounds() (ClusterGp, KroneckerGp). `data` is read
// only while the fit runs.
template <class Model, class Data>
Eigen::VectorXd fit_posterior_mode(const Data& data, const std::vector<Eigen::VectorXd>& starts,
                                   const LbfgsbSettings& settings) {
  const BoundedObjective objective =
      guarded([&data](const Eigen::VectorXd& theta, Eigen::VectorXd& gradient) {
        const Model model(data, theta);
        Eigen::VectorXd prior_gradient;
        const double value = -(model.log_likelihood() + Model::log_prior(theta, &prior_gradient));
        gradient = -(model.log_likelihood_gradient() + prior_gradient);
        return value;
      });
  const Eigen::VectorXd lower = Model::lower_bounds(), upper = Model::upper_bounds();
  const Eigen::VectorXd initial = starts.empty() ? Model::default_theta() : starts.front();
  return best_of_starts(objective, initial.cwiseMax(lower).cwiseMin(upper), starts, lower, upper,
                        settings);
}

}  // namespace colltune
