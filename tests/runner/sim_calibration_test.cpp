// Comparing a profile with measurements and fitting it, on data the simulator itself produced
// (so the right answer is known).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "runner/sim/calibration.h"

namespace colltune::sim {
namespace {

// A landscape CSV of noise-free simulated latencies (two "repeats" each).
std::string landscape(const SimModel& model) {
  std::ostringstream csv;
  csv << "collective,comm_size,algorithm,segsize,fanout,msg_size,latency_us\n";
  const std::vector<std::pair<Collective, std::vector<TuningConfig>>> plan = {
      {Collective::bcast, {{1, 0, 0}, {3, 4096, 0}, {6, 0, 0}, {8, 0, 0}}},
      {Collective::allreduce, {{1, 0, 0}, {3, 0, 0}, {4, 0, 0}}}};
  for (const auto& [coll, configs] : plan)
    for (const auto& c : configs)
      for (std::int64_t size : {4, 256, 16384, 262144})
        for (int repeat = 0; repeat < 2; ++repeat)
          csv << name(coll) << ",4," << c.algorithm << "," << c.segsize << "," << c.fanout << ","
              << size << "," << model.latency_us(coll, 4, c, size) << "\n";
  return csv.str();
}

TEST(Calibration, AProfileAgreesWithItself) {
  const SimModel model = SimModel::load("local");
  const auto data = ReplayDataset::parse_csv(landscape(model));
  const ComparisonReport r = compare(model, data);
  EXPECT_EQ(r.cells.size(), 7u * 4u);
  EXPECT_EQ(r.instances.size(), 8u);
  EXPECT_NEAR(r.median_abs_log2_ratio, 0, 1e-6);
  EXPECT_NEAR(r.geometric_mean_ratio, 1, 1e-6);
  EXPECT_DOUBLE_EQ(r.same_best_fraction, 1.0);
  EXPECT_DOUBLE_EQ(r.median_regret, 0.0);
  EXPECT_GT(r.mean_spearman, 0.95);
}

TEST(Calibration, AnotherProfileRanksDifferently) {
  const SimModel local = SimModel::load("local");
  const auto data = ReplayDataset::parse_csv(landscape(local));
  const ComparisonReport r = compare(SimModel::load("ethernet-pair"), data);
  EXPECT_GT(r.median_abs_log2_ratio, 0.1);
}

TEST(Calibration, FitRecoversAPerturbedParameter) {
  const SimModel truth = SimModel::load("local");
  const auto data = ReplayDataset::parse_csv(landscape(truth));
  ClusterProfile start = truth.profile();
  const double true_bw = start.intra_node.pieces.back().bandwidth_gbps;
  const double true_latency = start.intra_node.pieces.front().latency_us;
  start.intra_node.pieces.back().bandwidth_gbps = true_bw * 2.5;
  start.intra_node.pieces.front().latency_us = true_latency * 3;
  FitOptions options;
  options.parameters = {"/intra_node/pieces/1/bandwidth_gbps", "/intra_node/pieces/0/latency_us"};
  options.max_evaluations = 200;
  const FitResult fit = fit_profile(start, data, options);
  EXPECT_GT(fit.initial_loss, 0.05);
  EXPECT_LT(fit.final_loss, 1e-4);
  EXPECT_NEAR(fit.profile.intra_node.pieces.back().bandwidth_gbps / true_bw, 1, 0.05);
  EXPECT_NEAR(fit.profile.intra_node.pieces.front().latency_us / true_latency, 1, 0.1);
  EXPECT_EQ(fit.values.size(), 2u);
}

TEST(Calibration, ParametersAreJsonPointers) {
  const auto params = fittable_parameters(load_profile("pise"));
  EXPECT_NE(std::find(params.begin(), params.end(), "/inter_node/contention"), params.end());
  EXPECT_NE(std::find(params.begin(), params.end(), "/reduce_ns_per_byte"), params.end());
  const auto local = fittable_parameters(load_profile("local"));
  EXPECT_EQ(std::count_if(local.begin(), local.end(),
                          [](const std::string& p) { return p.starts_with("/inter_node"); }),
            0);
  FitOptions bad;
  bad.parameters = {"/nodes/x"};
  const auto data = ReplayDataset::parse_csv(landscape(SimModel::load("local")));
  EXPECT_THROW(fit_profile(load_profile("local"), data, bad), std::invalid_argument);
}

}  // namespace
}  // namespace colltune::sim
