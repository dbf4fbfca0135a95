#include "campaign/final_choice.h"

#include <gtest/gtest.h>

#include <cmath>

namespace colltune {
namespace {

TEST(FinalChoice, PicksLowestMedianWhenClearlyBetter) {
  std::map<TuningConfig, std::vector<double>> s = {
      {TuningConfig{}, {100, 101, 99}},
      {TuningConfig{6, 0, 0}, {50, 51, 300}},  // one outlier must not matter
  };
  auto p = choose_for_size(1024, s);
  EXPECT_EQ(p.best, (TuningConfig{6, 0, 0}));
  EXPECT_DOUBLE_EQ(p.best_us, 51);
  EXPECT_DOUBLE_EQ(p.default_us, 100);
  EXPECT_FALSE(p.default_within_noise);
}

TEST(FinalChoice, TieWithinNoiseGoesToDefaultThenSimpler) {
  std::map<TuningConfig, std::vector<double>> s = {
      {TuningConfig{}, {100, 104, 96}},
      {TuningConfig{6, 0, 0}, {98, 99, 97}},
  };
  auto p = choose_for_size(8, s);
  EXPECT_TRUE(p.best.is_default());
  EXPECT_TRUE(p.default_within_noise);

  std::map<TuningConfig, std::vector<double>> t = {
      {TuningConfig{2, 8192, 4}, {50, 50.5, 49.5}},
      {TuningConfig{6, 0, 0}, {50.4, 50.6, 50.2}},
      {TuningConfig{}, {90, 91, 92}},
  };
  auto q = choose_for_size(8, t);
  EXPECT_EQ(q.best, (TuningConfig{6, 0, 0}));
}

TEST(FinalChoice, EmptySamplesGiveNoPick) {
  auto p = choose_for_size(8, {});
  EXPECT_EQ(p.samples, 0);
  EXPECT_TRUE(std::isnan(p.default_us));
}

TEST(FinalChoice, Statistics) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_NEAR(relative_noise({90, 100, 110}), 0.14826, 1e-9);
  EXPECT_NEAR(relative_noise({50, 51, 300}), 1.4826 / 51, 1e-9);  // robust to one outlier
  EXPECT_DOUBLE_EQ(relative_noise({5}), 0);
}

}  // namespace
}  // namespace colltune

namespace colltune {
namespace {

// A final-phase run: job `job`, round `repeat`, one latency per size.
RunRecord final_run(std::int64_t job, int repeat, TuningConfig config,
                    const std::vector<std::pair<std::int64_t, double>>& rows,
                    RunOutcome outcome = RunOutcome::ok) {
  RunRecord r;
  r.job_id = job;
  r.repeat = repeat;
  r.config = config;
  r.purpose = JobPurpose::final;
  r.outcome = outcome;
  for (const auto& [size, us] : rows) r.rows.push_back(OsuRow{size, us, {}, {}, {}, {}});
  return r;
}

TEST(PairedFinalChoice, PairsByJobAndRoundAndPicksOnlyProvenGains) {
  const TuningConfig fixed{}, cand{6, 0, 0};
  const std::vector<std::int64_t> sizes = {4, 8, 16};
  std::vector<RunRecord> runs;
  // Four rounds in two jobs; the candidate is 20 % faster at 4 B, the same at 8 B, 20 % slower
  // at 16 B, with +-1 % noise; the default drifts by 2x between jobs (pairs absorb it).
  const double wobble[] = {1.0, 1.01, 0.99, 1.005};
  for (int k = 0; k < 4; ++k) {
    const std::int64_t job = k < 2 ? 1 : 2;
    const double drift = job == 1 ? 1.0 : 2.0;
    const double w = wobble[k];
    runs.push_back(
        final_run(job, k % 2, fixed, {{4, 100 * drift}, {8, 100 * drift}, {16, 100 * drift}}));
    runs.push_back(final_run(job, k % 2, cand,
                             {{4, 80 * drift * w}, {8, 100 * drift * w}, {16, 120 * drift * w}}));
  }
  runs.push_back(final_run(2, 2, cand, {{4, 1}}, RunOutcome::failed));  // no partner: ignored
  const PairedFinalData data = paired_final_data(runs, sizes);
  EXPECT_EQ(data.runs, 9);
  EXPECT_EQ(data.jobs, 2);
  ASSERT_EQ(data.log_ratios.at(cand).size(), 3u);
  EXPECT_EQ(data.log_ratios.at(cand)[0].size(), 4u);
  PairedTestOptions options;
  const auto intervals = paired_final_intervals(data, 0.0, options);
  const auto at4 = paired_pick_json(4, 0, cand, data, intervals, NAN);
  EXPECT_EQ(at4.at("best").get<TuningConfig>(), cand);
  EXPECT_EQ(at4.at("verdict"), "faster");
  EXPECT_EQ(at4.at("pairs"), 4);
  EXPECT_LT(at4.at("ratio_high").get<double>(), 1.0);
  EXPECT_NEAR(at4.at("ratio").get<double>(), 0.8, 0.01);
  const auto at8 = paired_pick_json(8, 1, cand, data, intervals, NAN);
  EXPECT_TRUE(at8.at("best").get<TuningConfig>().is_default());
  EXPECT_TRUE(at8.at("default_within_noise").get<bool>());
  EXPECT_EQ(at8.at("verdict"), "tie");
  const auto at16 = paired_pick_json(16, 2, cand, data, intervals, NAN);
  EXPECT_TRUE(at16.at("best").get<TuningConfig>().is_default());
  EXPECT_EQ(at16.at("verdict"), "slower");
  // No candidate nominated: the default, with the fallback latency when nothing was measured.
  const auto none = paired_pick_json(16, 2, std::nullopt, PairedFinalData{}, {}, 42.0);
  EXPECT_TRUE(none.at("best").get<TuningConfig>().is_default());
  EXPECT_DOUBLE_EQ(none.at("default_us").get<double>(), 42.0);
  EXPECT_TRUE(none.at("candidate").is_null());
}

// A whole-cluster size's intervals borrow the variance of the same candidate's pairs at its
// neighbouring comm sizes (same message sizes); other candidates' pairs, and a size measured
// over other message sizes, lend nothing.
TEST(PairedFinalChoice, NeighbouringCommSizesLendTheSameCandidatesVariance) {
  const TuningConfig fixed{}, cand{6, 0, 0}, other{2, 8192, 4};
  const std::vector<std::int64_t> sizes = {4};
  auto two_rounds = [&](std::int64_t job, TuningConfig c, double a, double b) {
    return std::vector<RunRecord>{
        final_run(job, 0, fixed, {{4, 100}}), final_run(job, 0, c, {{4, a}}),
        final_run(job, 1, fixed, {{4, 100}}), final_run(job, 1, c, {{4, b}})};
  };
  const PairedFinalData own = paired_final_data(two_rounds(5, cand, 88, 92), sizes);
  std::vector<RunRecord> near = two_rounds(1, cand, 131, 129);
  for (const auto& r : two_rounds(2, cand, 130.5, 129.5)) near.push_back(r);
  const PairedFinalData neighbour = paired_final_data(near, sizes);
  std::vector<RunRecord> elsewhere = two_rounds(3, other, 131, 129);
  for (const auto& r : two_rounds(4, other, 130.5, 129.5)) elsewhere.push_back(r);
  const PairedFinalData other_candidate = paired_final_data(elsewhere, sizes);
  const PairedFinalData other_sizes = paired_final_data(near, {4, 8});
  PairedTestOptions options;
  auto verdict = [&](const std::vector<PairedFinalData>& lent) {
    return paired_final_intervals(own, 0.0, options, lent).at(cand)[0].verdict;
  };
  EXPECT_EQ(verdict({}), PairedVerdict::open);
  EXPECT_EQ(verdict({neighbour}), PairedVerdict::faster);
  EXPECT_EQ(verdict({other_candidate}), PairedVerdict::open);
  EXPECT_EQ(verdict({other_sizes}), PairedVerdict::open);
}

}  // namespace
}  // namespace colltune
