// Small statistics shared by the optimizer, the engine, the sentinel, the simulator and the
// benchmarks: one definition each, so that every part agrees on what "the median" is.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

namespace colltune {

// The median of `samples`: the middle value, or the mean of the two middle values for an even
// count; NaN when there are none. O(n) (a partial sort of the copy).
inline double median(std::vector<double> samples) {
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t n = samples.size();
  std::nth_element(samples.begin(), samples.begin() + n / 2, samples.end());
  const double upper = samples[n / 2];
  if (n % 2) return upper;
  return 0.5 * (upper + *std::max_element(samples.begin(), samples.begin() + n / 2));
}

// The arithmetic mean of `samples`, summed in order; NaN when there are none.
inline double mean(const std::vector<double>& samples) {
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double x : samples) sum += x;
  return sum / static_cast<double>(samples.size());
}

}  // namespace colltune
