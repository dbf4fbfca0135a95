// REST routes of benchmark jobs and the scheduler's queue.
#include "server/http_api_internal.h"

namespace colltune {

using nlohmann::json;
using namespace http_api;

namespace http_api {

void add_job_routes(Router& router, ApiContext& api) {
  router.add("GET", "/api/v1/jobs", Access::read, {"state", "campaign_id", "limit", "offset"},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const auto state = parse_job_state(req.query_enum("state", "", kJobStateNames));
               const auto campaign = req.query_int("campaign_id", 0, 1, kMaxOffset);
               const auto limit = req.query_int("limit", 100, 1, 1000);
               const auto offset = req.query_int("offset", 0, 0, kMaxOffset);
               send_json(res, 200, jobs_page_json(api.store, state, campaign, limit, offset));
             });
  router.add("GET", "/api/v1/queue", Access::read, {},
             [&api](const ApiRequest&, httplib::Response& res) {
               send_json(res, 200, {{"backends", api.campaigns.queue()}});
             });
}

}  // namespace http_api
}  // namespace colltune
