#include "optimizer/search_space.h"

#include <algorithm>

namespace colltune {

SearchSpace::SearchSpace(Collective collective, int comm_size, const AlgorithmTable& table,
                         const SearchSpaceOptions& options)
    : collective_(collective), comm_size_(comm_size), table_(&table) {
  if (options.include_default) points_.push_back(TuningConfig::default_decision());
  for (const auto& a : table.usable(collective, comm_size)) {
    if (options.commutative_ops_only && a.commutative_only) continue;
    std::vector<int> segs = a.uses_segsize ? options.segment_sizes : std::vector<int>{0};
    std::vector<int> fans = a.uses_fanout ? options.fanouts : std::vector<int>{0};
    for (int s : segs)
      for (int f : fans) points_.push_back(TuningConfig{a.id, s, f});
  }
  std::sort(points_.begin(), points_.end());
  points_.erase(std::unique(points_.begin(), points_.end()), points_.end());
}

TuningConfig SearchSpace::canonical(const TuningConfig& config) const {
  TuningConfig c = config;
  const auto* entry = table_->find(collective_);
  const AlgorithmInfo* info = entry ? entry->find(c.algorithm) : nullptr;
  if (c.algorithm == 0 || !info) {
    if (c.algorithm == 0) c = TuningConfig::default_decision();
    return c;
  }
  if (!info->uses_segsize) c.segsize = 0;
  if (!info->uses_fanout) c.fanout = 0;
  return c;
}

int SearchSpace::index_of(const TuningConfig& config) const {
  TuningConfig c = canonical(config);
  auto it = std::lower_bound(points_.begin(), points_.end(), c);
  if (it == points_.end() || *it != c) return -1;
  return static_cast<int>(it - points_.begin());
}

bool SearchSpace::contains(const TuningConfig& config) const { return index_of(config) >= 0; }

}  // namespace colltune
