#include "server/http_retune.h"

#include <stdexcept>

#include "campaign/retune.h"
#include "runner/backend_factory.h"
#include "server/metrics.h"

namespace colltune {
namespace {

using nlohmann::json;

const BackendConfig& configured_backend(ApiContext& api, const std::string& name) {
  const BackendConfig* b = api.config.backend(name);
  if (!b) throw bad_request("backend '" + name + "' is not configured on this daemon");
  return *b;
}

json fingerprint_of(ApiContext& api, const std::string& name) {
  const BackendConfig& b = configured_backend(api, name);
  auto backend = make_backend(b.name, b.settings);
  return backend_fingerprint(b.name, b.settings, *backend);
}

}  // namespace

void add_retune_routes(Router& router, ApiContext& api) {
  router.add("GET", "/api/v1/fingerprint", Access::read, {"backend"},
             [&api](const ApiRequest& req, httplib::Response& res) {
               std::string name;
               if (auto q = req.query("backend")) {
                 // A named backend is answered for or refused (400), never swapped for another.
                 name = configured_backend(api, *q).name;
               } else {
                 if (auto rules = rules_version_to_check(api.store, std::nullopt);
                     rules && rules->campaign_id) {
                   if (auto c = api.store.campaign(*rules->campaign_id); c && c->spec.is_object())
                     name = c->spec.value("backend", std::string());
                 }
                 if (name.empty() || !api.config.backend(name))
                   name = api.config.backends.front().name;
               }
               send_json(res, 200, {{"backend", name}, {"fingerprint", fingerprint_of(api, name)}});
             });

  router.add(
      "POST", "/api/v1/retune", Access::admin, {},
      [&api](const ApiRequest& req, httplib::Response& res) {
        const json body = req.json_body(true);
        RetuneOptions options;
        try {
          options = RetuneOptions::from_json(body);
        } catch (const std::invalid_argument& e) {
          throw bad_request(e.what());
        }
        auto current = [&api](const std::string& backend) { return fingerprint_of(api, backend); };
        auto create = [&api](const json& spec) {
          try {
            return api.campaigns.create(spec);
          } catch (const std::invalid_argument& e) {
            throw conflict(std::string("cannot start the re-tuning campaign: ") + e.what());
          }
        };
        const RetuneDecision d = retune(api.store, options, current, create);
        const bool started = d.action == "retune" && d.campaign.has_value();
        if (started) {
          json relevant = json::array();
          for (const auto& c : d.changes)
            if (c.relevant)
              relevant.push_back({{"field", c.field}, {"before", c.before}, {"after", c.after}});
          json payload = {{"campaign_id", d.campaign->id},
                          {"source_campaign_id", d.source->id},
                          {"rules_version_id", d.rules->id},
                          {"reasons", d.reasons},
                          {"changes", relevant}};
          if (body.contains("sentinel")) payload["sentinel"] = body["sentinel"];
          if (req.principal) payload["requested_by"] = req.principal->name;
          api.hub.record(d.campaign->id, kRetuneStartedEvent, payload);
        }
        send_json(res, started ? 201 : 200, d.to_json());
      });

  // A sentinel's report (colltune sentinel --server sends every one, regression or not): kept
  // as an event; /metrics shows the newest verdict and its time.
  router.add("POST", "/api/v1/sentinel/reports", Access::admin, {},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const json body = req.json_body(false);
               if (!body.is_object() || !body.contains("regression") ||
                   !body.at("regression").is_boolean())
                 throw bad_request("a sentinel report is an object with a boolean \"regression\"");
               json payload = body;
               if (req.principal) payload["reported_by"] = req.principal->name;
               api.hub.record(std::nullopt, kSentinelReportEvent, payload);
               send_json(res, 201, {{"recorded", true}, {"regression", body.at("regression")}});
             });
}

}  // namespace colltune
