// REST routes about the service itself: health, version, the OpenAPI document, metrics.
#include "runner/backend_factory.h"
#include "server/http_api_internal.h"
#include "server/openapi.h"

namespace colltune {

using nlohmann::json;
using namespace http_api;

namespace http_api {

void add_meta_routes(Router& router, ApiContext& api) {
  router.add("GET", "/api/v1/health", Access::public_, {},
             [&api](const ApiRequest&, httplib::Response& res) {
               send_json(res, 200,
                         {{"status", "ok"}, {"active_campaigns", api.campaigns.active_workers()}});
             });
  router.add(
      "GET", "/api/v1/version", Access::read, {},
      [&api](const ApiRequest&, httplib::Response& res) {
        json backends = json::array();
        for (const auto& b : api.config.backends)
          backends.push_back({{"name", b.name}, {"max_concurrent_jobs", b.max_concurrent_jobs}});
        send_json(res, 200,
                  {{"name", "colltune"},
                   {"version", "0.1.0"},
                   {"api", "v1"},
                   {"schema_version", Store::kSchemaVersion},
                   {"backends", backends},
                   {"known_backends", backend_names()},
                   {"tls", api.config.tls()},
                   {"rules_dir",
                    api.config.rules_dir.empty() ? json(nullptr) : json(api.config.rules_dir)}});
      });
  router.add("GET", "/api/openapi.json", Access::public_, {},
             [](const ApiRequest&, httplib::Response& res) {
               send_text(res, std::string(openapi_text()), "application/json");
             });
  router.add(
      "GET", "/metrics", Access::read, {}, [&api](const ApiRequest&, httplib::Response& res) {
        api.metrics.set_gauge("colltune_active_campaign_workers",
                              "Campaigns running now (one worker each).",
                              static_cast<double>(api.campaigns.active_workers()));
        api.metrics.set_gauge("colltune_event_streams", "Open event streams (GET /api/v1/events).",
                              api.event_streams.load());
        if (api.http_stats) {
          const HttpGateStats http = api.http_stats();
          api.metrics.set_gauge("colltune_http_connections_open", "HTTP connections open now.",
                                http.open);
          api.metrics.set_counter("colltune_http_connections_accepted_total",
                                  "HTTP connections accepted since the start.",
                                  static_cast<double>(http.accepted));
          api.metrics.set_counter("colltune_http_connections_refused_total",
                                  "HTTP connections refused (all workers busy) since the start.",
                                  static_cast<double>(http.refused_busy));
          api.metrics.set_counter("colltune_http_head_timeouts_total",
                                  "Connections closed because the request head came too slowly.",
                                  static_cast<double>(http.head_timeouts));
          api.metrics.set_counter("colltune_http_bad_heads_total",
                                  "Connections closed on a malformed request head.",
                                  static_cast<double>(http.bad_heads));
        }
        send_text(res, api.metrics.render(api.store), "text/plain; version=0.0.4; charset=utf-8");
      });
}

}  // namespace http_api
}  // namespace colltune
