#include "optimizer/search_space.h"

#include <algorithm>

#include "core/fixed_decision.h"

namespace colltune {
namespace {

constexpr int kMaxTreeFanout = 32;  // MAXTREEFANOUT in coll_base_topo.h

}  // namespace

SearchSpace::SearchSpace(Collective collective, int comm_size, const AlgorithmTable& table,
                         const SearchSpaceOptions& options)
    : collective_(collective), comm_size_(comm_size), table_(&table) {
  if (options.include_default) points_.push_back(TuningConfig::default_decision());
  for (const auto& a : table.usable(collective, comm_size)) {
    if (options.commutative_ops_only && a.commutative_only) continue;
    std::vector<int> segs = a.uses_segsize ? options.segment_sizes : std::vector<int>{0};
    std::vector<int> fans = a.uses_fanout ? options.fanouts : std::vector<int>{0};
    for (int s : segs)
      for (int f : fans) points_.push_back(canonical(TuningConfig{a.id, s, f}));
  }
  finish();
}

SearchSpace::SearchSpace(Collective collective, int comm_size, const AlgorithmTable& table,
                         const std::vector<TuningConfig>& points)
    : collective_(collective), comm_size_(comm_size), table_(&table) {
  std::vector<int> usable_ids;
  for (const auto& a : table.usable(collective, comm_size)) usable_ids.push_back(a.id);
  for (const auto& p : points) {
    TuningConfig c = canonical(p);
    bool usable = c.algorithm == 0 ||
                  std::find(usable_ids.begin(), usable_ids.end(), c.algorithm) != usable_ids.end();
    if (usable) points_.push_back(c);
  }
  finish();
}

void SearchSpace::finish() {
  std::sort(points_.begin(), points_.end());
  points_.erase(std::unique(points_.begin(), points_.end()), points_.end());
}

const AlgorithmInfo* SearchSpace::algorithm_info(int algorithm) const {
  if (algorithm == 0) return nullptr;
  const auto* entry = table_->find(collective_);
  return entry ? entry->find(algorithm) : nullptr;
}

TuningConfig SearchSpace::canonical(const TuningConfig& config) const {
  TuningConfig c = config;
  if (c.algorithm == 0) return TuningConfig::default_decision();
  const AlgorithmInfo* info = algorithm_info(c.algorithm);
  if (!info) return c;
  if (!info->uses_segsize) c.segsize = 0;
  if (c.segsize < 0) c.segsize = 0;
  if (!info->uses_fanout) {
    c.fanout = 0;
  } else {
    c.fanout = std::clamp(c.fanout, 1, kMaxTreeFanout);
    if (comm_size_ > 1) c.fanout = std::min(c.fanout, comm_size_ - 1);
    if (info->name == "chain" && c.fanout == 1) {
      const auto* entry = table_->find(collective_);
      if (const AlgorithmInfo* pipeline = entry->find("pipeline"))
        return canonical(TuningConfig{pipeline->id, c.segsize, 0});
    }
  }
  if (info->name == "segmented_ring" && c.segsize == 0) {
    const auto* entry = table_->find(collective_);
    if (const AlgorithmInfo* ring = entry->find("ring")) return TuningConfig{ring->id, 0, 0};
  }
  return c;
}

int SearchSpace::index_of(const TuningConfig& config) const {
  TuningConfig c = canonical(config);
  auto it = std::lower_bound(points_.begin(), points_.end(), c);
  if (it == points_.end() || *it != c) return -1;
  return static_cast<int>(it - points_.begin());
}

bool SearchSpace::contains(const TuningConfig& config) const { return index_of(config) >= 0; }

std::optional<TuningConfig> SearchSpace::default_alias(std::int64_t msg_size) const {
  const auto alg = fixed_decision_4_1(collective_, comm_size_, msg_size);
  if (!alg || *alg == 0) return std::nullopt;
  const AlgorithmInfo* info = algorithm_info(*alg);
  if (!info || info->uses_fanout) return std::nullopt;
  const TuningConfig alias = canonical(TuningConfig{*alg, 0, 0});
  if (alias.is_default()) return std::nullopt;
  return alias;
}

}  // namespace colltune
