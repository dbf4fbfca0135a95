// REST routes of re-tuning (see campaign/retune.h), declared on the daemon's router:
//   GET  /api/v1/fingerprint[?backend=NAME]  the current fingerprint of a configured backend's
//        target (default: the backend of the deployed rules' campaign, else the first one)
//   POST /api/v1/retune  {"if_changed", "max_age_days", "force", "reason", "rules_version_id",
//        "dry_run", "sentinel"} -> the decision (RetuneDecision::to_json); 201 when a re-tuning
//        campaign was started, 200 otherwise. A started campaign is announced as a
//        "retune_started" event (with the sentinel report when one was sent).
#pragma once

#include "server/http_api.h"
#include "server/http_router.h"

namespace colltune {

void add_retune_routes(Router& router, ApiContext& api);

}  // namespace colltune
