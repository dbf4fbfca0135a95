// What a finished context hands on: its pick per message size and how it got there. The engine
// writes it (Store::save_context_result), the rules stage reads the picks to write the rules
// file (and rewrites those it reverts), the report and a warm-started re-tune read it. Stored as
// JSON in contexts.result; from_json(to_json(r)) == r and to_json(from_json(j)) == j for every
// stored result (fields this type does not name are carried as they are).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/tuning_config.h"

namespace colltune {

// The pick at one size. JSON: msg_size, best, best_us, default_us (null when not measured),
// noise, default_within_noise, samples, method ("median" or "paired"; absent in results older
// than the paired method = "median"), reverted (the rules stage's record when it reverted this
// size to the default). The paired method's fields (candidate, ratio, ratio_low, ratio_high,
// confidence, pairs, verdict: server/final_choice.h) stay in `extra`.
struct ContextPick {
  std::int64_t msg_size = 0;
  TuningConfig best;
  nlohmann::json best_us;     // number, or null when nothing valid was measured
  nlohmann::json default_us;  // number, or null
  nlohmann::json noise;
  bool default_within_noise = false;
  nlohmann::json samples;
  std::optional<std::string> method;
  nlohmann::json reverted;  // null unless reverted
  nlohmann::json extra = nlohmann::json::object();

  std::string method_or_median() const { return method.value_or("median"); }
};

// JSON: picks, evaluations, space, strategy, failed_sizes (only when some size failed:
// [{msg_size, reason}]), final_passes (only when not empty).
struct ContextResult {
  std::vector<ContextPick> picks;
  int evaluations = 0;
  std::int64_t space = 0;
  std::string strategy;
  nlohmann::json failed_sizes = nlohmann::json::array();
  // Under a budget for the whole campaign (cluster.total_node_seconds): the final jobs the
  // context had when each pass of its paired final phase ended, the first pass's, then the
  // leftover pass's (optimizer/paired_final.h, leftover_look_budget). A resume tells the
  // passes' looks apart by them. Empty otherwise.
  std::vector<int> final_passes;

  // The pick at `msg_size`, or null.
  const ContextPick* pick_at(std::int64_t msg_size) const;
  ContextPick* pick_at(std::int64_t msg_size);
};

void to_json(nlohmann::json& j, const ContextPick& p);
void from_json(const nlohmann::json& j, ContextPick& p);
void to_json(nlohmann::json& j, const ContextResult& r);
void from_json(const nlohmann::json& j, ContextResult& r);

// A stored context's result; nullopt when it has none (null or not an object: not done yet).
std::optional<ContextResult> context_result_of(const nlohmann::json& stored);

}  // namespace colltune
