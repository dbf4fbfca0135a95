// Warm start of a re-tuning campaign: the campaign named by spec.warm_start_from gives, per
// tuning context (same collective and communicator size), its per-size best configurations as
// the first points to evaluate and its final optimizer state as the prior (StrategyOptions::
// warm_start_points / warm_start_state). A context the earlier campaign did not tune starts cold.
#pragma once

#include <cstdint>

#include "campaign/store.h"
#include "optimizer/strategy.h"

namespace colltune {

// Fills options.warm_start_* for `context` from campaign `from_campaign_id` (no-op when 0, or
// when that campaign has no matching context). Returns the number of warm points.
std::size_t apply_warm_start(Store& store, std::int64_t from_campaign_id,
                             const ContextRecord& context, StrategyOptions& options);

}  // namespace colltune
