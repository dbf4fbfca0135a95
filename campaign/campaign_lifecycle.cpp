#include "campaign/campaign_lifecycle.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "campaign/retune.h"
#include "optimizer/strategy.h"

namespace colltune {

AlgorithmTable algorithm_table_for(Backend& backend, const std::string& label) {
  AlgorithmTable table = AlgorithmTable::builtin_4_1();
  try {
    if (auto text = backend.ompi_info_parsable(); !text.empty())
      table = AlgorithmTable::from_ompi_info(text);
  } catch (const std::exception& e) {
    spdlog::warn("{}ompi_info output not usable ({}); using the built-in 4.1 table", label,
                 e.what());
  }
  return table;
}

std::int64_t create_admitted_campaign(Store& store, Backend& backend, const CampaignSpec& spec,
                                      const nlohmann::json& launch) {
  const auto names = strategy_names();
  if (std::find(names.begin(), names.end(), spec.strategy) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("strategy: unknown strategy '" + spec.strategy +
                                "' (known: " + list + ")");
  }
  // Refused now, with the reason, rather than failing after runs (a collective the backend
  // cannot benchmark, 10,000 local ranks, a warm start from no campaign).
  CampaignEngine::check_admissible(store, backend, spec);
  const auto id = CampaignEngine::create_campaign(store, spec);
  if (launch.is_object()) store.set_campaign_launch(id, launch);
  return id;
}

void fail_campaign(Store& store, EventSink& events, std::int64_t campaign_id,
                   const std::string& error) {
  store.set_campaign_state(campaign_id, CampaignState::failed, error);
  events.durable(campaign_id, "campaign_state",
                 {{"campaign_id", campaign_id},
                  {"state", to_string(CampaignState::failed)},
                  {"error", error}});
}

void cancel_unfinished_jobs(Store& store, EventSink& events, std::int64_t campaign_id) {
  for (const auto& job : store.jobs(campaign_id))
    if (is_unfinished(job.state)) {
      store.set_job_state(job.id, JobState::cancelled);
      events.durable(campaign_id, "job_state",
                     {{"campaign_id", campaign_id},
                      {"job_id", job.id},
                      {"tag", job.tag},
                      {"state", to_string(JobState::cancelled)}});
    }
}

CampaignState settle_interrupted(Store& store, EventSink& events, std::int64_t id,
                                 InterruptAction action, const std::string& pause_reason) {
  CampaignState state = CampaignState::running;
  switch (action) {
    case InterruptAction::pause:
      state = CampaignState::paused;
      store.set_campaign_state(id, state, pause_reason);
      break;
    case InterruptAction::cancel:
      state = CampaignState::cancelled;
      store.set_campaign_state(id, state);
      cancel_unfinished_jobs(store, events, id);
      break;
    case InterruptAction::keep_running:
      return state;
  }
  events.durable(id, "campaign_state", {{"campaign_id", id}, {"state", to_string(state)}});
  return state;
}

namespace {

CampaignRunResult interrupted(Store& store, EventSink& events, std::int64_t id,
                              const CampaignRun& options, bool in_rules_stage) {
  CampaignRunResult result;
  result.end = CampaignRunResult::End::interrupted;
  result.in_rules_stage = in_rules_stage;
  result.state = settle_interrupted(
      store, events, id, options.on_interrupt ? options.on_interrupt() : InterruptAction::pause,
      options.pause_reason);
  return result;
}

}  // namespace

CampaignRunResult run_campaign(Store& store, Backend& backend, std::int64_t campaign_id,
                               const CampaignRun& options) {
  StoreEventSink stored_only(store);
  EventSink& events = options.events ? *options.events : stored_only;
  const CancelFlag never;
  const CancelFlag& cancel = options.cancel ? *options.cancel : never;
  std::optional<AlgorithmTable> own_table;
  if (!options.table) own_table = algorithm_table_for(backend, "");
  const AlgorithmTable& table = options.table ? *options.table : *own_table;

  CampaignRunResult result;
  const auto campaign = store.campaign(campaign_id);
  if (!campaign) {
    result.error = "no campaign " + std::to_string(campaign_id);
    return result;
  }
  // The spec is parsed here once and handed to the engine and the rules stage.
  CampaignSpec spec;
  try {
    spec = parse_campaign_spec(campaign->spec);
  } catch (const std::exception& e) {
    result.error = std::string("invalid campaign spec: ") + e.what();
    store.set_campaign_state(campaign_id, CampaignState::failed, result.error);
    result.state = CampaignState::failed;
    return result;
  }

  // 1. The engine: search and final phases of every context not done yet.
  CampaignEngine engine(store, backend, table, &events);
  const EngineOutcome outcome = engine.run(campaign_id, spec, cancel);
  if (outcome == EngineOutcome::interrupted)
    return interrupted(store, events, campaign_id, options, false);
  if (outcome == EngineOutcome::failed) {  // the engine recorded the failure and said so
    result.error = engine.error();
    result.state = CampaignState::failed;
    return result;
  }

  // 2. The rules stage: the file, validated, verified, re-measured with it loaded.
  RulesStageOptions rules_options;
  rules_options.rules_path = options.rules_path;
  rules_options.work_dir = options.work_dir;
  rules_options.format = spec.rules_format;
  rules_options.verify = options.verify && spec.verify;
  rules_options.remeasure_rounds = spec.final_repeats;
  rules_options.spec = spec;
  if (!options.backend_name.empty()) {
    try {  // what the rules are tuned under, for `colltune retune --if-changed`
      rules_options.fingerprint =
          backend_fingerprint(options.backend_name, options.backend_settings, backend);
    } catch (const std::exception& e) {
      spdlog::warn("campaign {}: no fingerprint recorded with its rules: {}", campaign_id,
                   e.what());
    }
  }
  if (options.before_rules_stage) options.before_rules_stage();
  JobExecutor executor(store, backend, &events);
  RulesStageResult rules =
      finish_campaign_rules(store, executor, table, campaign_id, rules_options, cancel);
  if (rules.interrupted) return interrupted(store, events, campaign_id, options, true);
  if (rules.rules_version_id > 0)
    events.durable(campaign_id, "rules_version",
                   {{"campaign_id", campaign_id},
                    {"rules_version_id", rules.rules_version_id},
                    {"format", rules.format},
                    {"deployable", rules.deployable},
                    {"verified", rules.verified},
                    {"verification_skipped", rules.verification_skipped},
                    {"reverted", rules.reverted.size()}});

  // 3. The final state.
  result.state = rules.error.empty() ? CampaignState::done : CampaignState::failed;
  result.end = rules.error.empty() ? CampaignRunResult::End::done : CampaignRunResult::End::failed;
  result.error = rules.error;
  result.in_rules_stage = true;
  store.set_campaign_state(campaign_id, result.state, rules.error);
  nlohmann::json payload = {{"campaign_id", campaign_id}, {"state", to_string(result.state)}};
  if (!rules.error.empty()) payload["error"] = rules.error;
  events.durable(campaign_id, "campaign_state", payload);
  result.rules = std::move(rules);
  return result;
}

}  // namespace colltune
