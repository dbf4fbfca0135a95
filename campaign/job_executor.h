// Runs one recorded job on a backend: only the runs of the job not yet in the store (all of
// them for a fresh job, the missing ones after an interruption), each stored as it arrives.
// Shared by the search/final phases and the rules verification and re-measurement.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "campaign/event_sink.h"
#include "campaign/store.h"
#include "runner/backend.h"

namespace colltune {

// Events (through `events`): job_started, job_submitted, job_resubmitted (durable), run
// (transient, one per recorded run). A null sink stores the durable ones and shows nothing.
class JobExecutor {
 public:
  JobExecutor(Store& store, Backend& backend, EventSink* events)
      : store_(store),
        backend_(backend),
        own_events_(store),
        events_(events ? *events : own_events_) {}

  // Creates a job record (committed as "submitting" before anything runs) and executes it.
  // Returns the job id; `completed` tells whether every run was made (false when cancelled).
  std::int64_t submit(std::int64_t campaign_id, std::int64_t context_id, JobPurpose purpose,
                      const BenchmarkRequest& request, const CancelFlag& cancel, bool& completed);

  // Executes the runs of `job` not recorded yet. Returns false when interrupted by `cancel`.
  bool execute(const JobRecord& job, const CancelFlag& cancel);

  Backend& backend() { return backend_; }
  EventSink& events() { return events_; }

 private:
  Store& store_;
  Backend& backend_;
  StoreEventSink own_events_;
  EventSink& events_;
};

// Runs with these outcomes count as failed evaluations (never retried by the strategy).
bool is_failed_outcome(RunOutcome outcome);

}  // namespace colltune
