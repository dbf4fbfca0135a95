#include "server/final_choice.h"

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
