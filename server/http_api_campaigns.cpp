// REST routes of campaigns: list, create, show, pause/resume/cancel, contexts, results,
// convergence, report, rules of a campaign.
#include <cmath>
#include <set>
#include <sstream>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_states.h"
#include "campaign/final_choice.h"
#include "campaign/report.h"
#include "optimizer/strategy.h"
#include "server/http_api_internal.h"

namespace colltune {

using nlohmann::json;
using namespace http_api;

json campaign_json(const CampaignRecord& c, const CampaignManager::Activity& activity,
                   const Store::CampaignProgress* progress) {
  json out = {{"id", c.id},
              {"name", c.name},
              {"state", to_string(c.state)},
              {"backend", c.spec.is_object() ? c.spec.value("backend", "") : ""},
              {"error", c.error},
              {"created_at", c.created_at},
              {"updated_at", c.updated_at},
              {"active", activity.active},
              {"pending_action", activity.pending.empty() ? json(nullptr) : json(activity.pending)},
              {"spec", c.spec}};
  if (progress)
    out["progress"] = {{"contexts", progress->contexts},
                       {"contexts_done", progress->contexts_done},
                       {"runs", progress->runs}};
  return out;
}

json campaign_convergence(Store& store, std::int64_t campaign_id) {
  json contexts = json::array();
  for (const auto& ctx : store.contexts(campaign_id)) {
    const auto search = store.runs_of_context(ctx.id, JobPurpose::search);
    // The optimizer's initial design (bo strategies keep it in their state).
    std::multiset<TuningConfig> design;
    std::optional<std::size_t> design_size;
    if (const auto initial = initial_design_of(ctx.optimizer_state)) {
      design.insert(initial->begin(), initial->end());
      design_size = design.size();
    }
    std::map<std::int64_t, std::vector<double>> default_samples;
    for (const auto& run : store.runs_of_context(ctx.id))
      if (run.config == TuningConfig::default_decision() && run.outcome == RunOutcome::ok)
        for (const auto& row : run.rows) default_samples[row.size].push_back(row.avg_us);

    json evaluations = json::array();
    std::map<std::int64_t, json> best_series;  // size -> best so far per evaluation
    std::map<std::int64_t, double> best;
    std::size_t n = 0;
    for (const auto& run : search) {
      ++n;
      bool initial = false;
      if (auto it = design.find(run.config); it != design.end()) {
        initial = true;
        design.erase(it);
      }
      const bool ok = run.outcome == RunOutcome::ok;
      evaluations.push_back({{"n", n},
                             {"run_id", run.id},
                             {"config", run.config},
                             {"outcome", std::string(to_string(run.outcome))},
                             {"initial_design", design_size ? json(initial) : json(nullptr)}});
      for (const auto& row : run.rows) {
        if (!ok) break;
        auto b = best.find(row.size);
        if (b == best.end() || row.avg_us < b->second) best[row.size] = row.avg_us;
      }
      for (const auto& [size, value] : best) {
        auto& series = best_series[size];
        if (series.is_null()) series = json::array();
        while (series.size() + 1 < n) series.push_back(nullptr);  // size first seen late
        series.push_back(value);
      }
    }
    json sizes = json::array();
    for (auto& [size, series] : best_series) {
      auto d = default_samples.find(size);
      sizes.push_back(
          {{"msg_size", size},
           {"default_us", d == default_samples.end() ? json(nullptr) : json(median(d->second))},
           {"best_us", series}});
    }
    contexts.push_back({{"context_id", ctx.id},
                        {"collective", std::string(name(ctx.collective))},
                        {"comm_size", ctx.comm_size},
                        {"state", to_string(ctx.state)},
                        {"initial_design_size", design_size ? json(*design_size) : json(nullptr)},
                        {"evaluations", evaluations},
                        {"sizes", sizes}});
  }
  return {{"campaign_id", campaign_id}, {"contexts", contexts}};
}

namespace http_api {

void add_campaign_routes(Router& router, ApiContext& api) {
  router.add(
      "GET", "/api/v1/campaigns", Access::read, {"state", "limit", "offset"},
      [&api](const ApiRequest& req, httplib::Response& res) {
        const auto state = parse_campaign_state(req.query_enum("state", "", kCampaignStateNames));
        const auto limit = req.query_int("limit", 50, 1, 1000);
        const auto offset = req.query_int("offset", 0, 0, kMaxOffset);
        json items = json::array();
        for (const auto& c :
             api.store.campaigns(state, static_cast<int>(limit), static_cast<int>(offset)))
          items.push_back(campaign_json(c, api.campaigns.activity(c.id), nullptr));
        send_json(res, 200, page_json(items, api.store.count_campaigns(state), limit, offset));
      });
  router.add("POST", "/api/v1/campaigns", Access::admin, {},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const json spec = req.json_body(false);
               CampaignRecord c;
               try {
                 c = api.campaigns.create(spec);
               } catch (const std::invalid_argument& e) {
                 throw bad_request(std::string("invalid campaign spec: ") + e.what());
               }
               const auto progress = api.store.campaign_progress(c.id);
               res.set_header("Location", "/api/v1/campaigns/" + std::to_string(c.id));
               send_json(res, 201, campaign_json(c, api.campaigns.activity(c.id), &progress));
             });
  router.add("GET", "/api/v1/campaigns/{id}", Access::read, {},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const auto c = campaign_or_404(api.store, req.id("id"));
               const auto progress = api.store.campaign_progress(c.id);
               send_json(res, 200, campaign_json(c, api.campaigns.activity(c.id), &progress));
             });
  auto transition = [&api](const std::string& action) {
    return [&api, action](const ApiRequest& req, httplib::Response& res) {
      reject_unknown_fields(req.json_body(true), {});
      const auto id = req.id("id");
      CampaignRecord c;
      try {
        if (action == "pause")
          c = api.campaigns.pause(id, kTransitionWait);
        else if (action == "resume")
          c = api.campaigns.resume(id);
        else
          c = api.campaigns.cancel(id, kTransitionWait);
      } catch (const CampaignNotFound& e) {
        throw not_found(e.what());
      } catch (const CampaignConflict& e) {
        throw conflict(e.what());
      }
      const auto activity = api.campaigns.activity(id);
      const auto progress = api.store.campaign_progress(id);
      // 202 while the worker has not stopped yet.
      send_json(res, activity.pending.empty() ? 200 : 202, campaign_json(c, activity, &progress));
    };
  };
  router.add("POST", "/api/v1/campaigns/{id}/pause", Access::admin, {}, transition("pause"));
  router.add("POST", "/api/v1/campaigns/{id}/resume", Access::admin, {}, transition("resume"));
  router.add("POST", "/api/v1/campaigns/{id}/cancel", Access::admin, {}, transition("cancel"));

  router.add("GET", "/api/v1/campaigns/{id}/contexts", Access::read, {},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const auto c = campaign_or_404(api.store, req.id("id"));
               json items = json::array();
               for (const auto& ctx : api.store.contexts(c.id)) items.push_back(context_json(ctx));
               send_json(res, 200, {{"items", items}});
             });
  router.add("GET", "/api/v1/campaigns/{id}/jobs", Access::read, {"state", "limit", "offset"},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const auto state = parse_job_state(req.query_enum("state", "", kJobStateNames));
               const auto c = campaign_or_404(api.store, req.id("id"));
               const auto limit = req.query_int("limit", 100, 1, 1000);
               const auto offset = req.query_int("offset", 0, 0, kMaxOffset);
               send_json(res, 200, jobs_page_json(api.store, state, c.id, limit, offset));
             });
  router.add(
      "GET", "/api/v1/campaigns/{id}/measurements", Access::read, {"limit", "offset", "format"},
      [&api](const ApiRequest& req, httplib::Response& res) {
        const auto c = campaign_or_404(api.store, req.id("id"));
        const auto format = req.query_enum("format", "json", {"json", "csv"});
        const auto limit = req.query_int("limit", format == "csv" ? 100000 : 1000, 1, 100000);
        const auto offset = req.query_int("offset", 0, 0, kMaxOffset);
        std::map<std::int64_t, ContextRecord> contexts;
        for (auto& ctx : api.store.contexts_brief(c.id)) contexts[ctx.id] = std::move(ctx);
        const auto rows =
            api.store.measurements_page(c.id, static_cast<int>(limit), static_cast<int>(offset));
        auto coll = [&](std::int64_t ctx) {
          auto it = contexts.find(ctx);
          return it == contexts.end() ? std::string() : std::string(name(it->second.collective));
        };
        auto comm = [&](std::int64_t ctx) {
          auto it = contexts.find(ctx);
          return it == contexts.end() ? 0 : it->second.comm_size;
        };
        if (format == "csv") {
          std::string out =
              "run_id,job_id,context_id,collective,comm_size,purpose,algorithm,segsize,fanout,"
              "repeat,outcome,msg_size,avg_us,min_us,max_us,iterations\n";
          for (const auto& r : rows) {
            out += std::to_string(r.run_id) + "," + std::to_string(r.job_id) + "," +
                   std::to_string(r.context_id) + "," + coll(r.context_id) + "," +
                   std::to_string(comm(r.context_id)) + "," + to_string(r.purpose) + "," +
                   std::to_string(r.config.algorithm) + "," + std::to_string(r.config.segsize) +
                   "," + std::to_string(r.config.fanout) + "," + std::to_string(r.repeat) + "," +
                   std::string(to_string(r.outcome)) + "," + std::to_string(r.row.size) + "," +
                   csv_number(r.row.avg_us) + "," + csv_number(r.row.min_us) + "," +
                   csv_number(r.row.max_us) + "," +
                   (r.row.iterations ? std::to_string(*r.row.iterations) : "") + "\n";
          }
          res.set_header("Content-Disposition", "attachment; filename=\"campaign-" +
                                                    std::to_string(c.id) + "-measurements.csv\"");
          send_text(res, out, "text/csv; charset=utf-8");
          return;
        }
        json items = json::array();
        for (const auto& r : rows)
          items.push_back(
              {{"run_id", r.run_id},
               {"job_id", r.job_id},
               {"context_id", r.context_id},
               {"collective", coll(r.context_id)},
               {"comm_size", comm(r.context_id)},
               {"purpose", to_string(r.purpose)},
               {"config", r.config},
               {"repeat", r.repeat},
               {"outcome", to_string(r.outcome)},
               {"msg_size", r.row.size},
               {"avg_us", r.row.avg_us},
               {"min_us", r.row.min_us ? json(*r.row.min_us) : json(nullptr)},
               {"max_us", r.row.max_us ? json(*r.row.max_us) : json(nullptr)},
               {"iterations", r.row.iterations ? json(*r.row.iterations) : json(nullptr)},
               {"recorded_at", r.recorded_at}});
        send_json(res, 200, page_json(items, api.store.count_measurements(c.id), limit, offset));
      });
  router.add("GET", "/api/v1/campaigns/{id}/convergence", Access::read, {},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const auto c = campaign_or_404(api.store, req.id("id"));
               send_json(res, 200, campaign_convergence(api.store, c.id));
             });
  router.add("GET", "/api/v1/campaigns/{id}/report", Access::read, {},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const auto c = campaign_or_404(api.store, req.id("id"));
               const std::string backend = c.spec.is_object() ? c.spec.value("backend", "") : "";
               std::string key = std::string(to_string(c.state)) + "/" +
                                 std::to_string(c.updated_at) + "/" +
                                 std::to_string(api.store.count_jobs(std::nullopt, c.id)) + "/" +
                                 std::to_string(api.store.count_runs(c.id));
               for (const auto state : api.store.context_states(c.id))
                 key += std::string("/") + to_string(state);
               std::string text;
               {
                 std::lock_guard lock(api.reports_mutex);
                 auto it = api.reports.find(c.id);
                 if (it != api.reports.end() && it->second.first == key) text = it->second.second;
               }
               if (text.empty()) {
                 text = campaign_report(api.store, c.id, api.campaigns.table_for(backend))
                            .dump(-1, ' ', false, json::error_handler_t::replace) +
                        "\n";
                 std::lock_guard lock(api.reports_mutex);
                 if (api.reports.size() > 256) api.reports.clear();
                 api.reports[c.id] = {key, text};
               }
               res.status = 200;
               res.set_content(text, "application/json");
             });
  router.add("GET", "/api/v1/campaigns/{id}/rules", Access::read, {"format"},
             [&api](const ApiRequest& req, httplib::Response& res) {
               const auto c = campaign_or_404(api.store, req.id("id"));
               const auto format = req.query_enum("format", "json", {"json", "text"});
               const auto versions = api.store.rules_versions(c.id);
               if (versions.empty())
                 throw not_found("campaign " + std::to_string(c.id) +
                                 " has no rules file yet (state: " + to_string(c.state) + ")");
               if (format == "text")
                 return send_text(res, versions.front().content, "text/plain; charset=utf-8");
               send_json(res, 200, rules_json(versions.front(), true));
             });
}

}  // namespace http_api
}  // namespace colltune
