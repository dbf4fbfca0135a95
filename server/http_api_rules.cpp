// REST routes of rules versions: list, show, deploy, rollback.
#include <filesystem>

#include "campaign/rules_deployment.h"
#include "rules/rules_deploy.h"
#include "server/http_api_internal.h"

namespace colltune {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace http_api;

std::string checked_rules_file_name(const json& body) {
  if (!body.contains("name")) return "colltune-rules.conf";
  if (!body.at("name").is_string()) throw bad_request("name: must be a string");
  const auto name = body.at("name").get<std::string>();
  if (name.empty() || name.size() > 100) throw bad_request("name: must be 1 to 100 characters");
  if (name.front() == '.') throw bad_request("name: must not start with '.'");
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      throw bad_request(
          "name: only letters, digits, '.', '-' and '_' (a file name inside rules_dir)");
  if (name.find("..") != std::string::npos) throw bad_request("name: must not contain '..'");
  if (name.size() >= 8 && name.substr(name.size() - 8) == ".history")
    throw bad_request("name: must not end with .history (reserved for deploy history)");
  return name;
}

namespace http_api {

void add_rules_routes(Router& router, ApiContext& api) {
  router.add("GET", "/api/v1/rules", Access::read, {"campaign_id", "limit", "offset"},
             [&api](const ApiRequest& req, httplib::Response& res) {
               std::optional<std::int64_t> campaign;
               if (req.query("campaign_id"))
                 campaign = req.query_int("campaign_id", 0, 1, kMaxOffset);
               const auto limit = req.query_int("limit", 100, 1, 1000);
               const auto offset = req.query_int("offset", 0, 0, kMaxOffset);
               const auto all = api.store.rules_versions(campaign);
               json items = json::array();
               for (std::size_t i = static_cast<std::size_t>(offset);
                    i < all.size() && items.size() < static_cast<std::size_t>(limit); ++i)
                 items.push_back(rules_json(all[i], false));
               send_json(res, 200,
                         page_json(items, static_cast<std::int64_t>(all.size()), limit, offset));
             });
  router.add("GET", "/api/v1/rules/{id}", Access::read, {"format"},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const auto format = req.query_enum("format", "json", {"json", "text"});
               auto r = api.store.rules_version(req.id("id"));
               if (!r) throw not_found("no rules version " + std::to_string(req.id("id")));
               if (format == "text") return send_text(res, r->content, "text/plain; charset=utf-8");
               send_json(res, 200, rules_json(*r, true));
             });
  // The one path check of deploys and rollbacks is rules/rules_deploy.h's (the CLI's too).
  auto rules_target = [&api](const json& body) {
    if (api.config.rules_dir.empty())
      throw conflict("deploy is disabled: the daemon has no rules_dir configured");
    const fs::path target = fs::path(api.config.rules_dir) / checked_rules_file_name(body);
    try {
      check_deploy_target(target);
    } catch (const DeployRefused& e) {
      throw conflict(e.what());
    }
    return target;
  };
  router.add("POST", "/api/v1/rules/{id}/deploy", Access::admin, {},
             [&api, rules_target](const ApiRequest& req, httplib::Response& res) {
               const json body = req.json_body(true);
               reject_unknown_fields(body, {"name", "force"});
               if (body.contains("force") && !body.at("force").is_boolean())
                 throw bad_request("force: must be true or false");
               const bool force = body.value("force", false);
               auto r = api.store.rules_version(req.id("id"));
               if (!r) throw not_found("no rules version " + std::to_string(req.id("id")));
               if (validation_failed(*r))
                 throw conflict("rules version " + std::to_string(r->id) +
                                " did not pass validation; it cannot be deployed");
               const auto target = rules_target(body);
               const auto unverified = unverified_reason(*r);
               if (unverified && !force)
                 throw ApiError(
                     409, "not_verified",
                     "refusing to deploy: " + *unverified + "; \"force\": true deploys it anyway");
               DeployProvenance provenance;
               provenance.campaign = r->campaign_id ? std::to_string(*r->campaign_id) : "";
               provenance.fingerprint = r->fingerprint.is_null() ? "" : r->fingerprint.dump();
               provenance.source = "colltune daemon: rules version " + std::to_string(r->id);
               if (req.principal) provenance.extra["deployed_by"] = req.principal->name;
               if (unverified) provenance.extra["forced"] = *unverified;
               DeployResult result;
               try {
                 result = deploy_recorded(api.store, *r, target, provenance);
               } catch (const DeployRefused& e) {
                 throw conflict(e.what());
               } catch (const DeployError& e) {
                 throw ApiError(500, "deploy_failed", e.what());
               }
               api.hub.record(r->campaign_id, "rules_deployed",
                              {{"rules_version_id", r->id},
                               {"target", target.string()},
                               {"version", result.version},
                               {"forced", unverified.has_value()}});
               send_json(
                   res, 200,
                   {{"rules_version", rules_json(*api.store.rules_version(r->id), false)},
                    {"deployment",
                     {{"target", target.string()},
                      {"version", result.version},
                      {"previous", result.previous ? json(*result.previous) : json(nullptr)}}},
                    {"forced", unverified ? json(*unverified) : json(nullptr)},
                    {"mca_snippet", mca_snippet(target)}});
             });
  router.add("POST", "/api/v1/rules/rollback", Access::admin, {},
             [&api, rules_target](const ApiRequest& req, httplib::Response& res) {
               const json body = req.json_body(true);
               reject_unknown_fields(body, {"name"});
               const auto target = rules_target(body);
               DeployResult result;
               std::optional<std::int64_t> live;
               try {
                 result = rollback_recorded(api.store, target, live);
               } catch (const DeployError& e) {
                 throw conflict(std::string("cannot roll back: ") + e.what());
               }
               api.hub.record(std::nullopt, "rules_rolled_back",
                              {{"target", target.string()},
                               {"version", result.version},
                               {"rules_version_id", live ? json(*live) : json(nullptr)}});
               send_json(
                   res, 200,
                   {{"deployment",
                     {{"target", target.string()},
                      {"version", result.version},
                      {"previous", result.previous ? json(*result.previous) : json(nullptr)}}},
                    {"rules_version_id", live ? json(*live) : json(nullptr)}});
             });
}

}  // namespace http_api
}  // namespace colltune
