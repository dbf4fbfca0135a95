#include "campaign/campaign_engine.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "campaign/context_request.h"
#include "campaign/final_choice.h"
#include "campaign/job_executor.h"
#include "campaign/retune_warm_start.h"
#include "optimizer/search_space.h"
#include "optimizer/strategy.h"

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

  // A context whose final phase started does not search again (resume).
  bool final_started = false, final_done = false;
  for (const auto& job : store_.jobs(campaign.id)) {
    if (job.context_id != context.id || job.purpose != "final") continue;
    final_started = true;
    final_done = final_done || job.state == "done";
  }
  const bool paired = spec.final_method == "paired";

  if (!final_started) {
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
  }
  store_.set_context_state(context.id, "finalizing");

  nlohmann::json picks = nlohmann::json::array();
  if (paired) {
    // Final phase (docs/final-choice.md): per size, the strategy's pick is the candidate; it is
    // re-measured against the default in alternating (A B / B A) rounds, and repeats are added
    // look after look only while some candidate's interval still straddles the threshold.
    // Candidates: the strategy's finalists (the configurations the earlier final phase
    // re-measured, e.g. bo's finalist cover), so the final phase never measures more
    // configurations than before. One nominee per size, so that no size tests several: the
    // strategy's pick there when it is a finalist, else the finalist with the lowest search
    // median there when that beats the default's search median.
    std::set<TuningConfig> pool;
    for (const auto& c : strategy->finalists(spec.final_candidates))
      if (!c.is_default()) pool.insert(c);
    std::map<std::int64_t, std::map<TuningConfig, std::vector<double>>> search_latency;
    for (const auto& run : store_.runs_of_context(context.id, "search")) {
      if (run.outcome != RunOutcome::ok) continue;
      for (const auto& row : run.rows) search_latency[row.size][run.config].push_back(row.avg_us);
    }
    std::map<std::int64_t, TuningConfig> nominated;
    std::map<std::int64_t, double> search_default_us;
    for (const auto& choice : strategy->recommend()) {
      const std::int64_t size = choice.msg_size;
      // The default's latency when the final phase does not measure it at this size: from the
      // search's runs that ended ok only (rows of an unparsable run are not trusted), so that a
      // size no valid run measured fails instead of reporting an untrusted figure.
      if (auto d = search_latency[size].find(TuningConfig::default_decision());
          d != search_latency[size].end() && !d->second.empty())
        search_default_us[size] = median(d->second);
      else if (!search_latency[size].empty())  // e.g. known through the default's alias
        search_default_us[size] = choice.default_us;
      std::optional<TuningConfig> nominee;
      if (!choice.config.is_default() && pool.count(choice.config)) {
        nominee = choice.config;
      } else {
        const auto& at = search_latency[size];
        double best = std::numeric_limits<double>::infinity();
        for (const auto& c : pool)
          if (auto it = at.find(c); it != at.end() && median(it->second) < best) {
            best = median(it->second);
            nominee = c;
          }
        const auto d = at.find(TuningConfig::default_decision());
        if (nominee && d != at.end() && !(best < median(d->second))) nominee.reset();
      }
      // The configuration Open MPI's fixed decision runs at this size is the default itself.
      if (auto alias = space.default_alias(size); nominee && alias && *alias == *nominee)
        nominee.reset();
      if (nominee) nominated[size] = *nominee;
    }
    int search_runs = 0;
    for (const auto& job : store_.jobs(campaign.id))
      if (job.context_id == context.id && job.purpose == "search")
        search_runs += static_cast<int>(store_.runs_of_job(job.id).size());
    // The cap: never more runs than the search made, nor than the earlier final phase made
    // (final_repeats runs of the default and of each finalist); the looks that fit in it share
    // alpha (docs/final-choice.md).
    std::set<TuningConfig> distinct;
    for (const auto& [size, config] : nominated) distinct.insert(config);
    const int nominees = static_cast<int>(distinct.size());
    SequentialOptions seq;
    seq.min_gain = spec.min_gain;
    seq.max_runs = spec.final_max_runs > 0
                       ? spec.final_max_runs
                       : std::max(4, std::min(search_runs, spec.final_repeats * (1 + nominees)));
    seq.test.looks = planned_looks(1 + nominees, seq);

    auto evaluate = [&] {
      const PairedFinalData data =
          paired_final_data(store_.runs_of_context(context.id, "final"), options.msg_sizes);
      return std::make_pair(data, paired_final_intervals(data, seq.min_gain, seq.test));
    };
    for (;;) {
      auto [data, intervals] = evaluate();
      std::set<TuningConfig> open;
      for (std::size_t i = 0; i < options.msg_sizes.size(); ++i) {
        auto n = nominated.find(options.msg_sizes[i]);
        if (n == nominated.end()) continue;
        auto it = intervals.find(n->second);
        if (it == intervals.end() || still_open(it->second[i], seq.min_gain))
          open.insert(n->second);
      }
      if (open.empty()) break;
      const int rounds =
          next_look_rounds(data.jobs, data.runs, static_cast<int>(open.size()) + 1, seq);
      if (rounds == 0) break;
      if (cancel.cancelled()) return EngineOutcome::interrupted;
      std::vector<TuningConfig> configs{TuningConfig::default_decision()};
      configs.insert(configs.end(), open.begin(), open.end());
      const std::string tag = job_tag(campaign.id, context.id, "final", ++job_number);
      auto request = make_request(tag, configs, rounds, options.seed + job_number);
      request.alternating = true;
      const auto job_id = store_.create_job(campaign.id, context.id, tag, backend_.name(), "final",
                                            nlohmann::json(request));
      auto job = *store_.job(job_id);
      if (!execute_job(job, cancel)) return EngineOutcome::interrupted;
      store_.complete_job(job.id, "done", context.id, nullptr);
    }
    auto [data, intervals] = evaluate();
    for (std::size_t i = 0; i < options.msg_sizes.size(); ++i) {
      const std::int64_t size = options.msg_sizes[i];
      std::optional<TuningConfig> candidate;
      if (auto n = nominated.find(size); n != nominated.end()) candidate = n->second;
      const double fallback = search_default_us.count(size)
                                  ? search_default_us[size]
                                  : std::numeric_limits<double>::quiet_NaN();
      nlohmann::json pick = paired_pick_json(size, i, candidate, data, intervals, fallback);
      if (pick.at("best_us").is_null()) continue;  // nothing known at this size
      picks.push_back(std::move(pick));
    }
  } else {
    if (!final_done) {
      // The method before the paired test: the finalists and the default re-measured side by
      // side in a shuffled order, lowest median within noise.
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
    // Picks per size from the final runs only (same conditions, interleaved order).
    std::map<std::int64_t, std::map<TuningConfig, std::vector<double>>> samples;
    // Rows of a run whose output could not be parsed are not trusted; a run that crashed or
    // timed out keeps the sizes it finished (complete lines OSU printed before the failure).
    for (const auto& run : store_.runs_of_context(context.id, "final")) {
      if (run.outcome == RunOutcome::parse_error) continue;
      for (const auto& row : run.rows) samples[row.size][run.config].push_back(row.avg_us);
    }
    for (std::int64_t size : options.msg_sizes) {
      auto it = samples.find(size);
      if (it == samples.end()) continue;
      SizePick p = choose_for_size(size, it->second);
      if (p.samples == 0) continue;
      picks.push_back({{"msg_size", size},
                       {"method", "median"},
                       {"best", p.best},
                       {"best_us", p.best_us},
                       {"default_us", std::isfinite(p.default_us) ? nlohmann::json(p.default_us)
                                                                  : nlohmann::json(nullptr)},
                       {"noise", p.noise},
                       {"default_within_noise", p.default_within_noise},
                       {"samples", p.samples}});
    }
  }
  // What the final runs could tell: runs with trusted rows, failed runs and the last failure.
  std::size_t ok_runs = 0;
  std::size_t failed_runs = 0;
  std::string last_error;
  for (const auto& run : store_.runs_of_context(context.id, "final")) {
    if (is_failed_outcome(run.outcome)) {
      ++failed_runs;
      if (!run.error.empty()) last_error = std::string(to_string(run.outcome)) + ": " + run.error;
    }
    if (run.outcome != RunOutcome::parse_error && !run.rows.empty()) ++ok_runs;
  }
  const std::string label =
      std::string(name(context.collective)) + " P=" + std::to_string(context.comm_size);
  // A size no valid final run measured fails, with the reason; it never vanishes silently.
  nlohmann::json failed_sizes = nlohmann::json::array();
  {
    std::set<std::int64_t> picked;
    for (const auto& p : picks) picked.insert(p.at("msg_size").get<std::int64_t>());
    for (std::int64_t size : options.msg_sizes) {
      if (picked.count(size)) continue;
      std::string reason =
          ok_runs == 0
              ? "no valid measurement: all " + std::to_string(failed_runs) + " final runs failed"
              : "no valid measurement: none of the " + std::to_string(ok_runs) +
                    " final runs with valid rows printed this size";
      if (ok_runs == 0 && !last_error.empty()) reason += " (last: " + last_error + ")";
      failed_sizes.push_back({{"msg_size", size}, {"reason", reason}});
    }
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
  auto number_or_null = [](const nlohmann::json& j, const char* key) {
    return j.contains(key) && j.at(key).is_number() ? j.at(key) : nlohmann::json();
  };
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
    // Medians of the re-measure runs (tuned = rules file loaded, default) of the newest file.
    std::map<std::int64_t, std::vector<double>> tuned, fixed;
    const std::string newest =
        measured_version ? "-v" + std::to_string(measured_version->id) + "-" : std::string();
    for (const auto& job : store.jobs(campaign_id)) {
      if (job.context_id != ctx.id || newest.empty() || job.tag.find(newest) == std::string::npos)
        continue;
      auto* target = job.purpose == "remeasure-tuned"     ? &tuned
                     : job.purpose == "remeasure-default" ? &fixed
                                                          : nullptr;
      if (!target) continue;
      for (const auto& run : store.runs_of_job(job.id)) {
        if (run.outcome != RunOutcome::ok) continue;
        for (const auto& row : run.rows) (*target)[row.size].push_back(row.avg_us);
      }
    }
    const std::string coll = std::string(name(ctx.collective));
    for (const auto& p : ctx.result.at("picks")) {
      const TuningConfig best = p.at("best").get<TuningConfig>();
      const std::int64_t size = p.at("msg_size").get<std::int64_t>();
      nlohmann::json entry = {{"collective", coll},
                              {"comm_size", ctx.comm_size},
                              {"msg_size", size},
                              {"best", best},
                              {"best_name", table.algorithm_name(ctx.collective, best.algorithm)},
                              {"noise", p.at("noise")},
                              {"default_within_noise", p.at("default_within_noise")},
                              {"search_default_us", p.at("default_us")},
                              {"search_best_us", p.at("best_us")},
                              {"final_method", p.value("method", std::string("median"))},
                              {"reverted", p.value("reverted", nlohmann::json())}};
      if (p.contains("candidate")) entry["candidate"] = p.at("candidate");
      nlohmann::json default_us = p.at("default_us");
      nlohmann::json best_us = p.at("best_us");
      // The speed-up and its interval: from the re-measure with the file loaded when there is
      // one, else from the final phase's pairs. A size left to the default measures the same
      // thing twice: its speed-up is 1 by construction, the interval shows the noise.
      nlohmann::json ratio, low, high, pairs = 0, confidence;
      std::string source = "final";
      auto row = remeasured_rows.find({coll, ctx.comm_size, size});
      const bool remeasured =
          row != remeasured_rows.end() && tuned.count(size) && fixed.count(size);
      if (remeasured) {
        source = "remeasure";
        ratio = number_or_null(row->second, "ratio");
        low = number_or_null(row->second, "ratio_low");
        high = number_or_null(row->second, "ratio_high");
        pairs = row->second.value("pairs", 0);
        confidence = number_or_null(row->second, "confidence");
        if (best.is_default()) {
          std::vector<double> pooled = fixed[size];
          pooled.insert(pooled.end(), tuned[size].begin(), tuned[size].end());
          default_us = median(pooled);
          best_us = median(pooled);
        } else {
          default_us = median(fixed[size]);
          best_us = median(tuned[size]);
        }
        entry["remeasure_samples"] = pairs;
      } else if (p.value("method", std::string()) == "paired") {
        ratio = number_or_null(p, "ratio");
        low = number_or_null(p, "ratio_low");
        high = number_or_null(p, "ratio_high");
        pairs = p.value("pairs", 0);
        confidence = number_or_null(p, "confidence");
      }
      entry["remeasured"] = remeasured;
      entry["default_us"] = default_us;
      entry["best_us"] = best_us;
      entry["speedup_source"] = source;
      entry["pairs"] = pairs;
      entry["confidence"] = confidence;
      // speedup = default / tuned; its interval is the inverse of the ratio's.
      if (best.is_default()) {
        entry["speedup"] = 1.0;
      } else if (ratio.is_number() && ratio.get<double>() > 0) {
        entry["speedup"] = 1 / ratio.get<double>();
      } else {
        entry["speedup"] =
            (default_us.is_number() && best_us.is_number() && best_us.get<double>() > 0)
                ? nlohmann::json(default_us.get<double>() / best_us.get<double>())
                : nlohmann::json(nullptr);
      }
      entry["speedup_low"] = high.is_number() && high.get<double>() > 0
                                 ? nlohmann::json(1 / high.get<double>())
                                 : nlohmann::json();
      entry["speedup_high"] = low.is_number() && low.get<double>() > 0
                                  ? nlohmann::json(1 / low.get<double>())
                                  : nlohmann::json();
      // A tie: the file keeps the default here, or the interval does not exclude 1.
      entry["tie"] = best.is_default() || !entry["speedup_low"].is_number() ||
                     entry["speedup_low"].get<double>() <= 1.0;
      results.push_back(entry);
    }
  }
  std::int64_t runs = 0;
  const auto jobs = store.jobs(campaign_id);
  for (const auto& job : jobs) runs += static_cast<std::int64_t>(store.runs_of_job(job.id).size());
  nlohmann::json rules = nullptr;
  if (!versions.empty()) {
    const auto& v = versions.front();
    nlohmann::json reverted = nlohmann::json::array();
    for (const auto& version : versions)
      for (const auto& r : version.verification.value("reverted", nlohmann::json::array()))
        reverted.push_back(r);
    rules = {{"version_id", v.id},
             {"format", v.format},
             {"loads", v.validation.value("deployable", false)},
             {"deployable",
              v.validation.value("deployable", false) && v.verification.value("deployable", false)},
             {"verdict", v.validation.value("verdict", std::string())},
             {"verified", v.verification.value("verified", false)},
             {"verification_skipped", v.verification.value("skipped", false)},
             {"reason", v.verification.value("reason", std::string())},
             {"reverted", reverted}};
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
