// What a campaign tunes and how: the JSON document accepted by `colltune campaign create`,
// POST /api/v1/campaigns and built by `colltune tune` from its flags.
//
//   {"name", "backend", "contexts": [{"collective", "comm_size", "nodes", "ppn"}],
//    "sizes": "MIN:MAX", "strategy", "budget", "repeats", "seed", "stop", ...,
//    "cluster": {"strategy", "min_confidence", "budget", "budget_node_seconds",
//                "total_node_seconds", "predict_up_to", "settings"}}
//
// Only backend, contexts and sizes are required. Unknown fields are rejected.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
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

// Whole-cluster mode (issue #15, docs/whole-cluster.md): the contexts of one collective at
// several communicator sizes are searched together by one ClusterStrategy
// (optimizer/cluster_strategy.h), and the rules file covers every size from 2 ranks to the
// largest one, with predicted blocks where no size was run. Absent = every context on its own.
struct ClusterSpec {
  bool enabled = false;
  std::string strategy = "bo-cluster";  // a make_cluster_strategy name
  // A predicted pick goes into the file only when the model gives it at least this probability
  // of beating Open MPI's default; below it the default stays.
  double min_confidence = 0.8;
  int budget = 0;  // runs over all sizes of a collective; 0 = strategy default
  // Node-seconds (each run's benchmark time x its nodes), per collective; 0 = no limit.
  // budget_node_seconds: the search's. total_node_seconds: the search's and the final phases'
  // together; the search gets it less a reserve of one first look at every size
  // (docs/whole-cluster.md, "A budget for the whole campaign"). One of the two at most.
  double budget_node_seconds = 0;
  double total_node_seconds = 0;
  // The file predicts sizes up to here (above it: Open MPI's default); 0 = the largest size run.
  // E.g. run 2-6 ranks, write a file for 2-8.
  int predict_up_to = 0;
  nlohmann::json settings = nlohmann::json::object();  // the strategy's own settings

  bool operator==(const ClusterSpec&) const = default;
};

struct CampaignSpec {
  std::string name;
  std::string backend = "local";
  std::vector<ContextSpec> contexts;
  std::int64_t min_size = 4;
  std::int64_t max_size = 1 << 20;
  std::string strategy = "bo";  // the Bayesian optimizer; random and exhaustive are baselines
  int budget = 0;               // evaluations per context in the search; 0 = strategy default
  int repeats = 1;              // runs per suggested configuration in the search
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
  ClusterSpec cluster;
};

// Parses and validates; throws std::invalid_argument with a message naming the field.
CampaignSpec parse_campaign_spec(const nlohmann::json& j);

// The fields parse_campaign_spec accepts: of the spec object, of each contexts[] entry, of
// "stop". Any other field is refused. The OpenAPI schema CampaignSpec lists the same ones
// (tests/server/http_openapi_test.cpp).
enum class CampaignSpecPart { spec, context, stop };
const std::set<std::string>& campaign_spec_fields(CampaignSpecPart part);
nlohmann::json to_json(const CampaignSpec& spec);

// "4:1048576", "4K:1M" (K, M, G binary suffixes), "1024" (single size).
std::pair<std::int64_t, std::int64_t> parse_size_range(const std::string& text);
std::string format_size_range(std::int64_t min_size, std::int64_t max_size);

// The OSU message sizes of a range: MIN, 2*MIN, ... <= MAX. Reductions start at MIN rounded
// down to whole floats (at least 4 bytes), as OSU prints them.
std::vector<std::int64_t> osu_message_sizes(Collective collective, std::int64_t min_size,
                                            std::int64_t max_size);

}  // namespace colltune
