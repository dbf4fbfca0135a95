// One point of the coll_tuned search space: what a rules-file rule (or the forced MCA
// parameters) sets for one collective call.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace colltune {

struct TuningConfig {
  int algorithm = 0;  // Open MPI algorithm id; 0 = Open MPI's own (fixed) decision.
  int segsize = 0;    // bytes; 0 = unsegmented. Only meaningful for algorithms that read it.
  int fanout = 0;     // chain fan-out; 0 = not set. Only meaningful for algorithms that read it.

  static TuningConfig default_decision() { return {}; }
  bool is_default() const { return algorithm == 0; }

  auto operator<=>(const TuningConfig&) const = default;
};

// "alg=6 seg=8192 fanout=0", or "default" for algorithm 0.
std::string to_string(const TuningConfig& config);

void to_json(nlohmann::json& j, const TuningConfig& config);
void from_json(const nlohmann::json& j, TuningConfig& config);

}  // namespace colltune
