// The shared statistics (core/stats.h): the median and the mean.
#include "core/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace colltune {
namespace {

TEST(Stats, MedianAndMeanOfOddEvenAndEmptySamples) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_DOUBLE_EQ(mean({1, 2, 6}), 3);
  EXPECT_TRUE(std::isnan(mean({})));
}

}  // namespace
}  // namespace colltune
