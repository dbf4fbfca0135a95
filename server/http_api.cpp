#include "server/http_api.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "campaign/campaign_engine.h"
#include "campaign/final_choice.h"
#include "campaign/rules_deployment.h"
#include "rules/rules_deploy.h"
#include "runner/backend_factory.h"
#include "server/openapi.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::vector<std::string> kCampaignStates = {"queued", "running", "paused",
                                                  "done",   "failed",  "cancelled"};
const std::vector<std::string> kJobStates = {"submitting", "running", "done", "failed",
                                             "cancelled"};
constexpr std::int64_t kMaxOffset = 1'000'000'000;
constexpr auto kTransitionWait = std::chrono::seconds(10);

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
              {"purpose", j.purpose},
              {"state", j.state},
              {"created_at", j.created_at},
              {"updated_at", j.updated_at}};
  if (r.is_object()) {
    out["configs"] =
        r.contains("configs") && r.at("configs").is_array() ? r.at("configs").size() : 0;
    out["repeats"] = r.value("repeats", 1);
  }
  return out;
}

json context_json(const ContextRecord& c) {
  return {{"id", c.id},
          {"campaign_id", c.campaign_id},
          {"collective", std::string(name(c.collective))},
          {"comm_size", c.comm_size},
          {"nodes", c.nodes},
          {"ppn", c.ppn},
          {"state", c.state},
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

// Absent fields aside, a body may only hold `known` keys.
void reject_unknown_fields(const json& body, const std::set<std::string>& known) {
  for (const auto& [key, value] : body.items())
    if (!known.count(key))
      throw bad_request("unknown field '" + key.substr(0, 64) + "'" +
                        (known.empty() ? " (this call takes no fields)" : ""));
}

}  // namespace

json campaign_json(const CampaignRecord& c, const CampaignManager::Activity& activity,
                   const Store::CampaignProgress* progress) {
  json out = {{"id", c.id},
              {"name", c.name},
              {"state", c.state},
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

json campaign_convergence(Store& store, std::int64_t campaign_id) {
  json contexts = json::array();
  for (const auto& ctx : store.contexts(campaign_id)) {
    const auto search = store.runs_of_context(ctx.id, "search");
    // The optimizer's initial design (bo strategies keep it in their state).
    std::multiset<TuningConfig> design;
    std::optional<std::size_t> design_size;
    if (ctx.optimizer_state.is_object() && ctx.optimizer_state.contains("design") &&
        ctx.optimizer_state.at("design").is_array()) {
      for (const auto& d : ctx.optimizer_state.at("design")) {
        try {
          design.insert(d.get<TuningConfig>());
        } catch (const std::exception&) {
        }
      }
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
                        {"state", ctx.state},
                        {"initial_design_size", design_size ? json(*design_size) : json(nullptr)},
                        {"evaluations", evaluations},
                        {"sizes", sizes}});
  }
  return {{"campaign_id", campaign_id}, {"contexts", contexts}};
}

void add_api_routes(Router& router, ApiContext& api) {
  // ---- Service.
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
                              static_cast<double>(api.campaigns.active_workers()));
        api.metrics.set_gauge("colltune_event_streams", api.event_streams.load());
        if (api.http_stats) {
          const HttpGateStats http = api.http_stats();
          api.metrics.set_gauge("colltune_http_connections_open", http.open);
          api.metrics.set_gauge("colltune_http_connections_accepted",
                                static_cast<double>(http.accepted));
          api.metrics.set_gauge("colltune_http_connections_refused",
                                static_cast<double>(http.refused_busy));
          api.metrics.set_gauge("colltune_http_head_timeouts",
                                static_cast<double>(http.head_timeouts));
          api.metrics.set_gauge("colltune_http_bad_heads", static_cast<double>(http.bad_heads));
        }
        send_text(res, api.metrics.render(api.store), "text/plain; version=0.0.4; charset=utf-8");
      });

  // ---- Campaigns.
  router.add("GET", "/api/v1/campaigns", Access::read, {"state", "limit", "offset"},
             [&api](const ApiRequest& req, httplib::Response& res) {
               auto state = req.query_enum("state", "", kCampaignStates);
               const auto limit = req.query_int("limit", 50, 1, 1000);
               const auto offset = req.query_int("offset", 0, 0, kMaxOffset);
               json items = json::array();
               for (const auto& c :
                    api.store.campaigns(state, static_cast<int>(limit), static_cast<int>(offset)))
                 items.push_back(campaign_json(c, api.campaigns.activity(c.id), nullptr));
               send_json(res, 200,
                         page_json(items, api.store.count_campaigns(state), limit, offset));
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
  router.add(
      "GET", "/api/v1/campaigns/{id}/jobs", Access::read, {"state", "limit", "offset"},
      [&api](const ApiRequest& req, httplib::Response& res) {
        const auto c = campaign_or_404(api.store, req.id("id"));
        auto state = req.query_enum("state", "", kJobStates);
        const auto limit = req.query_int("limit", 100, 1, 1000);
        const auto offset = req.query_int("offset", 0, 0, kMaxOffset);
        json items = json::array();
        for (const auto& j :
             api.store.jobs_page(state, c.id, static_cast<int>(limit), static_cast<int>(offset)))
          items.push_back(job_json(j));
        send_json(res, 200, page_json(items, api.store.count_jobs(state, c.id), limit, offset));
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
                   std::to_string(comm(r.context_id)) + "," + r.purpose + "," +
                   std::to_string(r.config.algorithm) + "," + std::to_string(r.config.segsize) +
                   "," + std::to_string(r.config.fanout) + "," + std::to_string(r.repeat) + "," +
                   r.outcome + "," + std::to_string(r.row.size) + "," + csv_number(r.row.avg_us) +
                   "," + csv_number(r.row.min_us) + "," + csv_number(r.row.max_us) + "," +
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
               {"purpose", r.purpose},
               {"config", r.config},
               {"repeat", r.repeat},
               {"outcome", r.outcome},
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
               std::string key = c.state + "/" + std::to_string(c.updated_at) + "/" +
                                 std::to_string(api.store.count_jobs("", c.id)) + "/" +
                                 std::to_string(api.store.count_runs(c.id));
               for (const auto& state : api.store.context_states(c.id)) key += "/" + state;
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
                                 " has no rules file yet (state: " + c.state + ")");
               if (format == "text")
                 return send_text(res, versions.front().content, "text/plain; charset=utf-8");
               send_json(res, 200, rules_json(versions.front(), true));
             });

  // ---- Jobs and the queue.
  router.add("GET", "/api/v1/jobs", Access::read, {"state", "campaign_id", "limit", "offset"},
             [&api](const ApiRequest& req, httplib::Response& res) {
               auto state = req.query_enum("state", "", kJobStates);
               const auto campaign = req.query_int("campaign_id", 0, 1, kMaxOffset);
               const auto limit = req.query_int("limit", 100, 1, 1000);
               const auto offset = req.query_int("offset", 0, 0, kMaxOffset);
               json items = json::array();
               for (const auto& j : api.store.jobs_page(state, campaign, static_cast<int>(limit),
                                                        static_cast<int>(offset)))
                 items.push_back(job_json(j));
               send_json(res, 200,
                         page_json(items, api.store.count_jobs(state, campaign), limit, offset));
             });
  router.add("GET", "/api/v1/queue", Access::read, {},
             [&api](const ApiRequest&, httplib::Response& res) {
               send_json(res, 200, {{"backends", api.campaigns.queue()}});
             });

  // ---- Rules versions, deploy, rollback.
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

  // ---- Events (Server-Sent Events).
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

}  // namespace colltune
