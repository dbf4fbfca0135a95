#include "campaign/report.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "campaign/campaign_states.h"
#include "campaign/cluster_search.h"
#include "campaign/context_result.h"
#include "core/iso_time.h"
#include "core/version.h"
#include "optimizer/final_choice.h"

namespace colltune {
namespace {

std::optional<double> number_or_none(const nlohmann::json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j.at(key).is_number()) return j.at(key).get<double>();
  return std::nullopt;
}

std::optional<double> number_of(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  return std::nullopt;
}

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json text_or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

// [lowest, highest] of the runs' latencies, null without runs.
nlohmann::json range_of(const std::vector<double>& values) {
  if (values.empty()) return nlohmann::json();
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return nlohmann::json::array({*lo, *hi});
}

nlohmann::json cost_part_json(const ReportCostPart& p) {
  return {{"jobs", p.jobs},
          {"runs", p.runs},
          {"benchmark_seconds", p.benchmark_seconds},
          {"node_seconds", p.node_seconds}};
}

bool ended(CampaignState state) {
  return state == CampaignState::done || state == CampaignState::failed ||
         state == CampaignState::cancelled;
}

// The header's where and with what: from the runs' provenance (what the numbers were measured
// on), not from the machine building the report.
void fill_provenance(Store& store, std::int64_t campaign_id, ReportHeader& header) {
  std::set<std::string> hosts;
  for (const auto& job : store.jobs(campaign_id))
    for (const auto& run : store.runs_of_job(job.id)) {
      const Provenance& p = run.provenance;
      if (header.host.empty()) header.host = p.host;
      if (header.ompi_version.empty()) header.ompi_version = p.ompi_version;
      if (!p.host.empty() && p.hosts.empty()) hosts.insert(p.host);
      hosts.insert(p.hosts.begin(), p.hosts.end());
    }
  header.hosts.assign(hosts.begin(), hosts.end());
}

}  // namespace

CampaignReport build_campaign_report(Store& store, std::int64_t campaign_id,
                                     const AlgorithmTable& table) {
  auto campaign = store.campaign(campaign_id);
  if (!campaign) throw std::invalid_argument("no campaign " + std::to_string(campaign_id));
  CampaignReport report;
  report.header.colltune_version = std::string(kColltuneVersion);
  report.header.backend = campaign->spec.is_object() ? campaign->spec.value("backend", "") : "";
  report.header.created_at = iso8601_utc(campaign->created_at);
  if (ended(campaign->state)) report.header.finished_at = iso8601_utc(campaign->updated_at);
  report.header.generated_at = iso8601_now();
  fill_provenance(store, campaign_id, report.header);
  report.campaign = {campaign->id, campaign->name, campaign->state, campaign->spec,
                     campaign->error};

  // The re-measurement with the file loaded (rules stage), per (collective, P, size).
  const auto versions = store.rules_versions(campaign_id);
  std::map<std::tuple<std::string, int, std::int64_t>, nlohmann::json> remeasured_rows;
  // The newest version that was re-measured (a last, trace-only pass re-measures nothing; the
  // sizes it reverted are at the default in its picks).
  const RulesVersionRecord* measured_version = nullptr;
  for (const auto& v : versions)
    if (!measured_version && v.verification.value("remeasured", false)) measured_version = &v;
  if (measured_version)
    for (const auto& c : measured_version->verification.value("contexts", nlohmann::json::array()))
      for (const auto& row : c.value("remeasure", nlohmann::json::array()))
        remeasured_rows[{c.value("collective", std::string()), c.value("comm_size", 0),
                         row.value("msg_size", std::int64_t{0})}] = row;
  for (const auto& ctx : store.contexts(campaign_id)) {
    ReportContext rc;
    rc.id = ctx.id;
    rc.collective = std::string(name(ctx.collective));
    rc.comm_size = ctx.comm_size;
    rc.nodes = ctx.nodes;
    rc.ppn = ctx.ppn;
    rc.state = ctx.state;
    if (ctx.result.is_object()) {
      rc.evaluations = ctx.result.value("evaluations", 0);
      rc.space = ctx.result.value("space", 0);
      rc.failed_sizes = ctx.result.value("failed_sizes", nlohmann::json::array());
    }
    report.contexts.push_back(rc);
    const std::optional<ContextResult> result = context_result_of(ctx.result);
    if (!result) continue;
    // Medians of the re-measure runs (tuned = rules file loaded, default) of the newest file.
    std::map<std::int64_t, std::vector<double>> tuned, fixed;
    const std::string newest =
        measured_version ? "-v" + std::to_string(measured_version->id) + "-" : std::string();
    for (const auto& job : store.jobs(campaign_id)) {
      if (job.context_id != ctx.id || newest.empty() || job.tag.find(newest) == std::string::npos)
        continue;
      auto* target = job.purpose == JobPurpose::remeasure_tuned     ? &tuned
                     : job.purpose == JobPurpose::remeasure_default ? &fixed
                                                                    : nullptr;
      if (!target) continue;
      for (const auto& run : store.runs_of_job(job.id)) {
        if (run.outcome != RunOutcome::ok) continue;
        for (const auto& row : run.rows) (*target)[row.size].push_back(row.avg_us);
      }
    }
    // Every other measurement (search and final phase) per configuration and size: the spread
    // of the latencies behind default_us and best_us when nothing was re-measured. Verify and
    // re-measure runs load the file and say "default" for what the file chose: left out.
    std::map<std::pair<TuningConfig, std::int64_t>, std::vector<double>> measured;
    for (const auto& run : store.runs_of_context(ctx.id)) {
      if (run.outcome != RunOutcome::ok ||
          (run.purpose != JobPurpose::search && run.purpose != JobPurpose::final))
        continue;
      for (const auto& row : run.rows) measured[{run.config, row.size}].push_back(row.avg_us);
    }
    const std::string coll = rc.collective;
    for (const ContextPick& p : result->picks) {
      ReportResult r;
      r.collective = coll;
      r.comm_size = ctx.comm_size;
      r.msg_size = p.msg_size;
      r.best = p.best;
      r.best_name = table.algorithm_name(ctx.collective, r.best.algorithm);
      r.noise = p.noise;
      r.default_within_noise = p.default_within_noise;
      r.search_default_us = number_of(p.default_us);
      r.search_best_us = number_of(p.best_us);
      r.final_method = p.method_or_median();
      r.reverted = p.reverted;
      r.candidate = p.extra.value("candidate", nlohmann::json());
      // "not_run": a whole-cluster size its search never reached; the default stands (note).
      r.source = p.extra.value("source", std::string("measured"));
      r.note = p.extra.value("note", std::string());
      r.untested_for_money = p.extra.value("untested_for_money", false);
      r.default_us = r.search_default_us;
      r.best_us = r.search_best_us;
      // The speed-up and its interval: from the re-measure with the file loaded when there is
      // one, else from the final phase's pairs. A size left to the default measures the same
      // thing twice: its speed-up is 1 by construction, the interval shows the noise.
      std::optional<double> ratio, low, high;
      r.speedup_source = "final";
      auto row = remeasured_rows.find({coll, ctx.comm_size, r.msg_size});
      r.remeasured =
          row != remeasured_rows.end() && tuned.count(r.msg_size) && fixed.count(r.msg_size);
      if (r.remeasured) {
        r.speedup_source = "remeasure";
        ratio = number_or_none(row->second, "ratio");
        low = number_or_none(row->second, "ratio_low");
        high = number_or_none(row->second, "ratio_high");
        r.pairs = row->second.value("pairs", 0);
        r.confidence = number_or_none(row->second, "confidence");
        if (r.best.is_default()) {
          std::vector<double> pooled = fixed[r.msg_size];
          pooled.insert(pooled.end(), tuned[r.msg_size].begin(), tuned[r.msg_size].end());
          r.default_us = median(pooled);
          r.best_us = median(pooled);
        } else {
          r.default_us = median(fixed[r.msg_size]);
          r.best_us = median(tuned[r.msg_size]);
        }
        r.remeasure_samples = r.pairs;
        std::vector<double> pooled = fixed[r.msg_size];
        pooled.insert(pooled.end(), tuned[r.msg_size].begin(), tuned[r.msg_size].end());
        r.default_us_range = range_of(r.best.is_default() ? pooled : fixed[r.msg_size]);
        r.best_us_range = range_of(r.best.is_default() ? pooled : tuned[r.msg_size]);
      } else {
        if (r.final_method == "paired") {
          ratio = number_or_none(p.extra, "ratio");
          low = number_or_none(p.extra, "ratio_low");
          high = number_or_none(p.extra, "ratio_high");
          r.pairs = p.extra.value("pairs", 0);
          r.confidence = number_or_none(p.extra, "confidence");
        }
        r.default_us_range = range_of(measured[{TuningConfig::default_decision(), r.msg_size}]);
        r.best_us_range = range_of(measured[{r.best, r.msg_size}]);
      }
      // speedup = default / tuned; its interval is the inverse of the ratio's.
      if (r.best.is_default())
        r.speedup = 1.0;
      else if (ratio && *ratio > 0)
        r.speedup = 1 / *ratio;
      else if (r.default_us && r.best_us && *r.best_us > 0)
        r.speedup = *r.default_us / *r.best_us;
      if (high && *high > 0) r.speedup_low = 1 / *high;
      if (low && *low > 0) r.speedup_high = 1 / *low;
      // A tie: the file keeps the default here, or the interval does not exclude 1.
      r.tie = r.best.is_default() || !r.speedup_low || *r.speedup_low <= 1.0;
      report.results.push_back(std::move(r));
    }
  }
  const auto jobs = store.jobs(campaign_id);
  report.cost.jobs = static_cast<std::int64_t>(jobs.size());
  std::map<std::int64_t, int> nodes_of;
  for (const auto& ctx : store.contexts(campaign_id)) nodes_of[ctx.id] = std::max(1, ctx.nodes);
  for (const auto& job : jobs) {
    const auto job_runs = store.runs_of_job(job.id);
    ReportCostPart& part = report.cost.by_purpose[job.purpose];
    ++part.jobs;
    part.runs += static_cast<std::int64_t>(job_runs.size());
    report.cost.runs += static_cast<std::int64_t>(job_runs.size());
    const int nodes = nodes_of.count(job.context_id) ? nodes_of[job.context_id] : 1;
    for (const auto& run : job_runs) {
      const double seconds = observed_seconds(run.provenance);
      part.benchmark_seconds += seconds;
      part.node_seconds += seconds * nodes;
      report.cost.benchmark_seconds += seconds;
      report.cost.node_seconds += seconds * nodes;
    }
  }
  if (!versions.empty()) {
    const auto& v = versions.front();
    ReportRules rules;
    for (const auto& version : versions)
      for (const auto& r : version.verification.value("reverted", nlohmann::json::array()))
        rules.reverted.push_back(r);
    rules.version_id = v.id;
    rules.format = v.format;
    rules.loads = v.validation.value("deployable", false);
    rules.deployable =
        v.validation.value("deployable", false) && v.verification.value("deployable", false);
    rules.verdict = v.validation.value("verdict", std::string());
    rules.verified = v.verification.value("verified", false);
    rules.verification_skipped = v.verification.value("skipped", false);
    rules.reason = v.verification.value("reason", std::string());
    report.rules = rules;
  }
  // Whole-cluster campaigns: the predicted cells (source "predicted", the model's confidence)
  // beside the measured ones, and per collective what the search did.
  const nlohmann::json cluster = cluster_report(store.contexts(campaign_id), table);
  if (!cluster.is_null()) {
    report.cluster = cluster.at("collectives");
    report.predicted = cluster.at("predicted");
  }
  return report;
}

nlohmann::json CampaignReport::to_json() const {
  nlohmann::json contexts_json = nlohmann::json::array();
  for (const auto& c : contexts)
    contexts_json.push_back({{"id", c.id},
                             {"collective", c.collective},
                             {"comm_size", c.comm_size},
                             {"nodes", c.nodes},
                             {"ppn", c.ppn},
                             {"state", to_string(c.state)},
                             {"evaluations", c.evaluations},
                             {"space", c.space},
                             {"failed_sizes", c.failed_sizes}});
  nlohmann::json results_json = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json e = {{"collective", r.collective},
                        {"comm_size", r.comm_size},
                        {"msg_size", r.msg_size},
                        {"best", r.best},
                        {"best_name", r.best_name},
                        {"noise", r.noise},
                        {"default_within_noise", r.default_within_noise},
                        {"search_default_us", or_null(r.search_default_us)},
                        {"search_best_us", or_null(r.search_best_us)},
                        {"final_method", r.final_method},
                        {"source", r.source},
                        {"reverted", r.reverted},
                        {"remeasured", r.remeasured},
                        {"default_us", or_null(r.default_us)},
                        {"best_us", or_null(r.best_us)},
                        {"speedup_source", r.speedup_source},
                        {"pairs", r.pairs},
                        {"confidence", or_null(r.confidence)},
                        {"speedup", or_null(r.speedup)},
                        {"speedup_low", or_null(r.speedup_low)},
                        {"speedup_high", or_null(r.speedup_high)},
                        {"tie", r.tie},
                        {"default_us_range", r.default_us_range},
                        {"best_us_range", r.best_us_range}};
    if (!r.candidate.is_null()) e["candidate"] = r.candidate;
    if (!r.note.empty()) e["note"] = r.note;
    if (r.untested_for_money) e["untested_for_money"] = true;
    if (r.remeasure_samples) e["remeasure_samples"] = *r.remeasure_samples;
    results_json.push_back(std::move(e));
  }
  nlohmann::json rules_json = nullptr;
  if (rules)
    rules_json = {{"version_id", rules->version_id},
                  {"format", rules->format},
                  {"loads", rules->loads},
                  {"deployable", rules->deployable},
                  {"verdict", rules->verdict},
                  {"verified", rules->verified},
                  {"verification_skipped", rules->verification_skipped},
                  {"reason", rules->reason},
                  {"reverted", rules->reverted}};
  return {{"schema_version", header.schema_version},
          {"colltune_version", header.colltune_version},
          {"backend", header.backend},
          {"ompi_version", text_or_null(header.ompi_version)},
          {"host", text_or_null(header.host)},
          {"hosts", header.hosts},
          {"created_at", header.created_at},
          {"finished_at", text_or_null(header.finished_at)},
          {"generated_at", header.generated_at},
          {"campaign",
           {{"id", campaign.id},
            {"name", campaign.name},
            {"state", to_string(campaign.state)},
            {"spec", campaign.spec},
            {"error", campaign.error}}},
          {"contexts", contexts_json},
          {"results", results_json},
          {"cluster", cluster},
          {"predicted", predicted},
          {"rules", rules_json},
          {"cost", [&] {
             nlohmann::json out = cost_part_json(cost);
             out["by_purpose"] = nlohmann::json::object();
             for (const auto& [purpose, part] : cost.by_purpose)
               out["by_purpose"][to_string(purpose)] = cost_part_json(part);
             return out;
           }()}};
}

nlohmann::json campaign_report(Store& store, std::int64_t campaign_id,
                               const AlgorithmTable& table) {
  return build_campaign_report(store, campaign_id, table).to_json();
}

}  // namespace colltune
