#include <stdexcept>

#include "optimizer/bayes_strategy.h"
#include "optimizer/per_size_bayes_strategy.h"
#include "optimizer/sampling_strategies.h"
#include "optimizer/strategy.h"

namespace colltune {

std::vector<std::string> strategy_names() { return {"bo", "bo-per-size", "random", "exhaustive"}; }

std::unique_ptr<Strategy> make_strategy(const std::string& name, const SearchSpace& space,
                                        const StrategyOptions& options) {
  if (name == "bo") return std::make_unique<BayesStrategy>(space, options);
  if (name == "bo-per-size") return std::make_unique<PerSizeBayesStrategy>(space, options);
  if (name == "exhaustive")
    return std::make_unique<OrderedSamplingStrategy>("exhaustive", space, options, false);
  if (name == "random") {
    StrategyOptions o = options;
    // Without a budget, random samples a quarter of the space (at least 8 points).
    if (o.budget <= 0) o.budget = std::max<int>(8, static_cast<int>(space.size() / 4));
    return std::make_unique<OrderedSamplingStrategy>("random", space, o, true);
  }
  throw std::invalid_argument("unknown strategy '" + name + "'");
}

void check_state_is_for(const nlohmann::json& state, const std::string& name, std::uint64_t seed) {
  if (state.at("strategy").get<std::string>() != name)
    throw std::invalid_argument("state is for strategy " + state.at("strategy").get<std::string>());
  if (state.at("seed").get<std::uint64_t>() != seed)
    throw std::invalid_argument("state was made with another seed");
}

std::optional<std::vector<TuningConfig>> initial_design_of(const nlohmann::json& state) {
  if (!state.is_object()) return std::nullopt;
  if (state.value("strategy", std::string()) == "bo") return BayesStrategy::design_of(state);
  return std::nullopt;
}

}  // namespace colltune
