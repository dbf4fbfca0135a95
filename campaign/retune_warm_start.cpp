#include "campaign/retune_warm_start.h"

#include <algorithm>

#include "campaign/campaign_states.h"
#include "campaign/context_request.h"
#include "campaign/context_result.h"

namespace colltune {

namespace {

// The earlier context of the same collective and size; same placement preferred.
std::optional<ContextRecord> earlier_context(const std::vector<ContextRecord>& earlier,
                                             const ContextRecord& context) {
  std::optional<ContextRecord> match;
  for (const auto& c : earlier) {
    if (c.collective != context.collective || c.comm_size != context.comm_size) continue;
    const bool same_placement = c.nodes == context.nodes && c.ppn == context.ppn;
    if (!match || same_placement) match = c;
    if (same_placement) break;
  }
  return match;
}

// Its per-size best configurations other than the default, each once.
std::vector<TuningConfig> earlier_picks(const ContextRecord& match) {
  std::vector<TuningConfig> points;
  if (const auto result = context_result_of(match.result))
    for (const ContextPick& pick : result->picks) {
      const TuningConfig& best = pick.best;
      if (!best.is_default() && std::find(points.begin(), points.end(), best) == points.end())
        points.push_back(best);
    }
  return points;
}

}  // namespace

std::size_t apply_warm_start(Store& store, std::int64_t from_campaign_id,
                             const ContextRecord& context, StrategyOptions& options) {
  if (from_campaign_id <= 0) return 0;
  const auto match = earlier_context(store.contexts(from_campaign_id), context);
  if (!match) return 0;
  options.warm_start_points = earlier_picks(*match);
  options.warm_start_state = match->optimizer_state;
  return options.warm_start_points.size();
}

ClusterWarmStart cluster_warm_start(Store& store, std::int64_t from_campaign_id,
                                    const std::vector<ContextRecord>& group, bool with_runs) {
  ClusterWarmStart warm;
  if (from_campaign_id <= 0) return warm;
  const auto earlier = store.contexts(from_campaign_id);
  for (const auto& context : group) {
    const auto match = earlier_context(earlier, context);
    if (!match) continue;
    auto& points = warm.points[context.comm_size];
    points.push_back(TuningConfig::default_decision());
    for (const auto& c : earlier_picks(*match)) points.push_back(c);
    if (!with_runs) continue;
    auto& prior = warm.prior[context.comm_size];
    for (const auto& run : store.runs_of_context(match->id, JobPurpose::search))
      prior.push_back(evaluation_of(run));
  }
  return warm;
}

}  // namespace colltune
