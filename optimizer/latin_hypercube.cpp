#include "optimizer/latin_hypercube.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "optimizer/config_encoding.h"

namespace colltune {
namespace {

// `slots` level indices in [0, levels): one uniform draw per stratum of width levels/slots,
// then shuffled. Distinct when slots <= levels; balanced repeats otherwise.
std::vector<int> stratified_levels(int slots, int levels, Rng& rng) {
  std::vector<int> out;
  for (int i = 0; i < slots; ++i) {
    double u = rng.uniform();
    int level = static_cast<int>(std::floor((i + u) * levels / slots));
    out.push_back(std::clamp(level, 0, levels - 1));
  }
  rng.shuffle(out);
  return out;
}

// Swaps levels between slots so that no algorithm gets the same level twice while it has
// configurations left at other levels (keeps the design non-collapsing within an algorithm).
void spread_within_algorithms(std::vector<int>& levels, const std::vector<int>& slot_algorithm,
                              int level_count) {
  const std::size_t k = levels.size();
  auto clashes = [&](std::size_t slot, int level) {
    int same_alg = 0;
    for (std::size_t o = 0; o < k; ++o)
      if (slot_algorithm[o] == slot_algorithm[slot]) ++same_alg;
    if (same_alg > level_count) return false;  // repeats are unavoidable
    for (std::size_t o = 0; o < k; ++o)
      if (o != slot && slot_algorithm[o] == slot_algorithm[slot] && levels[o] == level) return true;
    return false;
  };
  for (std::size_t round = 0; round < 4 * k; ++round) {
    std::size_t bad = k;
    for (std::size_t i = 0; i < k && bad == k; ++i)
      if (clashes(i, levels[i])) bad = i;
    if (bad == k) return;
    bool fixed = false;
    for (std::size_t j = 0; j < k && !fixed; ++j) {
      if (j == bad || levels[j] == levels[bad]) continue;
      std::swap(levels[bad], levels[j]);
      if (!clashes(bad, levels[bad]) && !clashes(j, levels[j]))
        fixed = true;
      else
        std::swap(levels[bad], levels[j]);
    }
    if (!fixed) return;
  }
}

// Points per algorithm: first each algorithm's `minimum` (capped by its configurations and
// by n), then balanced, capped by how many configurations each algorithm has.
std::map<int, int> algorithm_counts(const std::map<int, std::vector<int>>& by_algorithm, int n,
                                    const std::map<int, int>& minimum, Rng& rng) {
  std::map<int, int> counts;
  int placed = 0;
  for (const auto& [alg, members] : by_algorithm) {
    auto it = minimum.find(alg);
    int want = it == minimum.end() ? 0 : std::min<int>(it->second, members.size());
    counts[alg] = std::max(0, std::min(want, n - placed));
    placed += counts[alg];
  }
  for (; placed < n; ++placed) {
    int lowest = std::numeric_limits<int>::max();
    for (const auto& [alg, members] : by_algorithm)
      if (counts[alg] < static_cast<int>(members.size())) lowest = std::min(lowest, counts[alg]);
    if (lowest == std::numeric_limits<int>::max()) break;
    std::vector<int> eligible;
    for (const auto& [alg, members] : by_algorithm)
      if (counts[alg] == lowest && counts[alg] < static_cast<int>(members.size()))
        eligible.push_back(alg);
    ++counts[eligible[rng.below(eligible.size())]];
  }
  return counts;
}

}  // namespace

std::map<int, int> fanout_shapes(const SearchSpace& space) {
  std::map<int, std::set<int>> fans;
  for (const auto& p : space.points()) {
    const AlgorithmInfo* info = space.algorithm_info(p.algorithm);
    fans[p.algorithm].insert(info && info->uses_fanout ? p.fanout : 0);
  }
  std::map<int, int> out;
  for (const auto& [alg, f] : fans) out[alg] = f.size() > 1 ? 2 : 1;
  return out;
}

int lean_design_size(const SearchSpace& space, bool cover_fanouts) {
  int n = 0;
  for (const auto& [alg, shapes] : fanout_shapes(space)) n += cover_fanouts ? shapes : 1;
  return n;
}

int default_initial_design_size(const SearchSpace& space) {
  std::set<int> algorithms, segs, fans;
  for (const auto& p : space.points()) {
    algorithms.insert(p.algorithm);
    const AlgorithmInfo* info = space.algorithm_info(p.algorithm);
    if (info && info->uses_segsize) segs.insert(p.segsize);
    if (info && info->uses_fanout) fans.insert(p.fanout);
  }
  int n =
      static_cast<int>(algorithms.size()) + (segs.size() > 1 ? 1 : 0) + (fans.size() > 1 ? 1 : 0);
  return std::min<int>(n, static_cast<int>(space.size()));
}

double min_pairwise_distance2(const SearchSpace& space, const std::vector<TuningConfig>& design) {
  ConfigEncoder encoder(space);
  std::vector<EncodedConfig> e;
  for (const auto& c : design) e.push_back(encoder.encode(c));
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < e.size(); ++i)
    for (std::size_t j = i + 1; j < e.size(); ++j)
      best = std::min(best, ConfigEncoder::design_distance2(e[i], e[j]));
  return best;
}

std::vector<TuningConfig> latin_hypercube_design(const SearchSpace& space, int n, Rng& rng,
                                                 const LatinHypercubeOptions& options) {
  const auto& points = space.points();
  n = std::clamp(n, 0, static_cast<int>(points.size()));
  if (n == 0) return {};
  ConfigEncoder encoder(space);
  std::vector<EncodedConfig> encoded;
  for (const auto& p : points) encoded.push_back(encoder.encode(p));

  const bool pin_default = options.include_default && space.contains(TuningConfig{});
  std::map<int, std::vector<int>> by_algorithm;  // algorithm -> point indices (default apart)
  for (int i = 0; i < static_cast<int>(points.size()); ++i)
    if (!(pin_default && points[i].is_default())) by_algorithm[points[i].algorithm].push_back(i);

  // Level lists of the numeric axes, by encoded coordinate.
  std::set<double> seg_set, fan_set;
  for (int i = 0; i < static_cast<int>(points.size()); ++i) {
    const AlgorithmInfo* info = space.algorithm_info(points[i].algorithm);
    if (info && info->uses_segsize) seg_set.insert(encoded[i].seg);
    if (info && info->uses_fanout) fan_set.insert(encoded[i].fan);
  }
  const std::vector<double> seg_levels(seg_set.begin(), seg_set.end());
  const std::vector<double> fan_levels(fan_set.begin(), fan_set.end());

  // cover_fanouts: the points each algorithm gets first, and each algorithm's fan-out levels.
  std::map<int, int> minimum;
  std::map<int, std::vector<double>> own_fan_levels;
  if (options.cover_fanouts) {
    minimum = fanout_shapes(space);
    if (pin_default && minimum.count(0)) --minimum[0];  // the pinned default is its point
    for (const auto& [alg, members] : by_algorithm) {
      std::set<double> own;
      for (int i : members) own.insert(encoded[i].fan);
      own_fan_levels[alg].assign(own.begin(), own.end());
    }
  }

  std::vector<int> best_design;
  double best_score = -1;
  const int rounds = std::max(1, options.candidates);
  for (int round = 0; round < rounds; ++round) {
    std::vector<int> design;
    if (pin_default) design.push_back(space.index_of(TuningConfig{}));
    auto counts = algorithm_counts(by_algorithm, n - static_cast<int>(design.size()), minimum, rng);

    // Slots (one per design point to place) and their numeric targets.
    std::vector<int> slot_alg;
    for (const auto& [alg, count] : counts)
      for (int k = 0; k < count; ++k) slot_alg.push_back(alg);
    std::vector<int> seg_slots, fan_slots;
    for (int s = 0; s < static_cast<int>(slot_alg.size()); ++s) {
      const AlgorithmInfo* info = space.algorithm_info(slot_alg[s]);
      if (info && info->uses_segsize) seg_slots.push_back(s);
      if (info && info->uses_fanout) fan_slots.push_back(s);
    }
    std::vector<double> seg_target(slot_alg.size(), 0.0), fan_target(slot_alg.size(), 0.0);
    if (!seg_levels.empty()) {
      auto lv = stratified_levels(static_cast<int>(seg_slots.size()),
                                  static_cast<int>(seg_levels.size()), rng);
      std::vector<int> owners;
      for (int slot : seg_slots) owners.push_back(slot_alg[slot]);
      spread_within_algorithms(lv, owners, static_cast<int>(seg_levels.size()));
      for (std::size_t k = 0; k < seg_slots.size(); ++k)
        seg_target[seg_slots[k]] = seg_levels[lv[k]];
    }
    if (!fan_levels.empty() && options.cover_fanouts) {
      // Per algorithm, its fan-out slots stratified over its own fan-out levels; two slots
      // take the smallest and the largest fan-out (the deepest and the flattest tree).
      std::map<int, std::vector<int>> slots_of;
      for (int slot : fan_slots) slots_of[slot_alg[slot]].push_back(slot);
      for (const auto& [alg, slots] : slots_of) {
        const std::vector<double>& levels = own_fan_levels.at(alg);
        auto lv =
            stratified_levels(static_cast<int>(slots.size()), static_cast<int>(levels.size()), rng);
        for (std::size_t k = 0; k < slots.size(); ++k) fan_target[slots[k]] = levels[lv[k]];
        if (slots.size() == 2 && levels.size() >= 2) {  // same draws as above: same stream
          fan_target[slots[lv[0] < lv[1] ? 0 : 1]] = levels.front();
          fan_target[slots[lv[0] < lv[1] ? 1 : 0]] = levels.back();
        }
      }
    } else if (!fan_levels.empty()) {
      auto lv = stratified_levels(static_cast<int>(fan_slots.size()),
                                  static_cast<int>(fan_levels.size()), rng);
      for (std::size_t k = 0; k < fan_slots.size(); ++k)
        fan_target[fan_slots[k]] = fan_levels[lv[k]];
    }

    // Each slot takes the unused configuration of its algorithm nearest to its targets.
    std::set<int> used(design.begin(), design.end());
    for (std::size_t s = 0; s < slot_alg.size(); ++s) {
      int pick = -1;
      double pick_d = std::numeric_limits<double>::infinity();
      for (int i : by_algorithm.at(slot_alg[s])) {
        if (used.count(i)) continue;
        double ds = encoded[i].seg - seg_target[s], df = encoded[i].fan - fan_target[s];
        double d = ds * ds + df * df;
        if (d < pick_d) pick_d = d, pick = i;
      }
      if (pick >= 0) {
        used.insert(pick);
        design.push_back(pick);
      }
    }

    double score = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < design.size(); ++i)
      for (std::size_t j = i + 1; j < design.size(); ++j)
        score = std::min(score,
                         ConfigEncoder::design_distance2(encoded[design[i]], encoded[design[j]]));
    if (score > best_score) best_score = score, best_design = design;
  }

  std::vector<TuningConfig> out;
  for (int i : best_design) out.push_back(points[i]);
  return out;
}

}  // namespace colltune
