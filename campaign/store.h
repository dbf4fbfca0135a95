// colltune's SQLite store: campaigns, their tuning contexts, jobs (batches sent to a backend),
// runs with per-size measurements and provenance, optimizer state, rules versions and events.
//
// States and purposes are enums (campaign_states.h) in every record and parameter: the store
// alone converts them to and from the database's strings, and a stored string that names none
// makes the read throw sql::Error naming the table, the row id and the text.
//
// Every state change is one transaction, committed before the caller acts on it (a job is
// recorded "submitting" before it is handed to the backend), so a crash loses nothing that was
// measured and a restart can reconcile. Thread-safe: one connection behind a mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "campaign/campaign_states.h"
#include "campaign/sqlite.h"
#include "core/collective.h"
#include "core/iso_time.h"
#include "core/tuning_config.h"
#include "runner/backend.h"

namespace colltune {

struct CampaignRecord {
  std::int64_t id = 0;
  std::string name;
  CampaignState state = CampaignState::queued;
  nlohmann::json spec;
  std::string error;
  double created_at = 0;
  double updated_at = 0;
};

struct ContextRecord {
  std::int64_t id = 0;
  std::int64_t campaign_id = 0;
  Collective collective = Collective::bcast;
  int comm_size = 0;
  int nodes = 1;
  int ppn = 0;
  ContextState state = ContextState::pending;
  nlohmann::json optimizer_state;  // null until the first batch is recorded
  nlohmann::json result;           // per-size choices once done
};

struct JobRecord {
  std::int64_t id = 0;
  std::int64_t campaign_id = 0;
  std::int64_t context_id = 0;
  std::string tag;  // unique; also given to the backend (Slurm job name)
  std::string backend;
  std::string backend_job_id;
  JobPurpose purpose = JobPurpose::search;
  JobState state = JobState::submitting;
  nlohmann::json request;
  double created_at = 0;
  double updated_at = 0;
};

struct RunRecord {
  std::int64_t id = 0;
  std::int64_t job_id = 0;
  std::int64_t context_id = 0;
  JobPurpose purpose = JobPurpose::search;  // its job's
  std::size_t config_index = 0;
  int repeat = 0;
  TuningConfig config;
  RunOutcome outcome = RunOutcome::ok;
  std::string error;
  Provenance provenance;
  std::vector<OsuRow> rows;
};

struct RulesVersionRecord {
  std::int64_t id = 0;
  std::optional<std::int64_t> campaign_id;
  std::string format;  // classic, v2, json
  std::string content;
  nlohmann::json validation;
  nlohmann::json verification;
  nlohmann::json fingerprint;
  std::string deployed_to;
  double created_at = 0;
};

struct EventRecord {
  std::int64_t id = 0;
  std::optional<std::int64_t> campaign_id;
  std::string type;
  nlohmann::json payload;
  double time = 0;
};

class Store {
 public:
  // Opens or creates the database and migrates its schema to the current version. Throws
  // sql::Error when the file is not a colltune database or is newer than this build, when it
  // exists but is empty (0 bytes: only a path that does not exist starts a new store), and
  // when PRAGMA quick_check finds damaged pages (the reason is in the message).
  explicit Store(const std::string& path);

  static constexpr int kSchemaVersion = 3;
  const std::string& path() const { return db_.path(); }
  // How long a statement waits for another connection's lock before failing with
  // SQLITE_BUSY (default 10 s).
  void set_busy_timeout_ms(int ms) { sqlite3_busy_timeout(db_.handle(), ms); }
  // Calls `f` after each transaction the store commits (sql::Database::on_commit; `f` runs
  // under the store's mutex and must not use the store). Tests: the file as a kill after any
  // commit leaves it.
  void on_commit(std::function<void()> f) {
    std::lock_guard lock(mutex_);
    db_.on_commit(std::move(f));
  }

  // Campaigns.
  std::int64_t create_campaign(const std::string& name, const nlohmann::json& spec,
                               CampaignState state);
  // The campaign and its contexts in one transaction (a crash leaves all or nothing).
  struct NewContext {
    Collective collective;
    int comm_size, nodes, ppn;
  };
  std::int64_t create_campaign_with_contexts(const std::string& name, const nlohmann::json& spec,
                                             CampaignState state,
                                             const std::vector<NewContext>& contexts);
  void set_campaign_state(std::int64_t id, CampaignState state, const std::string& error = "");
  std::optional<CampaignRecord> campaign(std::int64_t id);
  // Newest first; no `state` = any.
  std::vector<CampaignRecord> campaigns(std::optional<CampaignState> state = std::nullopt,
                                        int limit = 100, int offset = 0);
  std::int64_t count_campaigns(std::optional<CampaignState> state = std::nullopt);
  // How a foreground `colltune tune` launched a campaign: {"backend", "backend_settings",
  // "rules_out", "report_out"}; stored once at creation so that a resume restores it. Campaigns
  // created through the daemon have none (the daemon's config names their backend settings).
  void set_campaign_launch(std::int64_t campaign_id, const nlohmann::json& launch);
  std::optional<nlohmann::json> campaign_launch(std::int64_t campaign_id);

  // Contexts.
  std::int64_t add_context(std::int64_t campaign_id, Collective collective, int comm_size,
                           int nodes, int ppn);
  void set_context_state(std::int64_t id, ContextState state);
  void save_optimizer_state(std::int64_t context_id, const nlohmann::json& state);
  void save_context_result(std::int64_t context_id, const nlohmann::json& result);
  std::vector<ContextRecord> contexts(std::int64_t campaign_id);
  // The same without optimizer_state and result (left null): for views that need only each
  // context's shape and state (a bo state is tens of KB of JSON to parse).
  std::vector<ContextRecord> contexts_brief(std::int64_t campaign_id);
  std::optional<ContextRecord> context(std::int64_t id);

  // Jobs. create_job commits the job as submitting before anything is submitted.
  // When `optimizer_state` is not null it is saved for the context in the same transaction:
  // the strategy's state right after it suggested the job's configurations, so that a restart
  // never suggests them again.
  std::int64_t create_job(std::int64_t campaign_id, std::int64_t context_id, const std::string& tag,
                          const std::string& backend, JobPurpose purpose,
                          const nlohmann::json& request,
                          const nlohmann::json& optimizer_state = nullptr);
  // One job of a batch for create_jobs.
  struct NewJob {
    std::int64_t context_id = 0;
    std::string tag;
    nlohmann::json request;
  };
  // A batch of jobs (a search batch: one job per context) and, when `optimizer_state` is not
  // null, the state of the strategy that suggested them, saved for `state_context`: all in one
  // transaction, so that a restart finds the whole batch with the state after its suggestion
  // or none of it and the state before. Returns the jobs' ids in the order given.
  std::vector<std::int64_t> create_jobs(std::int64_t campaign_id, const std::string& backend,
                                        JobPurpose purpose, const std::vector<NewJob>& jobs,
                                        std::int64_t state_context,
                                        const nlohmann::json& optimizer_state);
  void set_job_backend_id(std::int64_t job_id, const std::string& backend_job_id);
  void set_job_state(std::int64_t job_id, JobState state);
  // Marks a job finished and saves the optimizer state that includes its runs, atomically: a
  // restart sees either both or neither.
  void complete_job(std::int64_t job_id, JobState state, std::int64_t context_id,
                    const nlohmann::json& optimizer_state);
  // The same for a batch of jobs whose runs the state includes: every job finished and the
  // state saved in one transaction (a restart that found some of them unfinished with the
  // state saved would run their recorded runs through the strategy a second time).
  void complete_jobs(const std::vector<std::int64_t>& job_ids, JobState state,
                     std::int64_t context_id, const nlohmann::json& optimizer_state);
  std::optional<JobRecord> job(std::int64_t id);
  std::optional<JobRecord> job_by_tag(const std::string& tag);
  std::vector<JobRecord> jobs(std::int64_t campaign_id);
  // Jobs not finished (submitting or running), across campaigns.
  std::vector<JobRecord> unfinished_jobs();

  // Runs. Records one run and its per-size measurements in one transaction. Idempotent: a run
  // already recorded for (job, config_index, repeat) is not stored twice (returns false).
  bool record_run(std::int64_t job_id, std::int64_t context_id, JobPurpose purpose,
                  const RunResult& result);
  // No `purpose` = runs of every purpose.
  std::vector<RunRecord> runs_of_context(std::int64_t context_id,
                                         std::optional<JobPurpose> purpose = std::nullopt);
  std::vector<RunRecord> runs_of_job(std::int64_t job_id);
  std::int64_t count_runs(std::int64_t campaign_id);
  std::int64_t count_measurements(std::int64_t campaign_id = 0);

  // Rules versions.
  std::int64_t add_rules_version(const RulesVersionRecord& record);
  void set_rules_verification(std::int64_t id, const nlohmann::json& verification);
  void set_rules_deployed(std::int64_t id, const std::string& deployed_to);
  // A deploy or rollback of `target` and its record, all or nothing: takes the database's
  // write lock first (BEGIN IMMEDIATE; a lock held by another process makes this throw
  // sql::Error before `file_step` runs), then runs `file_step`, which changes the live file
  // and returns the rules version now live there (nullopt: none of ours), then marks that
  // version deployed to `target` and clears the mark of every other, and commits. When
  // `file_step` throws, nothing is recorded. When the record or the commit fails after
  // `file_step` ran, the exception propagates: the caller must take the file step back.
  void record_deployment(const std::string& target,
                         const std::function<std::optional<std::int64_t>()>& file_step);
  std::optional<RulesVersionRecord> rules_version(std::int64_t id);
  std::vector<RulesVersionRecord> rules_versions(std::optional<std::int64_t> campaign_id = {});

  // Events (append-only log; the daemon streams them).
  std::int64_t add_event(std::optional<std::int64_t> campaign_id, const std::string& type,
                         const nlohmann::json& payload);
  std::vector<EventRecord> events_after(std::int64_t after_id, int limit = 1000);

  // Queries of the daemon's REST API and metrics (paged, newest or oldest first as stated).
  std::int64_t last_event_id();  // 0 when there is none
  // The newest event of `type` (metrics: last retune, last sentinel verdict); none when there
  // is none.
  std::optional<EventRecord> last_event_of_type(const std::string& type);
  // Jobs, oldest first; no `state` = any, campaign_id 0 = every campaign.
  std::vector<JobRecord> jobs_page(std::optional<JobState> state, std::int64_t campaign_id,
                                   int limit, int offset);
  std::int64_t count_jobs(std::optional<JobState> state, std::int64_t campaign_id);
  // One row per (run, message size) of a campaign in recording order, with the run's context.
  struct MeasurementRow {
    std::int64_t run_id = 0;
    std::int64_t job_id = 0;
    std::int64_t context_id = 0;
    JobPurpose purpose = JobPurpose::search;
    TuningConfig config;
    int repeat = 0;
    RunOutcome outcome = RunOutcome::ok;
    OsuRow row;
    double recorded_at = 0;
  };
  std::vector<MeasurementRow> measurements_page(std::int64_t campaign_id, int limit, int offset);
  // Counts by campaign state, job state and run outcome (for metrics); states or outcomes with
  // no row are absent. A stored text that names none throws sql::Error, as every read does.
  std::vector<std::pair<CampaignState, std::int64_t>> campaign_state_counts();
  std::vector<std::pair<JobState, std::int64_t>> job_state_counts();
  std::vector<std::pair<RunOutcome, std::int64_t>> run_outcome_counts();
  // Per campaign: contexts, contexts done, runs (for campaign listings).
  struct CampaignProgress {
    std::int64_t contexts = 0;
    std::int64_t contexts_done = 0;
    std::int64_t runs = 0;
  };
  CampaignProgress campaign_progress(std::int64_t campaign_id);
  // States of a campaign's contexts in id order (cheap: no optimizer state is read).
  std::vector<ContextState> context_states(std::int64_t campaign_id);

 private:
  void migrate();
  void check_integrity();
  RunRecord read_run(sql::Statement& s);
  // Inserts the campaign row; the caller holds mutex_ (and a transaction if it adds more).
  std::int64_t insert_campaign_locked(const std::string& name, const nlohmann::json& spec,
                                      CampaignState state, double now);

  std::mutex mutex_;
  sql::Database db_;
};

}  // namespace colltune
