#include "server/campaign_engine.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "optimizer/search_space.h"
#include "optimizer/strategy.h"
#include "server/context_request.h"
#include "server/final_choice.h"
#include "server/job_executor.h"
#include "server/retune_warm_start.h"

namespace colltune {
namespace {

Evaluation evaluation_of(const RunRecord& run) {
  Evaluation e;
  e.config = run.config;
  e.failed = is_failed_outcome(run.outcome);
  for (const auto& row : run.rows) {
    e.msg_sizes.push_back(row.size);
    e.latency_us.push_back(row.avg_us);
  }
  return e;
}

std::string job_tag(std::int64_t campaign_id, std::int64_t context_id, const std::string& purpose,
                    std::size_t number) {
  return "ct-c" + std::to_string(campaign_id) + "-x" + std::to_string(context_id) + "-" + purpose +
         std::to_string(number);
}

}  // namespace

CampaignEngine::CampaignEngine(Store& store, Backend& backend, const AlgorithmTable& table,
                               EventCallback on_event)
    : store_(store),
      backend_(backend),
      table_(table),
      on_event_(std::move(on_event)),
      executor_(store, backend, on_event_) {}

std::int64_t CampaignEngine::create_campaign(Store& store, const CampaignSpec& spec) {
  std::vector<Store::NewContext> contexts;
  for (const auto& c : spec.contexts)
    contexts.push_back({c.collective, c.comm_size, c.nodes, c.ppn});
  return store.create_campaign_with_contexts(spec.name, to_json(spec), "queued", contexts);
}

void CampaignEngine::check_admissible(Store& store, Backend& backend, const CampaignSpec& spec) {
  for (std::size_t i = 0; i < spec.contexts.size(); ++i) {
    const auto& context = spec.contexts[i];
    const std::string reason = backend.admit(context_request(context, spec, "admit"));
    if (!reason.empty())
      throw std::invalid_argument("contexts[" + std::to_string(i) +
                                  "]: " + std::string(name(context.collective)) +
                                  " P=" + std::to_string(context.comm_size) + ": " + reason);
  }
  if (spec.warm_start_from > 0 && !store.campaign(spec.warm_start_from))
    throw std::invalid_argument("warm_start_from: no campaign " +
                                std::to_string(spec.warm_start_from));
}

void CampaignEngine::emit(std::int64_t campaign_id, const std::string& type, nlohmann::json payload,
                          bool persist) {
  payload["campaign_id"] = campaign_id;
  if (persist) store_.add_event(campaign_id, type, payload);
  if (on_event_) on_event_(type, payload);
}

EngineOutcome CampaignEngine::run(std::int64_t campaign_id, const CancelFlag& cancel) {
  auto campaign = store_.campaign(campaign_id);
  if (!campaign) {
    error_ = "no campaign " + std::to_string(campaign_id);
    return EngineOutcome::failed;
  }
  CampaignSpec spec;
  try {
    spec = parse_campaign_spec(campaign->spec);
  } catch (const std::exception& e) {
    error_ = std::string("invalid campaign spec: ") + e.what();
    store_.set_campaign_state(campaign_id, "failed", error_);
    return EngineOutcome::failed;
  }
  // Fail in seconds when a context cannot run at all (missing benchmark binary, ...).
  for (const auto& context : store_.contexts(campaign_id)) {
    if (context.state == "done") continue;
    const BenchmarkRequest probe = context_request(context, spec, "preflight");
    std::string reason = backend_.admit(probe);
    if (reason.empty()) reason = backend_.preflight(probe);
    if (!reason.empty()) {
      error_ = std::string(name(context.collective)) + " P=" + std::to_string(context.comm_size) +
               ": " + reason;
      store_.set_campaign_state(campaign_id, "failed", error_);
      emit(campaign_id, "campaign_state", {{"state", "failed"}, {"error", error_}}, true);
      return EngineOutcome::failed;
    }
  }
  store_.set_campaign_state(campaign_id, "running");
  emit(campaign_id, "campaign_state", {{"state", "running"}}, true);

  for (const auto& context : store_.contexts(campaign_id)) {
    // A context that failed before (e.g. the database was locked too long) is retried when
    // its campaign is resumed: it continues from what the store holds.
    if (context.state == "done") continue;
    EngineOutcome outcome;
    try {
      outcome = run_context(*campaign, spec, context, cancel);
    } catch (const sql::Error& e) {
      if (sql::is_busy(e)) throw;  // not the context's fault: the caller waits and resumes
      error_ = std::string(name(context.collective)) + " P=" + std::to_string(context.comm_size) +
               ": " + e.what();
      outcome = EngineOutcome::failed;
    } catch (const std::exception& e) {
      error_ = std::string(name(context.collective)) + " P=" + std::to_string(context.comm_size) +
               ": " + e.what();
      outcome = EngineOutcome::failed;
    }
    if (outcome == EngineOutcome::interrupted) return outcome;
    if (outcome == EngineOutcome::failed) {
      store_.set_context_state(context.id, "failed");
      store_.set_campaign_state(campaign_id, "failed", error_);
      emit(campaign_id, "campaign_state", {{"state", "failed"}, {"error", error_}}, true);
      return outcome;
    }
  }
  return EngineOutcome::completed;
}

bool CampaignEngine::execute_job(const JobRecord& job, const CancelFlag& cancel) {
  return executor_.execute(job, cancel);
}

EngineOutcome CampaignEngine::run_context(const CampaignRecord& campaign, const CampaignSpec& spec,
                                          const ContextRecord& context, const CancelFlag& cancel) {
  SearchSpace space(context.collective, context.comm_size, table_);
  StrategyOptions options;
  options.seed = spec.seed * 1000003ULL + static_cast<std::uint64_t>(context.id);
  options.budget = spec.stop.max_evaluations > 0 ? spec.stop.max_evaluations : spec.budget;
  options.msg_sizes = osu_message_sizes(context.collective, spec.min_size, spec.max_size);
  apply_warm_start(store_, spec.warm_start_from, context, options);  // re-tuning: no-op when cold
  auto strategy = make_strategy(spec.strategy, space, options);
  if (!context.optimizer_state.is_null()) strategy->restore(context.optimizer_state);

  const nlohmann::json context_info = {{"context_id", context.id},
                                       {"collective", std::string(name(context.collective))},
                                       {"comm_size", context.comm_size},
                                       {"space", space.size()},
                                       {"planned", strategy->planned_evaluations()}};
  emit(campaign.id, "context_started", context_info, true);

  auto make_request = [&](const std::string& tag, std::vector<TuningConfig> configs, int repeats,
                          std::uint64_t order_seed) {
    BenchmarkRequest r = context_request(context, spec, tag);
    r.configs = std::move(configs);
    r.repeats = repeats;
    r.order_seed = order_seed;
    return r;
  };

  // Finish jobs left unfinished by an interruption before asking for anything new.
  for (const auto& job : store_.jobs(campaign.id)) {
    if (job.context_id != context.id) continue;
    if (job.state != "submitting" && job.state != "running") continue;
    if (!execute_job(job, cancel)) return EngineOutcome::interrupted;
    if (job.purpose == "search") {
      for (const auto& run : store_.runs_of_job(job.id)) strategy->observe(evaluation_of(run));
      store_.complete_job(job.id, "done", context.id, strategy->state());
    } else {
      store_.complete_job(job.id, "done", context.id, nullptr);
    }
  }

  std::size_t job_number = 0;
  for (const auto& job : store_.jobs(campaign.id))
    if (job.context_id == context.id) ++job_number;

  auto over_time_budget = [&] {
    return spec.stop.max_benchmark_seconds > 0 &&
           campaign_benchmark_seconds(store_, campaign.id) >= spec.stop.max_benchmark_seconds;
  };

  bool final_done = false;
  for (const auto& job : store_.jobs(campaign.id))
    if (job.context_id == context.id && job.purpose == "final" && job.state == "done")
      final_done = true;

  if (!final_done) {
    store_.set_context_state(context.id, "searching");
    while (!strategy->done() && !over_time_budget()) {
      if (cancel.cancelled()) return EngineOutcome::interrupted;
      auto configs = strategy->suggest(spec.batch_size);
      if (configs.empty()) break;
      const std::string tag = job_tag(campaign.id, context.id, "search", ++job_number);
      auto request = make_request(tag, configs, spec.repeats, options.seed + job_number);
      const auto job_id = store_.create_job(campaign.id, context.id, tag, backend_.name(), "search",
                                            nlohmann::json(request), strategy->state());
      auto job = *store_.job(job_id);
      if (!execute_job(job, cancel)) return EngineOutcome::interrupted;
      for (const auto& run : store_.runs_of_job(job.id)) strategy->observe(evaluation_of(run));
      store_.complete_job(job.id, "done", context.id, strategy->state());
      emit(campaign.id, "job_done", {{"job_id", job.id}, {"context_id", context.id}}, true);
    }

    // Final phase: re-measure the finalists and the default side by side.
    store_.set_context_state(context.id, "finalizing");
    std::set<TuningConfig> finalists;
    finalists.insert(TuningConfig::default_decision());
    for (const auto& c : strategy->finalists(spec.final_candidates)) finalists.insert(c);
    const std::string tag = job_tag(campaign.id, context.id, "final", ++job_number);
    auto request = make_request(tag, {finalists.begin(), finalists.end()}, spec.final_repeats,
                                options.seed + job_number);
    const auto job_id = store_.create_job(campaign.id, context.id, tag, backend_.name(), "final",
                                          nlohmann::json(request));
    auto job = *store_.job(job_id);
    if (!execute_job(job, cancel)) return EngineOutcome::interrupted;
    store_.complete_job(job.id, "done", context.id, nullptr);
  }

  // Picks per size from the final runs only (same conditions, interleaved order). Rows of a
  // run whose output could not be parsed are not trusted; a run that crashed or timed out keeps
  // the sizes it finished (complete lines OSU printed before the failure).
  std::map<std::int64_t, std::map<TuningConfig, std::vector<double>>> samples;
  std::size_t failed_runs = 0;
  std::size_t ok_runs = 0;  // runs whose rows count
  std::string last_error;
  for (const auto& run : store_.runs_of_context(context.id, "final")) {
    if (is_failed_outcome(run.outcome)) {
      ++failed_runs;
      if (!run.error.empty()) last_error = std::string(to_string(run.outcome)) + ": " + run.error;
    }
    if (run.outcome == RunOutcome::parse_error || run.rows.empty()) continue;
    ++ok_runs;
    for (const auto& row : run.rows) samples[row.size][run.config].push_back(row.avg_us);
  }
  const std::string label =
      std::string(name(context.collective)) + " P=" + std::to_string(context.comm_size);
  nlohmann::json picks = nlohmann::json::array();
  // A size no valid final run measured fails, with the reason; it never vanishes silently.
  nlohmann::json failed_sizes = nlohmann::json::array();
  for (std::int64_t size : options.msg_sizes) {
    auto it = samples.find(size);
    SizePick p;
    if (it != samples.end()) p = choose_for_size(size, it->second);
    if (it == samples.end() || p.samples == 0) {
      std::string reason =
          ok_runs == 0
              ? "no valid measurement: all " + std::to_string(failed_runs) + " final runs failed"
              : "no valid measurement: none of the " + std::to_string(ok_runs) +
                    " final runs with valid rows printed this size";
      if (ok_runs == 0 && !last_error.empty()) reason += " (last: " + last_error + ")";
      failed_sizes.push_back({{"msg_size", size}, {"reason", reason}});
      continue;
    }
    picks.push_back({{"msg_size", size},
                     {"best", p.best},
                     {"best_us", p.best_us},
                     {"default_us", std::isfinite(p.default_us) ? nlohmann::json(p.default_us)
                                                                : nlohmann::json(nullptr)},
                     {"noise", p.noise},
                     {"default_within_noise", p.default_within_noise},
                     {"samples", p.samples}});
  }
  if (picks.empty()) {
    error_ = "no successful measurement in the final runs of " + label + " (" +
             std::to_string(failed_runs) + " failed runs, " + std::to_string(ok_runs) + " valid)";
    if (!last_error.empty()) error_ += "; last: " + last_error;
    return EngineOutcome::failed;
  }
  if (!failed_sizes.empty()) {
    spdlog::warn("{}: {} message size(s) failed: {}", label, failed_sizes.size(),
                 failed_sizes.dump());
    emit(campaign.id, "sizes_failed", {{"context_id", context.id}, {"sizes", failed_sizes}}, true);
  }
  nlohmann::json result = {
      {"picks", picks},
      {"evaluations",
       strategy->state().value("observations", nlohmann::json::object()).value("evaluations", 0)},
      {"space", space.size()},
      {"strategy", strategy->name()}};
  if (!failed_sizes.empty()) result["failed_sizes"] = failed_sizes;
  store_.save_context_result(context.id, result);
  store_.set_context_state(context.id, "done");
  emit(campaign.id, "context_done",
       {{"context_id", context.id}, {"picks", picks.size()}, {"failed_sizes", failed_sizes.size()}},
       true);
  return EngineOutcome::completed;
}

double campaign_benchmark_seconds(Store& store, std::int64_t campaign_id) {
  double total = 0;
  for (const auto& job : store.jobs(campaign_id))
    for (const auto& run : store.runs_of_job(job.id))
      if (run.provenance.end_time > run.provenance.start_time)
        total += run.provenance.end_time - run.provenance.start_time;
  return total;
}

nlohmann::json campaign_report(Store& store, std::int64_t campaign_id,
                               const AlgorithmTable& table) {
  auto campaign = store.campaign(campaign_id);
  if (!campaign) throw std::invalid_argument("no campaign " + std::to_string(campaign_id));
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json contexts = nlohmann::json::array();
  for (const auto& ctx : store.contexts(campaign_id)) {
    contexts.push_back(
        {{"id", ctx.id},
         {"collective", std::string(name(ctx.collective))},
         {"comm_size", ctx.comm_size},
         {"nodes", ctx.nodes},
         {"ppn", ctx.ppn},
         {"state", ctx.state},
         {"evaluations", ctx.result.is_object() ? ctx.result.value("evaluations", 0) : 0},
         {"space", ctx.result.is_object() ? ctx.result.value("space", 0) : 0},
         {"failed_sizes", ctx.result.is_object()
                              ? ctx.result.value("failed_sizes", nlohmann::json::array())
                              : nlohmann::json::array()}});
    if (!ctx.result.is_object()) continue;
    // Tuned (rules file loaded) vs default, re-measured after the search, when available.
    std::map<std::int64_t, std::vector<double>> tuned, fixed;
    for (const auto& run : store.runs_of_context(ctx.id)) {
      if (run.outcome != RunOutcome::ok) continue;
      auto* target = run.purpose == "remeasure-tuned"     ? &tuned
                     : run.purpose == "remeasure-default" ? &fixed
                                                          : nullptr;
      if (!target) continue;
      for (const auto& row : run.rows) (*target)[row.size].push_back(row.avg_us);
    }
    for (const auto& p : ctx.result.at("picks")) {
      const TuningConfig best = p.at("best").get<TuningConfig>();
      const std::int64_t size = p.at("msg_size").get<std::int64_t>();
      nlohmann::json entry = {{"collective", std::string(name(ctx.collective))},
                              {"comm_size", ctx.comm_size},
                              {"msg_size", size},
                              {"best", best},
                              {"best_name", table.algorithm_name(ctx.collective, best.algorithm)},
                              {"noise", p.at("noise")},
                              {"default_within_noise", p.at("default_within_noise")},
                              {"search_default_us", p.at("default_us")},
                              {"search_best_us", p.at("best_us")}};
      nlohmann::json default_us = p.at("default_us");
      double best_us = p.at("best_us").get<double>();
      const bool remeasured = tuned.count(size) && fixed.count(size);
      if (remeasured && best.is_default()) {
        // The file leaves this size to Open MPI's decision: both runs measured the same
        // thing, so any gap between them is noise, not a speed-up.
        std::vector<double> pooled = fixed[size];
        pooled.insert(pooled.end(), tuned[size].begin(), tuned[size].end());
        default_us = median(pooled);
        best_us = median(pooled);
        entry["remeasure_samples"] = pooled.size();
      } else if (remeasured) {
        default_us = median(fixed[size]);
        best_us = median(tuned[size]);
        entry["remeasure_samples"] = std::min(tuned[size].size(), fixed[size].size());
      }
      entry["remeasured"] = remeasured;
      entry["default_us"] = default_us;
      entry["best_us"] = best_us;
      entry["speedup"] = (default_us.is_number() && best_us > 0)
                             ? nlohmann::json(default_us.get<double>() / best_us)
                             : nlohmann::json(nullptr);
      results.push_back(entry);
    }
  }
  std::int64_t runs = 0;
  const auto jobs = store.jobs(campaign_id);
  for (const auto& job : jobs) runs += static_cast<std::int64_t>(store.runs_of_job(job.id).size());
  nlohmann::json rules = nullptr;
  if (auto versions = store.rules_versions(campaign_id); !versions.empty()) {
    const auto& v = versions.front();
    rules = {{"version_id", v.id},
             {"format", v.format},
             {"deployable", v.validation.value("deployable", false)},
             {"verdict", v.validation.value("verdict", std::string())},
             {"verified", v.verification.value("verified", false)},
             {"verification_skipped", v.verification.value("skipped", false)}};
  }
  return {{"campaign",
           {{"id", campaign->id},
            {"name", campaign->name},
            {"state", campaign->state},
            {"spec", campaign->spec},
            {"error", campaign->error}}},
          {"contexts", contexts},
          {"results", results},
          {"rules", rules},
          {"cost",
           {{"jobs", jobs.size()},
            {"runs", runs},
            {"benchmark_seconds", campaign_benchmark_seconds(store, campaign_id)}}}};
}

}  // namespace colltune
