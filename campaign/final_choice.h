// The final pick per message size from re-measured finalists: lowest median, but a
// configuration whose gap to the best is within the measured noise is a tie, and ties go to
// Open MPI's default first, then to the simpler configuration (fewer knobs, lower id).
// The rule itself (and median / relative_noise) lives in optimizer/final_choice.h, which the
// optimizer benchmark shares; this is the engine's view of it.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/tuning_config.h"
#include "optimizer/final_choice.h"

namespace colltune {

struct SizePick {
  std::int64_t msg_size = 0;
  TuningConfig best;
  double best_us = 0;     // median of the pick's samples
  double default_us = 0;  // median of the default's samples; NaN if not measured
  double noise = 0;       // relative noise used for the tie test
  bool default_within_noise = false;
  int samples = 0;  // samples of the pick
};

// `samples`: latencies per configuration at one size. `min_tolerance`: smallest relative gap
// treated as real (e.g. 0.02). Returns nullopt-like pick with samples = 0 when nothing measured.
SizePick choose_for_size(std::int64_t msg_size,
                         const std::map<TuningConfig, std::vector<double>>& samples,
                         double min_tolerance = 0.02);

}  // namespace colltune

// ---- The paired final choice (spec final_method "paired"; docs/final-choice.md) ----

#include <nlohmann/json.hpp>
#include <optional>

#include "campaign/store.h"
#include "optimizer/paired_final.h"
#include "optimizer/paired_test.h"

namespace colltune {

// What the search measured at a context (its search runs that ended ok), per message size, per
// configuration: where the paired final phase's nominees come from (final_nominees).
SearchLatencies search_latencies(const std::vector<RunRecord>& search_runs);

// A context's paired runs: in each job, round r (the run's repeat) of every candidate is paired
// with round r of the default (configuration 0 of the alternating job).
struct PairedFinalData {
  std::vector<std::int64_t> sizes;  // message sizes, increasing (the index of the vectors below)
  // Per candidate, per size: log(candidate_us / default_us) of every complete pair.
  std::map<TuningConfig, std::vector<std::vector<double>>> log_ratios;
  // Per configuration (default included), per size: every latency measured.
  std::map<TuningConfig, std::vector<std::vector<double>>> latencies;
  int runs = 0;  // runs of the final phase (any outcome)
  int jobs = 0;  // jobs (looks) of the final phase
};
PairedFinalData paired_final_data(const std::vector<RunRecord>& runs,
                                  const std::vector<std::int64_t>& sizes);

// Per candidate, the interval at every size (variance pooled over neighbouring sizes). `lent`:
// the paired runs of other communicator sizes of a whole-cluster campaign (the same message
// sizes), whose pairs of the same candidate lend their variance (paired_intervals' `lent`);
// a size whose message sizes differ lends nothing.
std::map<TuningConfig, std::vector<PairedInterval>> paired_final_intervals(
    const PairedFinalData& data, double min_gain, const PairedTestOptions& options,
    const std::vector<PairedFinalData>& lent = {});

// An interval as the picks, the verification record and the report carry it: pairs, ratio
// (candidate / default latency; null without pairs), ratio_low, ratio_high (null with fewer than
// 2 pairs), confidence, verdict (faster | tie | slower).
nlohmann::json interval_json(const PairedInterval& interval);

// The pick at one size: the nominated candidate when it is proven faster, else the default.
// JSON (the context result's "picks" entries): msg_size, best, best_us, default_us (null when
// not measured), noise, default_within_noise (true unless the candidate won), samples (pairs),
// method "paired", candidate (null when none was nominated), ratio, ratio_low, ratio_high
// (candidate / default latency and its interval), confidence, pairs, verdict (faster | tie |
// slower).
nlohmann::json paired_pick_json(
    std::int64_t msg_size, std::size_t size_index, const std::optional<TuningConfig>& candidate,
    const PairedFinalData& data,
    const std::map<TuningConfig, std::vector<PairedInterval>>& intervals,
    double fallback_default_us);

}  // namespace colltune
