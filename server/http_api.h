// colltune's REST API (JSON under /api/v1), its event stream and metrics, declared on a Router.
// The OpenAPI document (server/openapi.json, served at /api/openapi.json) describes exactly
// these routes; http_openapi_test checks both ways.
//
// Later routes (fingerprint, retune) are added here the same way: one router.add() each.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "campaign/store.h"
#include "server/config.h"
#include "server/daemon_campaigns.h"
#include "server/events.h"
#include "server/http_gate.h"
#include "server/http_router.h"
#include "server/metrics.h"

namespace colltune {

struct ApiContext {
  Store& store;
  EventHub& hub;
  CampaignManager& campaigns;
  Metrics& metrics;
  const DaemonConfig& config;
  std::atomic<int> event_streams{0};
  // Open event streams per client address (each holds a worker thread for its life).
  std::mutex streams_mutex;
  std::map<std::string, int> streams_per_client;
  // The front door's counters (set by the daemon once its gate exists), for /metrics.
  std::function<HttpGateStats()> http_stats;
  // Reports are costly (every run of the campaign); one is reused while the campaign's state,
  // update time, job and run counts are unchanged.
  std::mutex reports_mutex;
  std::map<std::int64_t, std::pair<std::string, std::string>> reports;  // id -> (key, JSON text)
};

// Declares every route on `router`. `api` must outlive the router's server.
void add_api_routes(Router& router, ApiContext& api);

// JSON of a campaign as the API shows it.
nlohmann::json campaign_json(const CampaignRecord& c, const CampaignManager::Activity& activity,
                             const Store::CampaignProgress* progress);

// The convergence history of a campaign (GET /api/v1/campaigns/{id}/convergence).
nlohmann::json campaign_convergence(Store& store, std::int64_t campaign_id);

// Checks a rules file name given to deploy or rollback: one path component of letters, digits,
// '.', '-', '_' (not starting with '.', at most 100 characters). Throws ApiError 400.
std::string checked_rules_file_name(const nlohmann::json& body);

}  // namespace colltune
