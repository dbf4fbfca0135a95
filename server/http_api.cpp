// The REST API: the helpers its route groups share, and add_api_routes (the groups are in
// server/http_api_*.cpp, one file each).
#include "server/http_api.h"

#include <sstream>

#include "campaign/campaign_engine.h"
#include "campaign/final_choice.h"
#include "campaign/report.h"
#include "campaign/rules_deployment.h"
#include "rules/rules_deploy.h"
#include "runner/backend_factory.h"
#include "server/http_api_internal.h"
#include "server/openapi.h"

namespace colltune {
namespace http_api {

using nlohmann::json;

json page_json(json items, std::int64_t total, std::int64_t limit, std::int64_t offset) {
  return {{"items", std::move(items)}, {"total", total}, {"limit", limit}, {"offset", offset}};
}

CampaignRecord campaign_or_404(Store& store, std::int64_t id) {
  auto c = store.campaign(id);
  if (!c) throw not_found("no campaign " + std::to_string(id));
  return *c;
}

json job_json(const JobRecord& j) {
  const auto& r = j.request;
  json out = {{"id", j.id},
              {"campaign_id", j.campaign_id},
              {"context_id", j.context_id},
              {"tag", j.tag},
              {"backend", j.backend},
              {"backend_job_id", j.backend_job_id},
              {"purpose", to_string(j.purpose)},
              {"state", to_string(j.state)},
              {"created_at", j.created_at},
              {"updated_at", j.updated_at}};
  if (r.is_object()) {
    out["configs"] =
        r.contains("configs") && r.at("configs").is_array() ? r.at("configs").size() : 0;
    out["repeats"] = r.value("repeats", 1);
  }
  return out;
}

json jobs_page_json(Store& store, std::optional<JobState> filter, std::int64_t campaign_id,
                    std::int64_t limit, std::int64_t offset) {
  json items = json::array();
  for (const auto& j :
       store.jobs_page(filter, campaign_id, static_cast<int>(limit), static_cast<int>(offset)))
    items.push_back(job_json(j));
  return page_json(items, store.count_jobs(filter, campaign_id), limit, offset);
}

json context_json(const ContextRecord& c) {
  return {{"id", c.id},
          {"campaign_id", c.campaign_id},
          {"collective", std::string(name(c.collective))},
          {"comm_size", c.comm_size},
          {"nodes", c.nodes},
          {"ppn", c.ppn},
          {"state", to_string(c.state)},
          {"result", c.result}};
}

json rules_json(const RulesVersionRecord& r, bool with_content) {
  json out = {{"id", r.id},
              {"campaign_id", r.campaign_id ? json(*r.campaign_id) : json(nullptr)},
              {"format", r.format},
              {"validation", r.validation},
              {"verification", r.verification},
              {"fingerprint", r.fingerprint},
              {"deployed_to", r.deployed_to},
              {"created_at", r.created_at},
              {"bytes", r.content.size()}};
  if (with_content) out["content"] = r.content;
  return out;
}

void send_text(httplib::Response& res, const std::string& text, const std::string& type) {
  res.status = 200;
  res.set_content(text, type);
}

std::string csv_number(std::optional<double> v) {
  if (!v) return "";
  std::ostringstream s;
  s.precision(10);
  s << *v;
  return s.str();
}

void reject_unknown_fields(const json& body, const std::set<std::string>& known) {
  for (const auto& [key, value] : body.items())
    if (!known.count(key))
      throw bad_request("unknown field '" + key.substr(0, 64) + "'" +
                        (known.empty() ? " (this call takes no fields)" : ""));
}

}  // namespace http_api

void add_api_routes(Router& router, ApiContext& api) {
  http_api::add_meta_routes(router, api);
  http_api::add_campaign_routes(router, api);
  http_api::add_job_routes(router, api);
  http_api::add_rules_routes(router, api);
  http_api::add_event_routes(router, api);
}

}  // namespace colltune
