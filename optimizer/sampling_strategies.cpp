#include "optimizer/sampling_strategies.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "core/rng.h"

namespace colltune {

OrderedSamplingStrategy::OrderedSamplingStrategy(std::string name, const SearchSpace& space,
                                                 const StrategyOptions& options, bool shuffled)
    : name_(std::move(name)), options_(options), order_(space.points()) {
  if (shuffled) {
    Rng rng(options.seed);
    rng.shuffle(order_);
    // The baseline is always measured: move the default to the front.
    auto it = std::find(order_.begin(), order_.end(), TuningConfig::default_decision());
    if (it != order_.end()) std::rotate(order_.begin(), it, it + 1);
  }
  // Warm start: the earlier campaign's best configurations come next (after the default when
  // shuffled, first otherwise), each once.
  auto next = order_.begin();
  if (shuffled && next != order_.end() && next->is_default()) ++next;
  for (const auto& warm : options.warm_start_points) {
    const TuningConfig point = space.canonical(warm);
    if (!space.contains(point)) continue;
    auto at = std::find(next, order_.end(), point);
    if (at == order_.end()) continue;
    std::rotate(next, at, at + 1);
    ++next;
  }
  limit_ = order_.size();
  if (options.budget > 0) limit_ = std::min<std::size_t>(limit_, options.budget);
}

std::vector<TuningConfig> OrderedSamplingStrategy::suggest(int max_count) {
  std::vector<TuningConfig> out;
  while (static_cast<int>(out.size()) < max_count && next_ < limit_) out.push_back(order_[next_++]);
  return out;
}

void OrderedSamplingStrategy::observe(const Evaluation& evaluation) {
  observations_.add(evaluation);
}

bool OrderedSamplingStrategy::done() const { return next_ >= limit_; }

std::vector<TuningConfig> OrderedSamplingStrategy::finalists(int per_size) const {
  std::set<TuningConfig> picked;
  for (std::int64_t size : options_.msg_sizes) {
    auto order = observations_.ranked(size);
    for (int i = 0; i < per_size && i < static_cast<int>(order.size()); ++i)
      picked.insert(order[i]);
  }
  return {picked.begin(), picked.end()};
}

std::vector<Choice> OrderedSamplingStrategy::recommend() const {
  return observations_.best_per_size(options_.msg_sizes);
}

nlohmann::json OrderedSamplingStrategy::state() const {
  return {{"strategy", name_},
          {"seed", options_.seed},
          {"next", next_},
          {"limit", limit_},
          {"observations", observations_.to_json()}};
}

void OrderedSamplingStrategy::restore(const nlohmann::json& state) {
  check_state_is_for(state, name_, options_.seed);
  next_ = state.at("next").get<std::size_t>();
  limit_ = state.at("limit").get<std::size_t>();
  observations_ = Observations::from_json(state.at("observations"));
}

}  // namespace colltune
