// The REST API's event stream (Server-Sent Events).
#include <algorithm>
#include <cctype>

#include "server/http_api_internal.h"

namespace colltune {

using nlohmann::json;
using namespace http_api;

namespace http_api {

void add_event_routes(Router& router, ApiContext& api) {
  router.add(
      "GET", "/api/v1/events", Access::read, {"campaign_id", "last_event_id"},
      [&api](const ApiRequest& req, httplib::Response& res) {
        std::optional<std::int64_t> campaign;
        if (req.query("campaign_id")) campaign = req.query_int("campaign_id", 0, 1, kMaxOffset);
        std::optional<std::int64_t> last_id;
        if (req.query("last_event_id"))
          last_id = req.query_int("last_event_id", 0, 0, INT64_MAX / 2);
        if (req.http.has_header("Last-Event-ID")) {
          const auto text = req.http.get_header_value("Last-Event-ID");
          if (text.empty() || text.size() > 18 ||
              !std::all_of(text.begin(), text.end(),
                           [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            throw bad_request("Last-Event-ID must be an event id (digits)");
          last_id = std::stoll(text);
        }
        const std::string client = req.http.remote_addr;
        {
          std::lock_guard<std::mutex> lock(api.streams_mutex);
          if (api.streams_per_client[client] >= api.config.max_event_streams_per_client)
            throw ApiError(429, "too_many_requests",
                           "too many event streams open from " + client + " (" +
                               std::to_string(api.config.max_event_streams_per_client) + ")");
          ++api.streams_per_client[client];
        }
        auto release_client = [&api, client] {
          std::lock_guard<std::mutex> lock(api.streams_mutex);
          if (--api.streams_per_client[client] <= 0) api.streams_per_client.erase(client);
        };
        if (api.event_streams.fetch_add(1) >= api.config.max_event_streams) {
          api.event_streams.fetch_sub(1);
          release_client();
          throw ApiError(
              503, "unavailable",
              "too many event streams open (" + std::to_string(api.config.max_event_streams) + ")");
        }
        auto subscription = std::make_shared<EventSubscription>(api.hub, last_id, campaign);
        res.status = 200;
        res.set_header("Cache-Control", "no-cache");
        res.set_header("X-Accel-Buffering", "no");
        res.set_chunked_content_provider(
            "text/event-stream",
            [&api, subscription, first = true, idle = 0](std::size_t,
                                                         httplib::DataSink& sink) mutable {
              if (first) {
                first = false;
                const std::string hello = "retry: 2000\n: colltune events\n\n";
                return sink.write(hello.data(), hello.size());
              }
              if (api.hub.closed()) {
                sink.done();
                return true;
              }
              auto events = subscription->next(std::chrono::seconds(1));
              std::string out;
              for (const auto& e : events) out += format_sse(e);
              if (out.empty()) {
                // A comment now and then keeps proxies and dead-peer detection honest.
                if (++idle % 15 != 0) return sink.is_writable();
                out = ": keepalive\n\n";
              }
              return sink.write(out.data(), out.size());
            },
            [&api, release_client](bool) {
              api.event_streams.fetch_sub(1);
              release_client();
            });
      },
      /*streaming=*/true);
}

}  // namespace http_api
}  // namespace colltune
