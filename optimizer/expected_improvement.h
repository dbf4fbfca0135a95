// Expected Improvement for minimisation, in a form that stays finite far from the incumbent.
//
// For a Gaussian posterior N(mu, sigma^2) and incumbent f*, with z = (f* - mu) / sigma:
//   EI = sigma * h(z),   h(z) = z * Phi(z) + phi(z)
// log_expected_improvement returns log(EI); it is finite for every z (where EI itself
// underflows to 0 for z below about -38), so acquisitions can be compared and summed in log
// space (log-EI, Ament et al. 2023).
#pragma once

namespace colltune {

double normal_pdf(double z);
double normal_cdf(double z);

// log h(z) with h(z) = z * Phi(z) + phi(z) > 0; accurate to a few ulps of relative error.
double log_h(double z);

// log EI for minimisation; sigma must be > 0.
double log_expected_improvement(double mean, double sigma, double incumbent);

// EI itself (may underflow to 0).
double expected_improvement(double mean, double sigma, double incumbent);

// log(exp(a) + exp(b)) without overflow; -inf is the neutral element.
double log_add_exp(double a, double b);

}  // namespace colltune
