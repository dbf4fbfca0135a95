#include "campaign/campaign_engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "campaign/campaign_states.h"
#include "campaign/cluster_search.h"
#include "campaign/context_request.h"
#include "campaign/context_result.h"
#include "campaign/final_choice.h"
#include "campaign/job_executor.h"
#include "campaign/retune_warm_start.h"
#include "campaign/search_jobs.h"
#include "optimizer/cluster_strategy.h"
#include "optimizer/paired_final.h"
#include "optimizer/search_loop.h"
#include "optimizer/search_space.h"
#include "optimizer/strategy.h"

namespace colltune {

CampaignEngine::CampaignEngine(Store& store, Backend& backend, const AlgorithmTable& table,
                               EventSink* events)
    : store_(store),
      backend_(backend),
      table_(table),
      own_events_(store),
      events_(events ? *events : own_events_),
      executor_(store, backend, &events_) {}

std::int64_t CampaignEngine::create_campaign(Store& store, const CampaignSpec& spec) {
  std::vector<Store::NewContext> contexts;
  for (const auto& c : spec.contexts)
    contexts.push_back({c.collective, c.comm_size, c.nodes, c.ppn});
  return store.create_campaign_with_contexts(spec.name, to_json(spec), CampaignState::queued,
                                             contexts);
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
  if (spec.cluster.enabled) {
    const auto names = cluster_strategy_names();
    if (std::find(names.begin(), names.end(), spec.cluster.strategy) == names.end())
      throw std::invalid_argument("cluster.strategy: unknown cluster strategy '" +
                                  spec.cluster.strategy + "'");
  }
  // Whole-cluster: the tracer verifies predicted sizes up to predict_up_to on this backend.
  if (spec.cluster.enabled && spec.cluster.predict_up_to > 0) {
    ContextSpec top = spec.contexts.front();
    top.comm_size = spec.cluster.predict_up_to;
    top.ppn = 0;
    const std::string reason = backend.admit(context_request(top, spec, "admit"));
    if (!reason.empty())
      throw std::invalid_argument("cluster.predict_up_to: P=" + std::to_string(top.comm_size) +
                                  " (verified with the tracer): " + reason);
  }
  if (spec.warm_start_from > 0 && !store.campaign(spec.warm_start_from))
    throw std::invalid_argument("warm_start_from: no campaign " +
                                std::to_string(spec.warm_start_from));
}

void CampaignEngine::emit(std::int64_t campaign_id, const std::string& type, nlohmann::json payload,
                          bool persist) {
  payload["campaign_id"] = campaign_id;
  if (persist)
    events_.durable(campaign_id, type, payload);
  else
    events_.transient(campaign_id, type, payload);
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
    store_.set_campaign_state(campaign_id, CampaignState::failed, error_);
    return EngineOutcome::failed;
  }
  return run(campaign_id, spec, cancel);
}

EngineOutcome CampaignEngine::run(std::int64_t campaign_id, const CampaignSpec& spec,
                                  const CancelFlag& cancel) {
  auto campaign = store_.campaign(campaign_id);
  if (!campaign) {
    error_ = "no campaign " + std::to_string(campaign_id);
    return EngineOutcome::failed;
  }
  // Fail in seconds when a context cannot run at all (missing benchmark binary, ...).
  for (const auto& context : store_.contexts(campaign_id)) {
    if (context.state == ContextState::done) continue;
    const BenchmarkRequest probe = context_request(context, spec, "preflight");
    std::string reason = backend_.admit(probe);
    if (reason.empty()) reason = backend_.preflight(probe);
    if (!reason.empty()) {
      error_ = std::string(name(context.collective)) + " P=" + std::to_string(context.comm_size) +
               ": " + reason;
      store_.set_campaign_state(campaign_id, CampaignState::failed, error_);
      emit(campaign_id, "campaign_state",
           {{"state", to_string(CampaignState::failed)}, {"error", error_}}, true);
      return EngineOutcome::failed;
    }
  }
  store_.set_campaign_state(campaign_id, CampaignState::running);
  emit(campaign_id, "campaign_state", {{"state", to_string(CampaignState::running)}}, true);

  if (spec.cluster.enabled) {
    for (const auto& group : cluster_groups(store_.contexts(campaign_id))) {
      EngineOutcome outcome;
      const std::string label = std::string(name(group.front().collective)) + " (whole cluster)";
      try {
        outcome = run_cluster_group(*campaign, spec, group, cancel);
      } catch (const sql::Error& e) {
        if (sql::is_busy(e)) throw;
        error_ = label + ": " + e.what();
        outcome = EngineOutcome::failed;
      } catch (const std::exception& e) {
        error_ = label + ": " + e.what();
        outcome = EngineOutcome::failed;
      }
      if (outcome == EngineOutcome::interrupted) return outcome;
      if (outcome == EngineOutcome::failed) {
        store_.set_campaign_state(campaign_id, CampaignState::failed, error_);
        emit(campaign_id, "campaign_state", {{"state", "failed"}, {"error", error_}}, true);
        return outcome;
      }
    }
    return EngineOutcome::completed;
  }
  for (const auto& context : store_.contexts(campaign_id)) {
    // A context that failed before (e.g. the database was locked too long) is retried when
    // its campaign is resumed: it continues from what the store holds.
    if (context.state == ContextState::done) continue;
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
      store_.set_context_state(context.id, ContextState::failed);
      store_.set_campaign_state(campaign_id, CampaignState::failed, error_);
      emit(campaign_id, "campaign_state",
           {{"state", to_string(CampaignState::failed)}, {"error", error_}}, true);
      return outcome;
    }
  }
  return EngineOutcome::completed;
}

bool CampaignEngine::execute_job(const JobRecord& job, const CancelFlag& cancel) {
  return executor_.execute(job, cancel);
}

EngineOutcome CampaignEngine::run_context(const CampaignRecord& campaign, const CampaignSpec& spec,
                                          const ContextRecord& context, const CancelFlag& cancel,
                                          Strategy* searched,
                                          const std::function<FinalLookBudget()>& look_budget,
                                          const std::vector<std::int64_t>& lend_from) {
  SearchSpace space(context.collective, context.comm_size, table_);
  StrategyOptions options;
  options.seed = spec.seed * 1000003ULL + static_cast<std::uint64_t>(context.id);
  options.budget = spec.stop.max_evaluations > 0 ? spec.stop.max_evaluations : spec.budget;
  options.msg_sizes = osu_message_sizes(context.collective, spec.min_size, spec.max_size);
  std::unique_ptr<Strategy> owned;
  if (!searched) {
    apply_warm_start(store_, spec.warm_start_from, context, options);  // no-op when cold
    owned = make_strategy(spec.strategy, space, options);
    if (!context.optimizer_state.is_null()) owned->restore(context.optimizer_state);
  }
  Strategy* strategy = searched ? searched : owned.get();

  // `phase` "final": a whole-cluster search already ran (one search for all the collective's
  // sizes); this context only has its final phase left.
  const nlohmann::json context_info = {{"context_id", context.id},
                                       {"collective", std::string(name(context.collective))},
                                       {"comm_size", context.comm_size},
                                       {"space", space.size()},
                                       {"planned", strategy->planned_evaluations()},
                                       {"phase", searched ? "final" : "search"}};
  emit(campaign.id, "context_started", context_info, true);

  auto make_request = [&](const std::string& tag, std::vector<TuningConfig> configs, int repeats,
                          std::uint64_t order_seed) {
    BenchmarkRequest r = context_request(context, spec, tag);
    r.configs = std::move(configs);
    r.repeats = repeats;
    r.order_seed = order_seed;
    return r;
  };
  // Records a final-phase job, executes it and marks it done; false when interrupted.
  auto run_final_job = [&](const std::string& tag, const BenchmarkRequest& request) {
    const auto job_id = store_.create_job(campaign.id, context.id, tag, backend_.name(),
                                          JobPurpose::final, nlohmann::json(request));
    if (!execute_job(*store_.job(job_id), cancel)) return false;
    store_.complete_job(job_id, JobState::done, context.id, nullptr);
    return true;
  };

  // Finish the final jobs left unfinished by an interruption (the search loop resumes the
  // search jobs of its own searcher; a searched context's were finished by its search).
  for (const auto& job : store_.jobs(campaign.id)) {
    if (job.context_id != context.id) continue;
    if (!is_unfinished(job.state)) continue;
    if (job.purpose == JobPurpose::search && !searched) continue;
    if (!execute_job(job, cancel)) return EngineOutcome::interrupted;
    store_.complete_job(job.id, JobState::done, context.id, nullptr);
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
    if (job.context_id != context.id || job.purpose != JobPurpose::final) continue;
    final_started = true;
    final_done = final_done || job.state == JobState::done;
  }
  const bool paired = spec.final_method == "paired";

  if (!final_started) {
    store_.set_context_state(context.id, ContextState::searching);
    // (A whole-cluster size, `searched`, was searched with all its collective's sizes; the
    // loop below then has nothing to run, and that search announced its own end.)
    // The shared search loop (optimizer/search_loop.h); each batch is a job recorded in the
    // store (with the strategy's state) before it runs on the backend (campaign/search_jobs.h).
    StrategySearch searcher(*strategy, context.id);
    SearchJobRunner runner(
        store_, executor_, spec,
        {campaign.id, backend_.name(), {context}, context.id, options.seed, job_number + 1},
        searcher, cancel, over_time_budget, [&](const std::string& type, nlohmann::json payload) {
          emit(campaign.id, type, std::move(payload), true);
        });
    const SearchLoopResult search =
        run_search_loop(searcher, runner, spec.batch_size, job_number + 1);
    if (search.end == SearchEnd::interrupted) return EngineOutcome::interrupted;
    job_number += runner.jobs_created();
    // Why the search ended: its planned evaluations, the strategy's stopping rule before them
    // (early), or the campaign's benchmark-time budget. Progress displays say so.
    const int planned = strategy->planned_evaluations();
    const int evaluations = strategy->evaluations();
    const std::string reason = search.end == SearchEnd::runner_stop   ? "time_budget"
                               : planned > 0 && evaluations < planned ? "converged"
                                                                      : "planned";
    if (!searched)
      emit(campaign.id, "search_stopped",
           {{"context_id", context.id},
            {"collective", std::string(name(context.collective))},
            {"comm_size", context.comm_size},
            {"evaluations", evaluations},
            {"planned", planned},
            {"reason", reason}},
           true);
  }
  store_.set_context_state(context.id, ContextState::finalizing);

  nlohmann::json picks = nlohmann::json::array();
  std::vector<int> passes;  // ContextResult::final_passes
  if (paired) {
    // Final phase (docs/final-choice.md): per size, the strategy's pick is the candidate; it is
    // re-measured against the default in alternating (A B / B A) rounds, and repeats are added
    // look after look only while some candidate's interval still straddles the threshold.
    // Candidates (optimizer/paired_final.h): one nominee per size among the strategy's
    // finalists, so the final phase never measures more configurations than the median
    // method's did.
    const SearchLatencies search_latency =
        search_latencies(store_.runs_of_context(context.id, JobPurpose::search));
    const std::vector<Choice> recommended = strategy->recommend();
    std::map<std::int64_t, double> search_default_us;
    for (const auto& choice : recommended) {
      const std::int64_t size = choice.msg_size;
      // The default's latency when the final phase does not measure it at this size: from the
      // search's runs that ended ok only (rows of an unparsable run are not trusted), so that a
      // size no valid run measured fails instead of reporting an untrusted figure.
      const auto at = search_latency.find(size);
      if (at == search_latency.end() || at->second.empty()) continue;
      if (auto d = at->second.find(TuningConfig::default_decision()); d != at->second.end())
        search_default_us[size] = median(d->second);
      else  // e.g. known through the default's alias
        search_default_us[size] = choice.default_us;
    }
    // A comm size a whole-cluster search never ran (nor knew from a warm start).
    const bool never_run = searched && strategy->reused_runs() == 0 &&
                           store_.runs_of_context(context.id, JobPurpose::search).empty();
    const std::vector<TuningConfig> finalists = strategy->finalists(spec.final_candidates);
    std::set<std::int64_t> riders;
    const std::map<std::int64_t, TuningConfig> nominated =
        final_nominees(recommended, finalists, search_latency, space,
                       strategy->versus_default({finalists.begin(), finalists.end()}), &riders);
    // The runs the search knew: those it made here and those a warm start gave it as data
    // (without them a warm re-tune's short search left one pair per candidate: nothing proven).
    int search_runs = strategy->reused_runs();
    for (const auto& job : store_.jobs(campaign.id))
      if (job.context_id == context.id && job.purpose == JobPurpose::search)
        search_runs += static_cast<int>(store_.runs_of_job(job.id).size());
    // The cap: never more runs than the search knew, nor than the earlier final phase made
    // (final_repeats runs of the default and of each finalist); the looks that fit in it share
    // alpha (docs/final-choice.md).
    std::set<TuningConfig> distinct;
    for (const auto& [size, config] : nominated) distinct.insert(config);
    const int nominees = static_cast<int>(distinct.size());
    SequentialOptions seq;
    seq.min_gain = spec.min_gain;
    seq.max_runs = spec.final_max_runs > 0
                       ? spec.final_max_runs
                       : final_run_cap(search_runs, spec.final_repeats, nominees);
    seq.test.looks = planned_looks(1 + nominees, seq);

    // The final runs (of the jobs before `before_job` only, when given: what a look recorded
    // earlier was decided on), and those of the neighbouring sizes that lend their variance.
    auto evaluate = [&](std::optional<std::int64_t> before_job = std::nullopt) {
      auto final_runs = [&](std::int64_t context_id) {
        auto runs = store_.runs_of_context(context_id, JobPurpose::final);
        if (before_job)
          std::erase_if(runs, [&](const RunRecord& r) { return r.job_id >= *before_job; });
        return paired_final_data(runs, options.msg_sizes);
      };
      const PairedFinalData data = final_runs(context.id);
      std::vector<PairedFinalData> lent;
      for (const std::int64_t id : lend_from) lent.push_back(final_runs(id));
      return std::make_pair(data, paired_final_intervals(data, seq.min_gain, seq.test, lent));
    };
    // Under a look budget, which nominees a look tests also depends on those the looks before
    // it in the same pass left out for money, which the store does not keep: a resume first
    // replays the looks the pass recorded (each decided on the runs before it, its nominees as
    // recorded). A size's first pass holds its final jobs from the first one; its leftover pass
    // (leftover_look_budget) those after the ones its first pass ended with (final_passes).
    const bool leftover_pass = look_budget && look_budget().leftover;
    std::vector<JobRecord> recorded;
    if (look_budget) {
      if (const auto first = context_result_of(context.result); first && leftover_pass)
        passes = first->final_passes;
      const std::size_t earlier = passes.empty() ? 0 : static_cast<std::size_t>(passes.back());
      std::size_t n = 0;
      for (const auto& job : store_.jobs(campaign.id))
        if (job.context_id == context.id && job.purpose == JobPurpose::final && n++ >= earlier)
          recorded.push_back(job);
    }
    // Nominees a look left out because the campaign's node-second budget could not pay for them,
    // and those given a leftover first look (leftover_look_budget).
    std::set<TuningConfig> unaffordable, leftover_looked;
    for (std::size_t replayed = 0;;) {
      const bool replay = replayed < recorded.size();
      auto [data, intervals] = replay ? evaluate(recorded[replayed].id) : evaluate();
      std::set<TuningConfig> open;
      for (const auto& c :
           open_nominees(nominated, options.msg_sizes, intervals, seq.min_gain, riders))
        if (!unaffordable.count(c)) open.insert(c);
      if (open.empty() && !replay) break;
      int rounds = next_look_rounds(data.jobs, data.runs, static_cast<int>(open.size()) + 1, seq);
      bool leftover_look = false;
      if (rounds == 0 && leftover_pass) {  // a first look past the size's looks and cap
        std::set<TuningConfig> first_looks;
        for (const auto& c : untested_nominees(nominated, options.msg_sizes, open, intervals))
          if (!leftover_looked.count(c)) first_looks.insert(c);  // once: its runs may fail
        open = std::move(first_looks);
        if (!open.empty()) rounds = seq.rounds_per_look, leftover_look = true;
      }
      if (replay) {  // the look as recorded: what it left out, it left out for money
        std::set<TuningConfig> looked;
        for (const auto& c : recorded[replayed++].request.at("configs"))
          looked.insert(c.get<TuningConfig>());
        record_look(open, looked, leftover_look, &unaffordable, &leftover_looked);
        continue;
      }
      if (rounds == 0) break;
      if (look_budget) {
        const std::set<TuningConfig> paid = affordable_nominees(
            nominated, open, rounds, look_budget(), data.jobs == 0 && !leftover_pass);
        record_look(open, paid, leftover_look, &unaffordable, &leftover_looked);
        open = paid;
        if (open.empty()) break;
      }  // a leftover pass always has a budget (leftover_pass)
      if (cancel.cancelled()) return EngineOutcome::interrupted;
      std::vector<TuningConfig> configs{TuningConfig::default_decision()};
      configs.insert(configs.end(), open.begin(), open.end());
      const std::string tag = job_tag(campaign.id, context.id, "final", ++job_number);
      auto request = make_request(tag, configs, rounds, options.seed + job_number);
      request.alternating = true;
      if (has_message_size(context.collective))
        if (const auto span = look_size_span(nominated, open)) {
          request.min_size = span->first;
          request.max_size = span->second;
        }
      if (!run_final_job(tag, request)) return EngineOutcome::interrupted;
    }
    if (look_budget) {  // the final jobs this pass ended with
      int jobs = 0;
      for (const auto& job : store_.jobs(campaign.id))
        jobs += job.context_id == context.id && job.purpose == JobPurpose::final;
      passes.push_back(jobs);
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
      const bool untested =
          candidate && unaffordable.count(*candidate) && pick.at("samples").get<int>() == 0;
      if (untested) {
        // Never tested: the default stands (never slower), and the result says why.
        pick["note"] =
            "not tested: the campaign's node-second budget (cluster.total_node_seconds) could "
            "not pay for testing the candidate here; Open MPI's default stands";
        pick["untested_for_money"] = true;
      } else if (pick.at("best_us").is_null()) {
        // Nothing known at this size: a failure (below), unless a whole-cluster search never
        // ran this comm size at all (its node-second budget ran out first) and its model is
        // confident of nothing there: Open MPI's default stands, and the result says why.
        if (!never_run || candidate) continue;
        pick["source"] = "not_run";
        pick["note"] =
            "not run: the whole-cluster search spent its budget before this comm size, and its "
            "model is not confident that any configuration beats the default here";
      }
      picks.push_back(std::move(pick));
    }
  } else {
    if (!final_done) {
      // The method before the paired test: the finalists and the default re-measured side by
      // side in a shuffled order, lowest median within noise.
      const std::set<TuningConfig> finalists = final_candidates(*strategy, spec.final_candidates);
      const std::string tag = job_tag(campaign.id, context.id, "final", ++job_number);
      auto request = make_request(tag, {finalists.begin(), finalists.end()}, spec.final_repeats,
                                  options.seed + job_number);
      if (!run_final_job(tag, request)) return EngineOutcome::interrupted;
    }
    // Picks per size from the final runs only (same conditions, interleaved order).
    std::map<std::int64_t, std::map<TuningConfig, std::vector<double>>> samples;
    // Rows of a run whose output could not be parsed are not trusted; a run that crashed or
    // timed out keeps the sizes it finished (complete lines OSU printed before the failure).
    for (const auto& run : store_.runs_of_context(context.id, JobPurpose::final)) {
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
  for (const auto& run : store_.runs_of_context(context.id, JobPurpose::final)) {
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
  ContextResult result;
  result.picks = picks.get<std::vector<ContextPick>>();
  result.evaluations = strategy->evaluations();
  result.space = static_cast<std::int64_t>(space.size());
  result.strategy = strategy->name();
  result.failed_sizes = failed_sizes;
  result.final_passes = passes;
  store_.save_context_result(context.id, result);
  store_.set_context_state(context.id, ContextState::done);
  emit(campaign.id, "context_done",
       {{"context_id", context.id}, {"picks", picks.size()}, {"failed_sizes", failed_sizes.size()}},
       true);
  return EngineOutcome::completed;
}

double campaign_benchmark_seconds(Store& store, std::int64_t campaign_id) {
  double total = 0;
  for (const auto& job : store.jobs(campaign_id))
    for (const auto& run : store.runs_of_job(job.id)) total += observed_seconds(run.provenance);
  return total;
}

}  // namespace colltune
