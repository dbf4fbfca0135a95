#include "optimizer/paired_final.h"

#include <algorithm>
#include <limits>

#include "core/stats.h"

namespace colltune {

std::map<std::int64_t, TuningConfig> final_nominees(const std::vector<Choice>& picks,
                                                    const std::vector<TuningConfig>& finalists,
                                                    const SearchLatencies& search,
                                                    const SearchSpace& space) {
  std::set<TuningConfig> pool;
  for (const auto& c : finalists)
    if (!c.is_default()) pool.insert(c);
  std::map<std::int64_t, TuningConfig> nominated;
  for (const auto& choice : picks) {
    const std::int64_t size = choice.msg_size;
    std::optional<TuningConfig> nominee;
    if (!choice.config.is_default() && pool.count(choice.config)) {
      nominee = choice.config;
    } else if (auto at = search.find(size); at != search.end()) {
      double best = std::numeric_limits<double>::infinity();
      for (const auto& c : pool)
        if (auto it = at->second.find(c);
            it != at->second.end() && !it->second.empty() && median(it->second) < best) {
          best = median(it->second);
          nominee = c;
        }
      const auto d = at->second.find(TuningConfig::default_decision());
      if (nominee && d != at->second.end() && !d->second.empty() && !(best < median(d->second)))
        nominee.reset();
    }
    if (auto alias = space.default_alias(size); nominee && alias && *alias == *nominee)
      nominee.reset();
    if (nominee) nominated[size] = *nominee;
  }
  return nominated;
}

int final_run_cap(int search_runs, int final_repeats, int nominees) {
  return std::max(first_look_runs(nominees), std::min(search_runs, final_repeats * (1 + nominees)));
}

int first_look_runs(int nominees) { return 2 * (1 + nominees); }

double final_phase_reserve(const std::vector<double>& run_prices, int nominees) {
  double total = 0;
  for (double price : run_prices) total += first_look_runs(nominees) * price;
  return total;
}

bool FinalLookBudget::fits(int rounds, int configs) const {
  return static_cast<double>(rounds) * configs * run_price <= left;
}

FinalLookBudget final_look_budget(double unspent, double run_price,
                                  const std::vector<double>& prices_after, int nominees) {
  return {unspent - final_phase_reserve(prices_after, nominees), run_price};
}

std::set<TuningConfig> affordable_nominees(const std::map<std::int64_t, TuningConfig>& nominated,
                                           const std::set<TuningConfig>& open, int rounds,
                                           const FinalLookBudget& budget) {
  const int configs = static_cast<int>(open.size()) + 1;
  if (budget.fits(rounds, configs)) return open;
  std::vector<std::pair<int, TuningConfig>> by_sizes;  // (-message sizes, nominee)
  for (const auto& nominee : open) {
    int sizes = 0;
    for (const auto& [size, config] : nominated) sizes += config == nominee;
    by_sizes.push_back({-sizes, nominee});
  }
  std::sort(by_sizes.begin(), by_sizes.end());
  std::set<TuningConfig> out;
  for (const auto& [minus_sizes, nominee] : by_sizes) {
    if (!budget.fits(rounds, static_cast<int>(out.size()) + 2)) break;
    out.insert(nominee);
  }
  return out;
}

std::optional<std::pair<std::int64_t, std::int64_t>> look_size_span(
    const std::map<std::int64_t, TuningConfig>& nominated, const std::set<TuningConfig>& open) {
  std::optional<std::pair<std::int64_t, std::int64_t>> span;
  for (const auto& [size, config] : nominated) {  // sizes in increasing order
    if (!open.count(config)) continue;
    if (!span) span.emplace(size, size);
    span->second = size;
  }
  return span;
}

std::vector<TuningConfig> cluster_final_candidates(const ClusterStrategy& strategy, int comm_size,
                                                   int per_size, double min_confidence) {
  std::vector<TuningConfig> out = strategy.finalists(comm_size, per_size);
  for (const auto& choice : strategy.recommend({comm_size}, min_confidence))
    if (!choice.config.is_default() && choice.confidence >= min_confidence &&
        std::find(out.begin(), out.end(), choice.config) == out.end())
      out.push_back(choice.config);
  return out;
}

std::set<TuningConfig> open_nominees(
    const std::map<std::int64_t, TuningConfig>& nominated,
    const std::vector<std::int64_t>& msg_sizes,
    const std::map<TuningConfig, std::vector<PairedInterval>>& intervals, double min_gain) {
  std::set<TuningConfig> open;
  for (std::size_t i = 0; i < msg_sizes.size(); ++i) {
    auto n = nominated.find(msg_sizes[i]);
    if (n == nominated.end()) continue;
    auto it = intervals.find(n->second);
    if (it == intervals.end() || i >= it->second.size() || still_open(it->second[i], min_gain))
      open.insert(n->second);
  }
  return open;
}

}  // namespace colltune
