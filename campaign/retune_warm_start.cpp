#include "campaign/retune_warm_start.h"

#include <algorithm>

#include "campaign/context_result.h"

namespace colltune {

std::size_t apply_warm_start(Store& store, std::int64_t from_campaign_id,
                             const ContextRecord& context, StrategyOptions& options) {
  if (from_campaign_id <= 0) return 0;
  // The earlier context of the same collective and size; same placement preferred.
  std::optional<ContextRecord> match;
  for (auto& c : store.contexts(from_campaign_id)) {
    if (c.collective != context.collective || c.comm_size != context.comm_size) continue;
    const bool same_placement = c.nodes == context.nodes && c.ppn == context.ppn;
    if (!match || same_placement) match = std::move(c);
    if (same_placement) break;
  }
  if (!match) return 0;
  std::vector<TuningConfig> points;
  if (const auto result = context_result_of(match->result))
    for (const ContextPick& pick : result->picks) {
      const TuningConfig& best = pick.best;
      if (!best.is_default() && std::find(points.begin(), points.end(), best) == points.end())
        points.push_back(best);
    }
  options.warm_start_points = std::move(points);
  options.warm_start_state = match->optimizer_state;
  return options.warm_start_points.size();
}

}  // namespace colltune
