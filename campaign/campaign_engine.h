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
#include "campaign/event_sink.h"
#include "campaign/job_executor.h"
#include "campaign/store.h"
#include "core/algorithm_table.h"
#include "optimizer/paired_final.h"
#include "runner/backend.h"

namespace colltune {

class Strategy;

// Progress (the CLI's progress bar, the daemon's event stream) goes out through an EventSink
// (server/event_sink.h). Durable: job_started, job_submitted, job_resubmitted (a backend job
// ended early, e.g. a node failed: payload "reason"), job_done, context_started (a whole-cluster
// search: "comm_sizes", and under a budget for the whole campaign "node_seconds": {total,
// reserve: "first_looks"}; a whole-cluster size's final phase after it: "phase" final),
// context_done, search_stopped (evaluations, planned, reason: planned, converged, time_budget;
// a whole-cluster search: once, with "comm_sizes", reason done or time_budget and the
// strategy's "stop_reason"), sizes_failed, campaign_state. Transient: run. Emitted on the
// engine's thread.

enum class EngineOutcome { completed, interrupted, failed };

class CampaignEngine {
 public:
  // A null `events` stores the durable events and shows nothing.
  CampaignEngine(Store& store, Backend& backend, const AlgorithmTable& table,
                 EventSink* events = nullptr);

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
  // The same with the campaign's spec as the caller parsed it (run_campaign parses it once).
  EngineOutcome run(std::int64_t campaign_id, const CampaignSpec& spec, const CancelFlag& cancel);

  const std::string& error() const { return error_; }

 private:
  // `searched`: a strategy whose search is already done elsewhere (whole-cluster mode: a view
  // of the ClusterStrategy at this size); null = the spec's strategy searches this context.
  // The paired final phase's cap counts the runs the search made at this context and those it
  // used as data without making them (Strategy::reused_runs: a warm start's earlier runs).
  // `look_budget` (whole-cluster, cluster.total_node_seconds): asked before each look of the
  // paired final phase; a look that does not fit is not run (optimizer/paired_final.h).
  // `lend_from` (whole-cluster): the contexts of the neighbouring measured communicator sizes,
  // whose final pairs of the same candidate lend their variance to this size's intervals
  // (paired_final_intervals; docs/final-choice.md, "Neighbouring communicator sizes"): their
  // final runs recorded before the look being decided, so a resume decides as the first run did.
  EngineOutcome run_context(const CampaignRecord& campaign, const CampaignSpec& spec,
                            const ContextRecord& context, const CancelFlag& cancel,
                            Strategy* searched = nullptr,
                            const std::function<FinalLookBudget()>& look_budget = {},
                            const std::vector<std::int64_t>& lend_from = {});
  // Whole-cluster mode (server/cluster_search.cpp): the contexts of one collective searched by
  // one ClusterStrategy, then each measured size's final phase, then the predictions for the
  // sizes not run (saved in the result of the group's first context).
  EngineOutcome run_cluster_group(const CampaignRecord& campaign, const CampaignSpec& spec,
                                  const std::vector<ContextRecord>& group,
                                  const CancelFlag& cancel);
  // Runs the runs of `job_id` not yet recorded. Returns false when interrupted.
  bool execute_job(const JobRecord& job, const CancelFlag& cancel);
  void emit(std::int64_t campaign_id, const std::string& type, nlohmann::json payload,
            bool persist);

  Store& store_;
  Backend& backend_;
  const AlgorithmTable& table_;
  StoreEventSink own_events_;
  EventSink& events_;
  JobExecutor executor_;
  std::string error_;
};

// The campaign report (campaign_report, build_campaign_report) is in server/report.h.

// Benchmark seconds spent by a campaign's runs (sum of run wall times).
double campaign_benchmark_seconds(Store& store, std::int64_t campaign_id);

}  // namespace colltune
