// Drives one campaign to its end: for each context, asks the strategy for a batch, records the
// batch as a job before handing it to the backend, stores every run as it arrives, feeds the
// runs back to the strategy, and finally re-measures the finalists and picks per message size.
//
// The engine keeps no state of its own between calls: everything lives in the Store, so a
// campaign interrupted at any point (Ctrl-C, kill -9) resumes where it stopped, re-running only
// the runs that were never recorded.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "campaign/campaign_spec.h"
#include "campaign/job_executor.h"
#include "campaign/store.h"
#include "core/algorithm_table.h"
#include "runner/backend.h"

namespace colltune {

// Progress (the CLI's progress bar, the daemon's event stream) arrives through an
// EventCallback (job_executor.h). Types: job_started, job_submitted, job_resubmitted (a
// backend job ended early, e.g. a node failed: payload "reason"), run, job_done,
// context_started, context_done, campaign_state. Called on the engine's thread.

enum class EngineOutcome { completed, interrupted, failed };

class CampaignEngine {
 public:
  CampaignEngine(Store& store, Backend& backend, const AlgorithmTable& table,
                 EventCallback on_event = nullptr);

  // Creates a campaign record (state "queued") with one context per spec context.
  static std::int64_t create_campaign(Store& store, const CampaignSpec& spec);

  // Refuses, before anything is stored or run, a spec this backend cannot sanely run (a
  // collective it cannot benchmark, a scale past its limits: Backend::admit) or whose
  // warm_start_from names no campaign of `store`. Throws std::invalid_argument naming the
  // field ("contexts[0]: alltoall P=4: ..."). The CLI and the daemon call it before
  // create_campaign.
  static void check_admissible(Store& store, Backend& backend, const CampaignSpec& spec);

  // Runs or resumes the search and final phases of every context of the campaign. Returns
  // interrupted when `cancel` was set (the campaign's state is left to the caller), failed with
  // the campaign marked failed and a clear error when something cannot go on.
  EngineOutcome run(std::int64_t campaign_id, const CancelFlag& cancel);

  const std::string& error() const { return error_; }

 private:
  EngineOutcome run_context(const CampaignRecord& campaign, const CampaignSpec& spec,
                            const ContextRecord& context, const CancelFlag& cancel);
  // Runs the runs of `job_id` not yet recorded. Returns false when interrupted.
  bool execute_job(const JobRecord& job, const CancelFlag& cancel);
  void emit(std::int64_t campaign_id, const std::string& type, nlohmann::json payload,
            bool persist);

  Store& store_;
  Backend& backend_;
  const AlgorithmTable& table_;
  EventCallback on_event_;
  JobExecutor executor_;
  std::string error_;
};

// Builds the report of a campaign from the store: one object per (collective, comm_size,
// msg_size) with default_us, best {algorithm, segsize, fanout}, best_us, speedup (and noise,
// algorithm names), plus cost {jobs, runs, benchmark_seconds}.
nlohmann::json campaign_report(Store& store, std::int64_t campaign_id, const AlgorithmTable& table);

// Benchmark seconds spent by a campaign's runs (sum of run wall times).
double campaign_benchmark_seconds(Store& store, std::int64_t campaign_id);

}  // namespace colltune
