// What a campaign tunes and how: the JSON document accepted by `colltune campaign create`,
// POST /api/v1/campaigns and built by `colltune tune` from its flags.
//
//   {"name", "backend", "contexts": [{"collective", "comm_size", "nodes", "ppn"}],
//    "sizes": "MIN:MAX", "strategy", "budget", "repeats", "seed", "stop", ...}
//
// Only backend, contexts and sizes are required. Unknown fields are rejected.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/collective.h"

namespace colltune {

struct ContextSpec {
  Collective collective = Collective::bcast;
  int comm_size = 4;
  int nodes = 1;
  int ppn = 0;  // 0 = comm_size / nodes

  bool operator==(const ContextSpec&) const = default;
};

struct StopSpec {
  int max_evaluations = 0;           // per context; 0 = strategy default (same as budget)
  double max_benchmark_seconds = 0;  // per campaign; 0 = unlimited
  bool thesis_rule = false;          // stop when best improved < 1% over the last 15 evaluations
};

struct CampaignSpec {
  std::string name;
  std::string backend = "local";
  std::vector<ContextSpec> contexts;
  std::int64_t min_size = 4;
  std::int64_t max_size = 1 << 20;
  std::string strategy = "random";
  int budget = 0;   // evaluations per context in the search; 0 = strategy default
  int repeats = 1;  // runs per suggested configuration in the search
  std::uint64_t seed = 1;
  int iterations = 100;      // OSU -i
  int warmup = 10;           // OSU -x
  int batch_size = 8;        // configurations per backend job
  int final_candidates = 2;  // finalists re-measured per message size
  int final_repeats = 3;     // "median" final phase: runs of each finalist and of the default;
                             // also the re-measure rounds (tuned/default pairs) of the rules stage
  // The final choice (docs/final-choice.md): "paired" = the sequential paired test against the
  // default (optimizer/paired_test.h); "median" = the method before it (finalists re-measured
  // final_repeats times, lowest median within noise), kept to compare the two side by side.
  std::string final_method = "paired";
  // Smallest relative gain a candidate must prove (its ratio's interval below 1 - min_gain).
  double min_gain = 0.0;
  // Cap on the runs of the paired final phase per context; 0 = the smaller of the context's
  // search runs and final_repeats x (1 + candidates) (docs/final-choice.md).
  int final_max_runs = 0;
  double run_timeout_s = 120;
  StopSpec stop;
  std::string rules_format = "auto";  // auto (from the Open MPI version), classic, v2, json
  bool verify = true;                 // verify the rules file on the backend and re-measure with it
  // Warm start (re-tuning): the id of an earlier campaign whose per-size best configurations
  // start this search and whose optimizer state is the prior; 0 = cold start.
  std::int64_t warm_start_from = 0;
};

// Parses and validates; throws std::invalid_argument with a message naming the field.
CampaignSpec parse_campaign_spec(const nlohmann::json& j);
nlohmann::json to_json(const CampaignSpec& spec);

// "4:1048576", "4K:1M" (K, M, G binary suffixes), "1024" (single size).
std::pair<std::int64_t, std::int64_t> parse_size_range(const std::string& text);
std::string format_size_range(std::int64_t min_size, std::int64_t max_size);

// The OSU message sizes of a range: MIN, 2*MIN, ... <= MAX. Reductions start at MIN rounded
// down to whole floats (at least 4 bytes), as OSU prints them.
std::vector<std::int64_t> osu_message_sizes(Collective collective, std::int64_t min_size,
                                            std::int64_t max_size);

}  // namespace colltune
