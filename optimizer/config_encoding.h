// Numeric coordinates of the configurations of a search space, shared by the kernels and the
// space-filling design:
//  - category: index of the algorithm id among the space's ids (default 0 included), for a
//    categorical (exchangeable) kernel, never as an ordinal number;
//  - seg: log2(segment size) scaled to [0, 1]; "unsegmented" (0) sits one step above the
//    largest segment size, since it behaves like a segment as large as the message;
//  - fan: log2(chain fan-out) scaled to [0, 1]; 0 for algorithms without a fan-out (pipeline is
//    chain with fan-out 1, log2 1 = 0).
// A coordinate is 0 everywhere when the space has a single value for it.
#pragma once

#include <vector>

#include "core/tuning_config.h"
#include "optimizer/search_space.h"

namespace colltune {

struct EncodedConfig {
  int category = 0;
  double seg = 0;
  double fan = 0;
  // log2 of the segment size when the algorithm really segments, else 0 (= not segmented):
  // with the message size it gives the number of segments, log2(m) - log2_segment.
  double log2_segment = 0;
};

class ConfigEncoder {
 public:
  explicit ConfigEncoder(const SearchSpace& space);

  EncodedConfig encode(const TuningConfig& config) const;
  int category_count() const { return static_cast<int>(algorithms_.size()); }
  // Category of an algorithm id; -1 when the space does not hold it.
  int category_of(int algorithm) const;
  // Algorithm ids by category.
  const std::vector<int>& algorithms() const { return algorithms_; }
  // Squared distance used by the maximin design criterion: 1 per differing category plus the
  // squared numeric differences.
  static double design_distance2(const EncodedConfig& a, const EncodedConfig& b);

 private:
  const SearchSpace* space_;
  std::vector<int> algorithms_;
  double seg_lo_ = 0, seg_span_ = 0;  // log2 range of positive segment sizes (+1 for "none")
  double fan_span_ = 0;               // log2 of the largest fan-out
};

}  // namespace colltune
