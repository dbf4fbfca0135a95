// Re-tuning after cluster changes: compare the fingerprint the deployed rules were tuned under
// with the current one and, on a relevant difference (or when the rules are too old, or when a
// sentinel saw them regress), start a re-tuning campaign: the same spec as the campaign that
// made the rules, warm-started from it (spec.warm_start_from).
//
// Actions (RetuneDecision::action):
//   nothing      no relevant change, rules young enough, nothing forced
//   retune       a campaign is (dry_run: would be) started
//   running      a re-tuning campaign of these rules is already queued or running
//   awaiting_deploy  a finished re-tuning campaign made rules under the current fingerprint:
//                they wait for a deploy (only when the fingerprint alone asked for a re-tune)
//   no_rules     no rules version to check
//   no_baseline  the rules version has no fingerprint and nothing else asks for a re-tune
//   no_source    the rules version came from no campaign (imported): nothing to re-run
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "campaign/fingerprint.h"
#include "campaign/store.h"
#include "runner/backend.h"

namespace colltune {

// The current fingerprint of a backend's target: local -> this machine (OSU folder and
// ompi_info from the backend), slurm -> the partition's nodes through srun, sim / replay ->
// the model (model_fingerprint). `runner` replaces the command runner (tests).
nlohmann::json backend_fingerprint(const std::string& backend_name, const nlohmann::json& settings,
                                   Backend& backend, const CommandRunner* runner = nullptr);

struct RetuneOptions {
  bool if_changed = true;   // re-tune on a relevant fingerprint change
  double max_age_days = 0;  // also re-tune rules older than this; 0 = no limit
  bool force = false;       // re-tune whatever the fingerprint says (e.g. a sentinel fired)
  std::string reason;       // why it was forced; recorded with the campaign's event
  std::optional<std::int64_t> rules_version_id;  // default: the deployed version (else newest)
  bool dry_run = false;                          // decide and report; start nothing

  // From the JSON body of POST /api/v1/retune. Throws std::invalid_argument.
  static RetuneOptions from_json(const nlohmann::json& j);
};

struct RetuneDecision {
  std::string action;
  std::string message;                      // one human sentence
  std::vector<std::string> reasons;         // why a re-tune (when action is retune)
  std::optional<RulesVersionRecord> rules;  // the version checked
  std::optional<CampaignRecord> source;     // the campaign that made it
  nlohmann::json current_fingerprint = nullptr;
  std::vector<FingerprintChange> changes;
  double age_days = 0;
  std::optional<CampaignRecord> campaign;  // started (or already running) re-tuning campaign

  nlohmann::json to_json() const;
};

// The rules version a re-tune looks at: `id` when given, else the newest deployed one, else the
// newest one.
std::optional<RulesVersionRecord> rules_version_to_check(Store& store,
                                                         std::optional<std::int64_t> id);

// The spec of a re-tuning campaign of `source`: its spec, renamed, with warm_start_from.
nlohmann::json retune_campaign_spec(const CampaignRecord& source);

// Decides and, unless dry_run, starts the campaign through `create` (which stores and queues a
// spec and returns its record; the daemon's CampaignManager::create). `current_fingerprint`
// gives the fingerprint of a backend by name; it is called only when needed.
RetuneDecision retune(
    Store& store, const RetuneOptions& options,
    const std::function<nlohmann::json(const std::string& backend)>& current_fingerprint,
    const std::function<CampaignRecord(const nlohmann::json& spec)>& create, double now = 0);

// Exit codes of `colltune retune` and `colltune sentinel` (for cron and systemd).
inline constexpr int kExitNothingToDo = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitCannotCompare = 3;  // no_rules, no_baseline, no_source
inline constexpr int kExitRetuneStarted = 10;
inline constexpr int kExitRegressionOnly = 11;  // sentinel fired, no server to re-tune

}  // namespace colltune
