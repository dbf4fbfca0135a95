// Strategies that need no model: every point once (exhaustive), or a random subset (random).
// They are the baselines the Bayesian strategies are scored against.
#pragma once

#include "optimizer/observations.h"
#include "optimizer/strategy.h"

namespace colltune {

// Evaluates the points of the search space in a fixed order given by `order`, up to a budget.
class OrderedSamplingStrategy : public Strategy {
 public:
  OrderedSamplingStrategy(std::string name, const SearchSpace& space,
                          const StrategyOptions& options, bool shuffled);

  std::string name() const override { return name_; }
  std::vector<TuningConfig> suggest(int max_count) override;
  void observe(const Evaluation& evaluation) override;
  bool done() const override;
  int planned_evaluations() const override { return static_cast<int>(limit_); }
  std::vector<TuningConfig> finalists(int per_size) const override;
  std::vector<Choice> recommend() const override;
  nlohmann::json state() const override;
  void restore(const nlohmann::json& state) override;

 private:
  std::string name_;
  StrategyOptions options_;
  std::vector<TuningConfig> order_;
  std::size_t next_ = 0;   // index in order_ of the next suggestion
  std::size_t limit_ = 0;  // evaluations to make
  Observations observations_;
};

}  // namespace colltune
