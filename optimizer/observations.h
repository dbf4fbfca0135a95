// Every latency observed for a context, by configuration and message size. Shared by the
// strategies for final choices: robust statistics (medians) rather than single runs.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimizer/strategy.h"

namespace colltune {

class Observations {
 public:
  void add(const Evaluation& evaluation);

  // Median latency of a configuration at a size; NaN when never measured.
  double median(const TuningConfig& config, std::int64_t msg_size) const;
  std::size_t count(const TuningConfig& config, std::int64_t msg_size) const;

  bool evaluated(const TuningConfig& config) const { return evaluated_.count(config) > 0; }
  bool failed(const TuningConfig& config) const { return failed_.count(config) > 0; }
  std::size_t evaluations() const { return evaluation_count_; }
  const std::set<TuningConfig>& evaluated_configs() const { return evaluated_; }

  // Configurations ranked by median at a size (best first); unmeasured ones left out.
  std::vector<TuningConfig> ranked(std::int64_t msg_size) const;

  // Best median per size. On a relative gap below `tie_tolerance` the default, then the lower
  // algorithm id (simpler), wins.
  std::vector<Choice> best_per_size(const std::vector<std::int64_t>& msg_sizes,
                                    double tie_tolerance = 0.0) const;

  nlohmann::json to_json() const;
  static Observations from_json(const nlohmann::json& j);

 private:
  std::map<TuningConfig, std::map<std::int64_t, std::vector<double>>> latencies_;
  std::set<TuningConfig> evaluated_;
  std::set<TuningConfig> failed_;
  std::size_t evaluation_count_ = 0;
};

}  // namespace colltune
