#include "optimizer/config_encoding.h"

#include <algorithm>
#include <cmath>

namespace colltune {

ConfigEncoder::ConfigEncoder(const SearchSpace& space) : space_(&space) {
  int min_seg = 0, max_seg = 0, max_fan = 0;
  for (const auto& p : space.points()) {
    algorithms_.push_back(p.algorithm);
    if (p.segsize > 0) {
      min_seg = min_seg == 0 ? p.segsize : std::min(min_seg, p.segsize);
      max_seg = std::max(max_seg, p.segsize);
    }
    max_fan = std::max(max_fan, p.fanout);
  }
  std::sort(algorithms_.begin(), algorithms_.end());
  algorithms_.erase(std::unique(algorithms_.begin(), algorithms_.end()), algorithms_.end());
  if (max_seg > 0) {
    seg_lo_ = std::log2(static_cast<double>(min_seg));
    seg_span_ = std::log2(static_cast<double>(max_seg)) + 1.0 - seg_lo_;
  }
  if (max_fan > 1) fan_span_ = std::log2(static_cast<double>(max_fan));
}

int ConfigEncoder::category_of(int algorithm) const {
  auto it = std::lower_bound(algorithms_.begin(), algorithms_.end(), algorithm);
  if (it == algorithms_.end() || *it != algorithm) return -1;
  return static_cast<int>(it - algorithms_.begin());
}

EncodedConfig ConfigEncoder::encode(const TuningConfig& config) const {
  EncodedConfig e;
  e.category = category_of(config.algorithm);
  if (seg_span_ > 0) {
    double log_seg =
        config.segsize > 0 ? std::log2(static_cast<double>(config.segsize)) : seg_lo_ + seg_span_;
    e.seg = std::clamp((log_seg - seg_lo_) / seg_span_, 0.0, 1.0);
  }
  const AlgorithmInfo* info = space_->algorithm_info(config.algorithm);
  if (info && info->uses_segsize && config.segsize > 0)
    e.log2_segment = std::log2(static_cast<double>(config.segsize));
  if (fan_span_ > 0 && config.fanout > 0)
    e.fan = std::clamp(std::log2(static_cast<double>(config.fanout)) / fan_span_, 0.0, 1.0);
  return e;
}

double ConfigEncoder::design_distance2(const EncodedConfig& a, const EncodedConfig& b) {
  double d = a.category == b.category ? 0.0 : 1.0;
  return d + (a.seg - b.seg) * (a.seg - b.seg) + (a.fan - b.fan) * (a.fan - b.fan);
}

}  // namespace colltune
