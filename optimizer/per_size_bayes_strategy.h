// "bo-per-size": the thesis method (Sartori 2024, ch. 3), kept as the baseline colltune is
// measured against. One independent Bayesian optimisation per message size:
//  - initial design: a Latin Hypercube per size (same construction as "bo", own seed);
//  - surrogate: GP with an isotropic RBF kernel on the Euclidean (algorithm id, log2 segment
//    size, log2 fan-out) coordinates, the algorithm id taken as a number as in the thesis; a
//    small learned noise term is added (the thesis has none; without it the Cholesky fails on
//    repeated values); targets are standardised log latencies of that size only;
//  - acquisition: EI against the best value observed at that size; one evaluation in flight
//    per size after its initial design;
//  - stop (per size): 150 evaluations, or < 1 % improvement of the best over the last 15.
// A run suggested for several sizes at once measures them all; msg_sizes_wanted() names the
// sizes each suggestion is for, and each size's search learns only from its own size.
#pragma once

#include <Eigen/Dense>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/config_encoding.h"
#include "optimizer/observations.h"
#include "optimizer/strategy.h"

namespace colltune {

class PerSizeBayesStrategy : public Strategy {
 public:
  PerSizeBayesStrategy(const SearchSpace& space, const StrategyOptions& options);

  std::string name() const override { return "bo-per-size"; }
  std::vector<TuningConfig> suggest(int max_count) override;
  void observe(const Evaluation& evaluation) override;
  bool done() const override;
  int planned_evaluations() const override { return max_evaluations_ > 0 ? max_evaluations_ : -1; }
  std::vector<TuningConfig> finalists(int per_size) const override;
  std::vector<Choice> recommend() const override;
  nlohmann::json state() const override;
  void restore(const nlohmann::json& state) override;
  std::vector<std::int64_t> msg_sizes_wanted(const TuningConfig& config) const override;

 private:
  struct SizeSearch {
    std::int64_t msg_size = 0;
    std::vector<TuningConfig> design;
    std::size_t design_next = 0;
    std::vector<TuningConfig> configs;  // own evaluations, in order
    std::vector<double> log_latency;    // NaN for a failed run
    int pending = 0;
    bool stopped = false;
    std::optional<Eigen::Vector3d> theta;  // log signal var, log length-scale, log noise var
  };

  TuningConfig next_for(SizeSearch& search, std::uint64_t salt);
  bool rule_met(const SizeSearch& search) const;
  bool budget_exhausted() const;
  Eigen::Vector3d coordinates(const TuningConfig& config) const;

  const SearchSpace* space_;
  StrategyOptions options_;
  ConfigEncoder encoder_;
  int max_algorithm_ = 1;
  int max_evaluations_ = 0;
  std::vector<SizeSearch> searches_;
  std::map<TuningConfig, std::vector<std::int64_t>> wanted_;  // pending config -> sizes
  std::size_t next_size_ = 0;                                 // round-robin start
  std::uint64_t suggest_calls_ = 0;
  std::vector<Evaluation> evaluations_;
  Observations observations_;
};

}  // namespace colltune
