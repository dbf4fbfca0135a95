// Warm start of a re-tuning campaign: the campaign named by spec.warm_start_from gives, per
// tuning context (same collective and communicator size), its per-size best configurations as
// the first points to evaluate and its final optimizer state as the prior (StrategyOptions::
// warm_start_points / warm_start_state). A context the earlier campaign did not tune starts cold.
// A whole-cluster campaign is warm-started per comm size by the same rule (cluster_warm_start).
#pragma once

#include <cstdint>

#include "campaign/store.h"
#include "optimizer/cluster_warm_start.h"
#include "optimizer/strategy.h"

namespace colltune {

// Fills options.warm_start_* for `context` from campaign `from_campaign_id` (no-op when 0, or
// when that campaign has no matching context). Returns the number of warm points.
std::size_t apply_warm_start(Store& store, std::int64_t from_campaign_id,
                             const ContextRecord& context, StrategyOptions& options);

// The same rule for a whole-cluster search (optimizer/cluster_warm_start.h), per comm size of
// `group` (the contexts of one collective): the matching context of `from_campaign_id` gives
// the points re-measured first (the default and its per-size picks) and, when `with_runs`, its
// search runs as data. Comm sizes without a match are absent (they start cold). Empty when
// from_campaign_id is 0.
ClusterWarmStart cluster_warm_start(Store& store, std::int64_t from_campaign_id,
                                    const std::vector<ContextRecord>& group, bool with_runs);

}  // namespace colltune
