// The daemon's campaign scheduler: one worker thread per running campaign, at most
// max_concurrent_jobs of them per backend, each driving a CampaignEngine from the store.
//
// States: queued (waiting for a worker) -> running -> done | failed; pause: running -> paused
// (the engine is interrupted through its cancel flag; resume from paused or failed -> queued);
// cancel: any unfinished state -> cancelled. A daemon that stops (or is killed) leaves its
// campaigns "running" in the store, and the next one resumes them first: the engine re-runs only
// what was never recorded.
//
// Stop requests and a worker that is ending: a pause or cancel either reaches the run's
// decision (read under the lock when the run was interrupted), or is applied to the stored state
// by the worker as its last act under the lock (after the run settled a pause, ended done or
// failed, or left the campaign running for the next daemon), or finds the worker gone and acts
// on the stored state itself. None is lost in between (a cancel after a settled pause cancels;
// tests/server/daemon_campaigns_test.cpp holds the worker there).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_lifecycle.h"
#include "campaign/job_executor.h"
#include "campaign/store.h"
#include "core/algorithm_table.h"
#include "runner/backend.h"
#include "server/config.h"
#include "server/events.h"
#include "server/metrics.h"

namespace colltune {

// A request that does not fit the campaign's state (HTTP 409).
class CampaignConflict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// No such campaign (HTTP 404).
class CampaignNotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CampaignManager {
 public:
  CampaignManager(Store& store, EventHub& hub, Metrics& metrics, const DaemonConfig& config);
  ~CampaignManager();
  CampaignManager(const CampaignManager&) = delete;
  CampaignManager& operator=(const CampaignManager&) = delete;

  // Starts workers for campaigns left running by a previous daemon, then queued ones.
  void start();
  // Interrupts every worker (their campaigns stay "running" for the next start) and joins them.
  void stop();

  // Validates a spec (parse_campaign_spec plus: backend configured here, strategy known) and
  // stores it as a queued campaign. Throws std::invalid_argument with a clear message.
  CampaignRecord create(const nlohmann::json& spec);

  // Transitions. Each waits up to `wait` for a running worker to stop, then returns the record
  // as it is (check activity() for a stop still pending). Throw CampaignNotFound or
  // CampaignConflict (e.g. pausing a finished campaign).
  CampaignRecord pause(std::int64_t id, std::chrono::milliseconds wait);
  CampaignRecord resume(std::int64_t id);
  CampaignRecord cancel(std::int64_t id, std::chrono::milliseconds wait);

  struct Activity {
    bool active = false;  // a worker is driving the campaign now
    std::string pending;  // "pause" or "cancel" while the worker has not stopped yet
  };
  Activity activity(std::int64_t id);

  // Per backend: cap, campaigns running, campaigns waiting.
  nlohmann::json queue();
  std::size_t active_workers();

  // The backend's algorithm table (from its ompi_info, else the built-in 4.1 one); cached.
  const AlgorithmTable& table_for(const std::string& backend);

 private:
  // What was asked of a running worker; the last request wins, except that a cancel is never
  // turned into a pause.
  enum class StopRequest { none, pause, cancel, shutdown };
  static const char* request_name(StopRequest request);  // "", "pause", "cancel", "shutdown"

  struct Worker {
    std::thread thread;
    CancelFlag cancel;
    std::string backend;
    StopRequest stop_request = StopRequest::none;
    // The request the run's interruption was settled by (read under the lock when the run
    // asked); a different request that came after it is applied when the worker ends.
    std::optional<StopRequest> acted_on;
    bool finished = false;
  };

  void schedule_locked();
  void reap_locked();
  void run_worker(std::int64_t id, Worker* worker);
  // One pass of the campaign's lifecycle (run_campaign: engine, rules stage, final state); a
  // busy database propagates (sql::Error).
  CampaignRunResult run_campaign_once(std::int64_t id, Worker* worker);
  // Records the campaign as failed with `what` (best effort).
  void record_failure(std::int64_t id, const std::string& what);
  // What the worker's stop request makes of an interruption (pause, cancel, shutdown); records
  // the request as the one acted on.
  InterruptAction interrupt_action(Worker* worker);
  // A pause or cancel of a campaign no worker is running: its stored state, settled here
  // (settle_interrupted). Throws CampaignConflict when the state does not allow it.
  void stop_idle_locked(std::int64_t id, StopRequest request);
  // The worker's last act under the lock, with `finished`: a pause or cancel that came after
  // the run settled its end (or after it ended on its own) is applied to the stored state now,
  // as if it had come a moment later, to a campaign no worker runs. No request is lost between
  // the decision and the worker's end.
  void settle_late_request_locked(std::int64_t id, Worker* worker);
  CampaignRecord record_or_throw(std::int64_t id);

  Store& store_;
  EventHub& hub_;
  Metrics& metrics_;
  const DaemonConfig& config_;

  std::mutex mutex_;
  std::condition_variable worker_finished_;
  std::map<std::int64_t, std::unique_ptr<Worker>> workers_;
  bool started_ = false;
  bool stopping_ = false;

  std::mutex tables_mutex_;
  std::map<std::string, std::unique_ptr<AlgorithmTable>> tables_;
};

}  // namespace colltune
