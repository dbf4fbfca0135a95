// Internal to the REST API (server/http_api*.cpp): the helpers the route groups share and the
// route groups themselves, one function (and one file) each.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "campaign/campaign_states.h"
#include "server/http_api.h"

namespace colltune::http_api {

// The text of every value of `values` (a ?state= filter's allowed values).
template <typename E, std::size_t N>
std::vector<std::string> names_of(const E (&values)[N]) {
  std::vector<std::string> out;
  for (E value : values) out.emplace_back(to_string(value));
  return out;
}
inline const std::vector<std::string> kCampaignStateNames = names_of(colltune::kCampaignStates);
inline const std::vector<std::string> kJobStateNames = names_of(colltune::kJobStates);
inline constexpr std::int64_t kMaxOffset = 1'000'000'000;
inline constexpr auto kTransitionWait = std::chrono::seconds(10);

// {"items", "total", "limit", "offset"}: one page of a list.
nlohmann::json page_json(nlohmann::json items, std::int64_t total, std::int64_t limit,
                         std::int64_t offset);
// The campaign `id`; throws ApiError 404 when there is none.
CampaignRecord campaign_or_404(Store& store, std::int64_t id);
nlohmann::json job_json(const JobRecord& j);
// One page of jobs (campaign_id 0 = every campaign) in `state` (nullopt = any).
nlohmann::json jobs_page_json(Store& store, std::optional<JobState> state, std::int64_t campaign_id,
                              std::int64_t limit, std::int64_t offset);
nlohmann::json context_json(const ContextRecord& c);
nlohmann::json rules_json(const RulesVersionRecord& r, bool with_content);
// Status 200 with `text` of content type `type`.
void send_text(httplib::Response& res, const std::string& text, const std::string& type);
// A CSV cell: empty when absent, else up to 10 significant digits.
std::string csv_number(std::optional<double> v);
// Absent fields aside, a body may only hold `known` keys (else ApiError 400).
void reject_unknown_fields(const nlohmann::json& body, const std::set<std::string>& known);

// The route groups add_api_routes declares.
void add_meta_routes(Router& router, ApiContext& api);      // health, version, OpenAPI, metrics
void add_campaign_routes(Router& router, ApiContext& api);  // campaigns, contexts, reports
void add_job_routes(Router& router, ApiContext& api);       // jobs and the queue
void add_rules_routes(Router& router, ApiContext& api);     // rules versions, deploy, rollback
void add_event_routes(Router& router, ApiContext& api);     // the Server-Sent Events stream

}  // namespace colltune::http_api
