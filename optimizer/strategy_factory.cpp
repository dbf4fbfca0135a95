#include <stdexcept>

#include "optimizer/sampling_strategies.h"
#include "optimizer/strategy.h"

namespace colltune {

std::vector<std::string> strategy_names() { return {"exhaustive", "random"}; }

std::unique_ptr<Strategy> make_strategy(const std::string& name, const SearchSpace& space,
                                        const StrategyOptions& options) {
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

}  // namespace colltune
