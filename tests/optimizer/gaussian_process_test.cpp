#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "optimizer/dense_gp.h"
#include "optimizer/kronecker_gp.h"

namespace colltune {
namespace {

TEST(DenseGp, OnePointPosteriorIsClosedForm) {
  // k(x0,x0) = 2, noise 0.5, y = 3; test point with k(x*,x0) = 1, k(x*,x*) = 2.
  Eigen::MatrixXd k(1, 1);
  k << 2.0;
  DenseGp gp(k, 0.5, Eigen::VectorXd::Constant(1, 3.0));
  Eigen::MatrixXd cross(1, 1);
  cross << 1.0;
  Eigen::VectorXd mean, var;
  gp.predict(cross, Eigen::VectorXd::Constant(1, 2.0), &mean, &var);
  EXPECT_NEAR(mean[0], 1.0 / 2.5 * 3.0, 1e-14);
  EXPECT_NEAR(var[0], 2.0 - 1.0 / 2.5, 1e-14);
  EXPECT_NEAR(gp.log_marginal_likelihood(),
              -0.5 * 9.0 / 2.5 - 0.5 * std::log(2.5) - 0.5 * std::log(2 * M_PI), 1e-13);
}

TEST(KroneckerGp, SingleCellPosteriorIsClosedForm) {
  GridData d;
  d.configs = {EncodedConfig{0, 0.3, 0.0}};
  d.size_coord = Eigen::VectorXd::Constant(1, 0.0);
  d.size_log2 = Eigen::VectorXd::Constant(1, 10.0);
  d.z = Eigen::MatrixXd::Constant(1, 1, 1.5);
  d.repeats = Eigen::VectorXd::Constant(1, 2.0);
  d.within_ss = Eigen::MatrixXd::Zero(1, 1);
  d.within_dof = Eigen::MatrixXd::Zero(1, 1);
  d.scale = Eigen::VectorXd::Constant(1, 0.5);
  Eigen::VectorXd theta = KroneckerGp::default_theta();
  KroneckerGp gp(d, theta);
  const double signal = std::exp(theta[kLogSignalVar]);
  const double tau2 = KroneckerGp::noise_log_variance(theta, d.size_coord)[0] / (0.5 * 0.5) / 2.0;
  Eigen::MatrixXd mean, var;
  gp.predict(d.configs, &mean, &var);
  const double prior =
      signal * (1.0 + std::exp(theta[kLogConfigNugget])) * (1.0 + std::exp(theta[kLogSizeNugget]));
  EXPECT_NEAR(mean(0, 0), prior / (prior + tau2) * 1.5, 1e-12);
  EXPECT_NEAR(var(0, 0), prior - prior * prior / (prior + tau2), 1e-12);
}

struct Fixture {
  GridData data;
  Eigen::VectorXd theta;
};

Fixture random_fixture(unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit;
  Fixture f;
  const int n = 6, m = 5;
  for (int j = 0; j < n; ++j)
    f.data.configs.push_back(EncodedConfig{j % 3, unit(gen), unit(gen), j % 2 ? 8.0 + j : 0.0});
  f.data.size_coord = Eigen::VectorXd::LinSpaced(m, 0.0, 1.0);
  f.data.size_log2 = Eigen::VectorXd::LinSpaced(m, 2.0, 20.0);
  f.data.z.resize(n, m);
  for (int j = 0; j < n; ++j)
    for (int s = 0; s < m; ++s) f.data.z(j, s) = normal(gen);
  f.data.repeats.resize(n);
  f.data.repeats << 1, 2, 1, 3, 1, 2;
  f.data.within_ss = Eigen::MatrixXd::Zero(n, m);
  f.data.within_dof = Eigen::MatrixXd::Zero(n, m);
  for (int j = 0; j < n; ++j)
    for (int s = 0; s < m; ++s) {
      f.data.within_dof(j, s) = f.data.repeats[j] - 1;
      if (f.data.repeats[j] > 1) f.data.within_ss(j, s) = 0.3 * unit(gen);
    }
  f.data.scale = Eigen::VectorXd::LinSpaced(m, 0.5, 1.5);
  f.theta = KroneckerGp::default_theta();
  f.theta << 0.3, 0.7, -0.4, -1.1, -1.2, -2.5, 0.15, -3.0, -4.0, -3.5, -1.7;
  return f;
}

TEST(KroneckerGp, EqualsTheDenseGpOnTheFullKroneckerCovariance) {
  Fixture f = random_fixture(7);
  const GridData& d = f.data;
  const int n = d.z.rows(), m = d.z.cols();
  KroneckerGp kron(d, f.theta);

  Eigen::MatrixXd kc = KroneckerGp::config_covariance(d.configs, d.configs, f.theta);
  Eigen::MatrixXd ks = KroneckerGp::size_covariance(d.size_coord, d.size_coord, f.theta);
  Eigen::VectorXd noise = KroneckerGp::noise_log_variance(f.theta, d.size_coord);
  // The prior mean: slope x log2(segments) in standardised units.
  Eigen::MatrixXd prior_mean = f.theta[kSegmentSlope] *
                               KroneckerGp::segment_feature(d.configs, d.size_log2) *
                               d.scale.cwiseInverse().asDiagonal();
  EXPECT_GT(prior_mean.cwiseAbs().maxCoeff(), 0.1);
  Eigen::MatrixXd full(n * m, n * m);
  Eigen::VectorXd noise_diag(n * m), y(n * m);
  for (int j = 0; j < n; ++j)
    for (int s = 0; s < m; ++s) {
      for (int k = 0; k < n; ++k)
        for (int t = 0; t < m; ++t) full(j * m + s, k * m + t) = kc(j, k) * ks(s, t);
      noise_diag[j * m + s] = noise[s] / (d.scale[s] * d.scale[s]) / d.repeats[j];
      y[j * m + s] = d.z(j, s) - prior_mean(j, s);
    }
  DenseGp dense(full, noise_diag, y);

  // Likelihood: the dense one on the row means plus the replicate scatter term.
  double replicate = 0;
  for (int j = 0; j < n; ++j)
    for (int s = 0; s < m; ++s) {
      double dof = d.within_dof(j, s);
      if (dof <= 0) continue;
      double tau2 = noise[s] / (d.scale[s] * d.scale[s]);
      replicate += -0.5 * d.within_ss(j, s) / tau2 - 0.5 * dof * std::log(2 * M_PI * tau2) -
                   0.5 * std::log(dof + 1);
    }
  EXPECT_NEAR(kron.log_likelihood(), dense.log_marginal_likelihood() + replicate, 1e-9);

  // Posterior at new configurations, every size.
  std::vector<EncodedConfig> test = {
      {0, 0.2, 0.9, 0.0}, {2, 0.8, 0.1, 12.0}, {3, 0.5, 0.5, 0.0}, d.configs[1]};
  Eigen::MatrixXd mean, var;
  kron.predict(test, &mean, &var);
  Eigen::MatrixXd test_mean = f.theta[kSegmentSlope] *
                              KroneckerGp::segment_feature(test, d.size_log2) *
                              d.scale.cwiseInverse().asDiagonal();
  Eigen::MatrixXd kx = KroneckerGp::config_covariance(test, d.configs, f.theta);
  for (std::size_t i = 0; i < test.size(); ++i)
    for (int s = 0; s < m; ++s) {
      Eigen::MatrixXd cross(n * m, 1);
      for (int j = 0; j < n; ++j)
        for (int t = 0; t < m; ++t) cross(j * m + t, 0) = kx(i, j) * ks(t, s);
      Eigen::VectorXd dm, dv;
      // k_c(c,c) = sigma_f^2 (1 + eta): the smooth part and the configuration's own effect.
      const double prior =
          std::exp(f.theta[kLogSignalVar]) * (1.0 + std::exp(f.theta[kLogConfigNugget])) * ks(s, s);
      dense.predict(cross, Eigen::VectorXd::Constant(1, prior), &dm, &dv);
      EXPECT_NEAR(mean(i, s), dm[0] + test_mean(i, s), 1e-9);
      EXPECT_NEAR(var(i, s), dv[0], 1e-9);
    }
}

TEST(KroneckerGp, ObservedCellPosteriorAtShareOneIsThePosteriorAtTheInputs) {
  Fixture f = random_fixture(5);
  KroneckerGp gp(f.data, f.theta);
  Eigen::MatrixXd mean, var, cell_mean, cell_var;
  gp.predict(f.data.configs, &mean, &var);
  gp.observed_cell_posterior(1.0, &cell_mean, &cell_var);
  EXPECT_LT((mean - cell_mean).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((var - cell_var).cwiseAbs().maxCoeff(), 1e-8);
  // Noise that is mostly discrepancy: the cell posterior follows the cell's own data.
  gp.observed_cell_posterior(0.05, &cell_mean, &cell_var);
  EXPECT_LT((cell_mean - f.data.z).cwiseAbs().mean(), (mean - f.data.z).cwiseAbs().mean());
}

TEST(KroneckerGp, MeasurementShareFromReplicateScatter) {
  Fixture f = random_fixture(5);
  f.data.within_ss.setZero();  // repeats agree exactly: the noise is discrepancy
  EXPECT_LT(KroneckerGp(f.data, f.theta).measurement_share(), 0.2);
  f.data.within_dof.setZero();  // no repeats: no evidence, share 1
  EXPECT_EQ(KroneckerGp(f.data, f.theta).measurement_share(), 1.0);
}

TEST(KroneckerGp, GradientMatchesFiniteDifferences) {
  Fixture f = random_fixture(11);
  KroneckerGp gp(f.data, f.theta);
  Eigen::VectorXd grad = gp.log_likelihood_gradient();
  for (int i = 0; i < kGridGpParamCount; ++i) {
    const double h = 1e-5;
    Eigen::VectorXd up = f.theta, down = f.theta;
    up[i] += h;
    down[i] -= h;
    double numeric =
        (KroneckerGp(f.data, up).log_likelihood() - KroneckerGp(f.data, down).log_likelihood()) /
        (2 * h);
    EXPECT_NEAR(grad[i], numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << "parameter " << i;
  }
}

TEST(KroneckerGp, FitRecoversTheNoiseLevelFromReplicates) {
  // 12 configurations x 8 sizes, a smooth signal plus noise of sd 0.2 in log units, each
  // configuration run twice: the fitted noise must land near 0.2.
  std::mt19937 gen(3);
  std::normal_distribution<double> noise(0.0, 0.2);
  GridData d;
  const int n = 12, m = 8;
  d.size_coord = Eigen::VectorXd::LinSpaced(m, 0.0, 1.0);
  d.size_log2 = Eigen::VectorXd::LinSpaced(m, 2.0, 20.0);
  d.z.resize(n, m);
  d.repeats = Eigen::VectorXd::Constant(n, 2.0);
  d.within_ss.resize(n, m);
  d.within_dof = Eigen::MatrixXd::Ones(n, m);
  d.scale = Eigen::VectorXd::Ones(m);
  for (int j = 0; j < n; ++j) {
    d.configs.push_back(EncodedConfig{j % 4, (j % 6) / 5.0, 0.0});
    for (int s = 0; s < m; ++s) {
      double truth = std::sin(3.0 * d.size_coord[s] + j) * 1.5;
      double a = truth + noise(gen), b = truth + noise(gen);
      d.z(j, s) = 0.5 * (a + b);
      d.within_ss(j, s) = 0.5 * (a - b) * (a - b);
    }
  }
  Eigen::VectorXd theta = fit_grid_gp(d, {KroneckerGp::default_theta()});
  Eigen::VectorXd sd = KroneckerGp::noise_log_variance(theta, d.size_coord).cwiseSqrt();
  EXPECT_GT(sd.mean(), 0.14);
  EXPECT_LT(sd.mean(), 0.28);
  // And the fit improved the objective over its start.
  Eigen::VectorXd start = KroneckerGp::default_theta();
  EXPECT_GT(KroneckerGp(d, theta).log_likelihood() + KroneckerGp::log_prior(theta, nullptr),
            KroneckerGp(d, start).log_likelihood() + KroneckerGp::log_prior(start, nullptr));
}

// A configuration faster than its neighbours over a band of sizes (a chain at one fan-out, a
// tree at one segment size) is a feature of the landscape, not noise: the configuration's own
// effect (kLogConfigNugget) lets the posterior keep it. With that term switched off (the model
// before it: only the smooth kernel and per-cell noise) the same hyper-parameters shrink the
// dip towards the neighbours. An untried configuration next to measured ones keeps variance of
// its own.
TEST(KroneckerGp, KeepsAConfigurationsOwnEffect) {
  std::mt19937 gen(5);
  std::normal_distribution<double> noise(0.0, 0.15);
  GridData d;
  const int n = 16, m = 10, special = 7;
  d.size_coord = Eigen::VectorXd::LinSpaced(m, 0.0, 1.0);
  d.size_log2 = Eigen::VectorXd::LinSpaced(m, 2.0, 20.0);
  d.z.resize(n, m);
  d.repeats = Eigen::VectorXd::Ones(n);
  d.within_ss = Eigen::MatrixXd::Zero(n, m);
  d.within_dof = Eigen::MatrixXd::Zero(n, m);
  d.scale = Eigen::VectorXd::Ones(m);
  for (int j = 0; j < n; ++j) {
    // One algorithm, 16 segment sizes (seg 0..1), a smooth landscape over (segment, size).
    d.configs.push_back(EncodedConfig{0, j / 15.0, 0.0});
    for (int s = 0; s < m; ++s) {
      double truth = std::sin(2.0 * d.configs[j].seg + 1.5 * d.size_coord[s]);
      if (j == special && s >= 3 && s <= 7) truth -= 1.2;  // the narrow optimum
      d.z(j, s) = truth + noise(gen);
    }
  }
  auto kept = [&](const Eigen::VectorXd& theta) {
    KroneckerGp gp(d, theta);
    Eigen::MatrixXd mean, var;
    gp.observed_cell_posterior(1.0, &mean, &var);
    // Mean over the band of the posterior dip relative to the two neighbours' posteriors, as a
    // share of the observed dip.
    double post = 0, seen = 0;
    for (int s = 3; s <= 7; ++s) {
      post += 0.5 * (mean(special - 1, s) + mean(special + 1, s)) - mean(special, s);
      seen += 0.5 * (d.z(special - 1, s) + d.z(special + 1, s)) - d.z(special, s);
    }
    return post / seen;
  };
  Eigen::VectorXd with = fit_grid_gp(d, {KroneckerGp::default_theta()});
  const Eigen::VectorXd lb = KroneckerGp::lower_bounds();
  // The same hyper-parameters without the term (the model before it).
  Eigen::VectorXd without = with;
  without[kLogConfigNugget] = lb[kLogConfigNugget];
  EXPECT_GT(with[kLogConfigNugget], lb[kLogConfigNugget] + 1.0);
  // Measured: the fit gives eta = exp(-2.3); 57 % of the dip is kept with the term, 2 % without.
  EXPECT_GT(kept(with), 0.4);
  EXPECT_LT(kept(without), 0.15);

  // An untried segment size between two measured ones: the term leaves it variance of its own.
  std::vector<EncodedConfig> between = {EncodedConfig{0, 7.5 / 15.0, 0.0}};
  Eigen::MatrixXd mean, var;
  KroneckerGp(d, with).predict(between, &mean, &var);
  const double own = std::exp(with[kLogSignalVar] + with[kLogConfigNugget]);
  EXPECT_GT(var.minCoeff(), own);
}

}  // namespace
}  // namespace colltune
