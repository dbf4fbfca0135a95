// One campaign's lifecycle, the same for the foreground `colltune tune` and the daemon's
// workers: admit and create it, then run it — the engine (search and final phases of every
// context), the rules stage (write, validate, verify, re-measure), and the campaign's final
// state (done, failed, paused, cancelled or left running), set here and nowhere else on this
// path. Callers differ only in what they pass in CampaignRun: where the rules file goes, which
// events sink, what an interruption means.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/algorithm_table.h"
#include "runner/backend.h"
#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/campaign_states.h"
#include "campaign/event_sink.h"
#include "campaign/rules_stage.h"
#include "campaign/store.h"

namespace colltune {

// The backend's algorithm table: from its ompi_info when it has one, else the built-in 4.1 one
// (with a warning naming `label` when ompi_info's output is not usable).
AlgorithmTable algorithm_table_for(Backend& backend, const std::string& label);

// Refuses, before anything is stored, a spec with an unknown strategy or that this backend
// cannot run (CampaignEngine::check_admissible); then stores it as a queued campaign, with
// `launch` (Store::set_campaign_launch) when it is an object. Throws std::invalid_argument
// naming the field.
std::int64_t create_admitted_campaign(Store& store, Backend& backend, const CampaignSpec& spec,
                                      const nlohmann::json& launch = nullptr);

// What an interruption (the cancel flag) leaves the campaign as.
enum class InterruptAction {
  pause,         // "paused" (resumable)
  cancel,        // "cancelled", its unfinished jobs too
  keep_running,  // left "running": the next daemon resumes it (shutdown)
};

struct CampaignRun {
  // The rules stage: where the file is written and scratch space; verify is and-ed with the
  // spec's "verify".
  std::filesystem::path rules_path;
  std::filesystem::path work_dir;
  bool verify = true;
  // The fingerprint stored with the rules (server/fingerprint.h): the backend's name and
  // settings as the campaign was launched. Empty name = none recorded.
  std::string backend_name;
  nlohmann::json backend_settings = nlohmann::json::object();
  // The algorithm table; null = algorithm_table_for(backend).
  const AlgorithmTable* table = nullptr;
  // Every event of the run goes here; null = stored only.
  EventSink* events = nullptr;
  // Interrupts the run when set (Ctrl-C, pause, cancel, shutdown); null = never.
  const CancelFlag* cancel = nullptr;
  // Asked once when the run was interrupted; null = pause.
  std::function<InterruptAction()> on_interrupt;
  // The "paused" state's reason (the CLI: "interrupted by signal").
  std::string pause_reason;
  // Called between the engine and the rules stage (the CLI prints what it is about to verify).
  std::function<void()> before_rules_stage;
};

struct CampaignRunResult {
  enum class End { done, failed, interrupted } end = End::failed;
  // The state the campaign was left in: done, failed, paused, cancelled, running.
  CampaignState state = CampaignState::failed;
  std::string error;  // why it failed
  // Interrupted or failed in the rules stage (after every context was done).
  bool in_rules_stage = false;
  std::optional<RulesStageResult> rules;  // when the rules stage ran to its end
};

// Runs or resumes campaign `campaign_id` to its end. Parses the stored spec once and hands it on.
// Events (durable): the engine's, the executor's, then rules_version (when the stage stored a
// version) and campaign_state (the final state; none when left running). A busy database
// (sql::Error with is_busy) and other exceptions propagate with the state as it was: the caller
// retries (daemon) or reports (CLI); fail_campaign records a failure from outside.
CampaignRunResult run_campaign(Store& store, Backend& backend, std::int64_t campaign_id,
                               const CampaignRun& options);

// Leaves an interrupted campaign as `action` says: its state (and, for pause and cancel, a
// durable campaign_state event; cancel also cancels its unfinished jobs). Returns the state.
CampaignState settle_interrupted(Store& store, EventSink& events, std::int64_t campaign_id,
                                 InterruptAction action, const std::string& pause_reason = "");

// Marks a campaign failed with `error` and says so (durable campaign_state event).
void fail_campaign(Store& store, EventSink& events, std::int64_t campaign_id,
                   const std::string& error);

// Marks the campaign's submitted or running jobs cancelled (a durable job_state event each).
void cancel_unfinished_jobs(Store& store, EventSink& events, std::int64_t campaign_id);

}  // namespace colltune
