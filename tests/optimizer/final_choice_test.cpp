#include "optimizer/final_choice.h"

#include <gtest/gtest.h>

#include <cmath>

namespace colltune {
namespace {

TEST(OptimizerFinalChoice, LowestMedianWinsWhenOutsideNoise) {
  std::map<TuningConfig, std::vector<double>> s = {
      {TuningConfig{}, {100, 101, 99}},
      {TuningConfig{6, 0, 0}, {50, 51, 300}},  // one outlier must not matter: median 51
  };
  FinalPick p = pick_within_noise(s);
  ASSERT_TRUE(p.found);
  EXPECT_EQ(p.config, (TuningConfig{6, 0, 0}));
  EXPECT_DOUBLE_EQ(p.median_us, 51);
  EXPECT_TRUE(p.default_measured);
  EXPECT_DOUBLE_EQ(p.default_us, 100);
  EXPECT_FALSE(p.default_within_noise);
  EXPECT_EQ(p.samples, 3);
}

TEST(OptimizerFinalChoice, TiesGoToDefaultThenFewerKnobs) {
  std::map<TuningConfig, std::vector<double>> with_default = {
      {TuningConfig{}, {100, 104, 96}},  // 4 % noise covers the 1 % gap
      {TuningConfig{6, 0, 0}, {98, 99, 97}},
  };
  EXPECT_TRUE(pick_within_noise(with_default).config.is_default());

  std::map<TuningConfig, std::vector<double>> knobs = {
      {TuningConfig{2, 8192, 4}, {50, 50.1, 49.9}},   // 0.3 % noise
      {TuningConfig{6, 0, 0}, {50.4, 50.45, 50.35}},  // 0.8 % slower: within the 2 % floor
      {TuningConfig{}, {90, 91, 92}},
  };
  EXPECT_EQ(pick_within_noise(knobs).config, (TuningConfig{6, 0, 0}));
  // Without the tolerance floor the segmented chain's lower median wins.
  EXPECT_EQ(pick_within_noise(knobs, 0.0).config, (TuningConfig{2, 8192, 4}));
}

TEST(OptimizerFinalChoice, NothingMeasured) {
  std::map<TuningConfig, std::vector<double>> empty_values = {{TuningConfig{}, {}}};
  EXPECT_FALSE(pick_within_noise(empty_values).found);
  EXPECT_FALSE(pick_within_noise({}).found);
}

TEST(OptimizerFinalChoice, Statistics) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_NEAR(relative_noise({90, 100, 110}), 0.14826, 1e-9);
  EXPECT_DOUBLE_EQ(relative_noise({5}), 0);
  EXPECT_TRUE(simpler_config(TuningConfig{}, TuningConfig{1, 0, 0}));
  EXPECT_TRUE(simpler_config(TuningConfig{6, 0, 0}, TuningConfig{2, 8192, 0}));
  EXPECT_FALSE(simpler_config(TuningConfig{2, 8192, 4}, TuningConfig{3, 8192, 0}));
}

}  // namespace
}  // namespace colltune
