// The benchmark request of one campaign context: its collective and placement with the
// campaign's size range, OSU iterations and run timeout. The search, the final phase, the
// preflight and the rules stage all start from it, so a context is measured the same way in each.
#pragma once

#include <string>

#include "campaign/campaign_spec.h"
#include "campaign/store.h"
#include "optimizer/strategy.h"
#include "runner/backend.h"

namespace colltune {

// One run of Open MPI's default decision (configs = {default}, repeats = 1, order_seed = 0);
// callers replace configs, repeats and order_seed for a search or final batch.
BenchmarkRequest context_request(const ContextRecord& context, const CampaignSpec& spec,
                                 std::string tag);
// The same for a context of a spec not stored yet.
BenchmarkRequest context_request(const ContextSpec& context, const CampaignSpec& spec,
                                 std::string tag);

// The tag of a campaign's job: "ct-c<campaign>-x<context>-<purpose><number>".
std::string job_tag(std::int64_t campaign_id, std::int64_t context_id, const std::string& purpose,
                    std::size_t number);

// What one stored run tells a strategy (failed runs keep the sizes they finished).
Evaluation evaluation_of(const RunRecord& run);

}  // namespace colltune
