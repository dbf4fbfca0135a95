#include "server/daemon_campaigns.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_lifecycle.h"
#include "campaign/campaign_spec.h"
#include "campaign/campaign_states.h"
#include "campaign/job_executor.h"
#include "campaign/retune.h"
#include "campaign/rules_stage.h"
#include "optimizer/strategy.h"
#include "runner/backend_factory.h"

namespace colltune {
namespace {

// Follows the best latency per message size of each context's search runs, to announce new
// bests. Starts from what the store already holds, so a resumed campaign does not re-announce.
class BestTracker {
 public:
  explicit BestTracker(Store& store) : store_(store) {}

  // For a "run" event: the sizes where this run beat every earlier search run.
  nlohmann::json improvements(const nlohmann::json& run_event) {
    if (run_event.value("purpose", "") != "search" || run_event.value("outcome", "") != "ok")
      return nullptr;
    const auto job_id = run_event.value("job_id", std::int64_t{0});
    const auto context_id = run_event.value("context_id", std::int64_t{0});
    const int repeat = run_event.value("repeat", 0);
    TuningConfig config;
    try {
      config = run_event.at("config").get<TuningConfig>();
    } catch (const std::exception&) {
      return nullptr;
    }
    std::optional<RunRecord> run;
    for (auto& r : store_.runs_of_job(job_id))
      if (r.config == config && r.repeat == repeat) run = std::move(r);
    if (!run) return nullptr;
    auto& best = best_[context_id];
    if (!initialized_.count(context_id)) {
      initialized_.insert(context_id);
      for (const auto& earlier : store_.runs_of_context(context_id, JobPurpose::search))
        if (earlier.id < run->id && earlier.outcome == RunOutcome::ok) fold(best, earlier, nullptr);
    }
    nlohmann::json improved = nlohmann::json::array();
    fold(best, *run, &improved);
    if (improved.empty()) return nullptr;
    return {{"context_id", context_id},
            {"job_id", job_id},
            {"run_id", run->id},
            {"config", config},
            {"improved", improved}};
  }

 private:
  static void fold(std::map<std::int64_t, double>& best, const RunRecord& run,
                   nlohmann::json* improved) {
    for (const auto& row : run.rows) {
      auto it = best.find(row.size);
      if (it != best.end() && row.avg_us >= it->second) continue;
      if (improved)
        improved->push_back({{"msg_size", row.size},
                             {"latency_us", row.avg_us},
                             {"previous_us", it == best.end() ? nlohmann::json(nullptr)
                                                              : nlohmann::json(it->second)}});
      best[row.size] = row.avg_us;
    }
  }

  Store& store_;
  std::map<std::int64_t, std::map<std::int64_t, double>> best_;
  std::set<std::int64_t> initialized_;
};

}  // namespace

CampaignManager::CampaignManager(Store& store, EventHub& hub, Metrics& metrics,
                                 const DaemonConfig& config)
    : store_(store), hub_(hub), metrics_(metrics), config_(config) {}

CampaignManager::~CampaignManager() { stop(); }

void CampaignManager::start() {
  std::lock_guard lock(mutex_);
  started_ = true;
  stopping_ = false;
  schedule_locked();
}

void CampaignManager::stop() {
  std::map<std::int64_t, std::unique_ptr<Worker>> workers;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, worker] : workers_) {
      if (worker->stop_request == StopRequest::none) worker->stop_request = StopRequest::shutdown;
      worker->cancel.cancel();
    }
  }
  // Workers take the lock when they end: join without holding it.
  for (;;) {
    std::unique_ptr<Worker> worker;
    {
      std::lock_guard lock(mutex_);
      if (workers_.empty()) break;
      auto it = workers_.begin();
      worker = std::move(it->second);
      workers_.erase(it);
    }
    if (worker->thread.joinable()) worker->thread.join();
  }
}

CampaignRecord CampaignManager::create(const nlohmann::json& spec_json) {
  const CampaignSpec spec = parse_campaign_spec(spec_json);
  if (!config_.backend(spec.backend)) {
    std::string list;
    for (const auto& b : config_.backends) list += (list.empty() ? "" : ", ") + b.name;
    throw std::invalid_argument("backend: '" + spec.backend +
                                "' is not configured on this daemon (configured: " + list + ")");
  }
  const BackendConfig* b = config_.backend(spec.backend);
  auto backend = make_backend(b->name, b->settings);
  const auto id = create_admitted_campaign(store_, *backend, spec);
  hub_.record(
      id, "campaign_created",
      {{"campaign_id", id}, {"name", spec.name}, {"backend", spec.backend}, {"state", "queued"}});
  {
    std::lock_guard lock(mutex_);
    if (started_ && !stopping_) schedule_locked();
  }
  return record_or_throw(id);
}

CampaignRecord CampaignManager::record_or_throw(std::int64_t id) {
  auto record = store_.campaign(id);
  if (!record) throw CampaignNotFound("no campaign " + std::to_string(id));
  return *record;
}

const char* CampaignManager::request_name(StopRequest request) {
  switch (request) {
    case StopRequest::none:
      return "";
    case StopRequest::pause:
      return "pause";
    case StopRequest::cancel:
      return "cancel";
    case StopRequest::shutdown:
      return "shutdown";
  }
  return "";
}

void CampaignManager::stop_idle_locked(std::int64_t id, StopRequest request) {
  const auto record = record_or_throw(id);
  const auto state = record.state;
  if (request == StopRequest::pause) {
    if (state != CampaignState::queued && state != CampaignState::running)
      throw CampaignConflict("campaign " + std::to_string(id) + " is " + to_string(state) +
                             "; only a queued or running campaign can be paused");
    settle_interrupted(store_, hub_, id, InterruptAction::pause);
  } else if (request == StopRequest::cancel) {
    if (is_final(state))
      throw CampaignConflict("campaign " + std::to_string(id) + " is already " + to_string(state));
    settle_interrupted(store_, hub_, id, InterruptAction::cancel);
  }
}

CampaignRecord CampaignManager::pause(std::int64_t id, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  record_or_throw(id);
  auto it = workers_.find(id);
  if (it != workers_.end() && !it->second->finished) {
    if (it->second->stop_request == StopRequest::cancel)
      throw CampaignConflict("campaign " + std::to_string(id) + " is being cancelled");
    it->second->stop_request = StopRequest::pause;
    it->second->cancel.cancel();
    worker_finished_.wait_for(lock, wait, [&] {
      auto w = workers_.find(id);
      return w == workers_.end() || w->second->finished;
    });
    return record_or_throw(id);
  }
  stop_idle_locked(id, StopRequest::pause);
  return record_or_throw(id);
}

CampaignRecord CampaignManager::resume(std::int64_t id) {
  std::lock_guard lock(mutex_);
  auto record = record_or_throw(id);
  auto it = workers_.find(id);
  if (it != workers_.end() && !it->second->finished)
    throw CampaignConflict(
        "campaign " + std::to_string(id) + " is " +
        (it->second->stop_request == StopRequest::none
             ? std::string("running")
             : "stopping (" + std::string(request_name(it->second->stop_request)) + ")"));
  if (record.state != CampaignState::paused && record.state != CampaignState::failed)
    throw CampaignConflict("campaign " + std::to_string(id) + " is " + to_string(record.state) +
                           "; only a paused or failed campaign can be resumed");
  store_.set_campaign_state(id, CampaignState::queued);
  hub_.record(id, "campaign_state",
              {{"campaign_id", id}, {"state", to_string(CampaignState::queued)}});
  if (started_ && !stopping_) schedule_locked();
  return record_or_throw(id);
}

CampaignRecord CampaignManager::cancel(std::int64_t id, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  record_or_throw(id);
  auto it = workers_.find(id);
  if (it != workers_.end() && !it->second->finished) {
    it->second->stop_request = StopRequest::cancel;
    it->second->cancel.cancel();
    worker_finished_.wait_for(lock, wait, [&] {
      auto w = workers_.find(id);
      return w == workers_.end() || w->second->finished;
    });
    return record_or_throw(id);
  }
  stop_idle_locked(id, StopRequest::cancel);
  return record_or_throw(id);
}

InterruptAction CampaignManager::interrupt_action(Worker* worker) {
  std::lock_guard lock(mutex_);
  worker->acted_on = worker->stop_request;
  if (worker->stop_request == StopRequest::pause) return InterruptAction::pause;
  if (worker->stop_request == StopRequest::cancel) return InterruptAction::cancel;
  return InterruptAction::keep_running;  // shutdown: the next daemon resumes it
}

void CampaignManager::settle_late_request_locked(std::int64_t id, Worker* worker) {
  const StopRequest request = worker->stop_request;
  if (request != StopRequest::pause && request != StopRequest::cancel) return;
  if (worker->acted_on == request) return;
  try {
    stop_idle_locked(id, request);
    spdlog::info("campaign {}: {} applied as its worker ended", id, request_name(request));
  } catch (const CampaignConflict& e) {
    // The run ended in a state the request does not change (done; a pause of a failed one).
    spdlog::info("campaign {}: {} not applied: {}", id, request_name(request), e.what());
  } catch (const std::exception& e) {
    spdlog::error("campaign {}: cannot apply {}: {}", id, request_name(request), e.what());
  }
}

CampaignManager::Activity CampaignManager::activity(std::int64_t id) {
  std::lock_guard lock(mutex_);
  auto it = workers_.find(id);
  if (it == workers_.end() || it->second->finished) return {};
  const StopRequest request = it->second->stop_request;
  return {true, request == StopRequest::shutdown ? "" : request_name(request)};
}

std::size_t CampaignManager::active_workers() {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [id, w] : workers_)
    if (!w->finished) ++n;
  return n;
}

nlohmann::json CampaignManager::queue() {
  std::lock_guard lock(mutex_);
  nlohmann::json out = nlohmann::json::array();
  const auto waiting = store_.campaigns(CampaignState::queued, 1000, 0);
  for (const auto& b : config_.backends) {
    nlohmann::json running = nlohmann::json::array();
    for (const auto& [id, w] : workers_)
      if (!w->finished && w->backend == b.name) running.push_back(id);
    nlohmann::json queued = nlohmann::json::array();
    for (auto it = waiting.rbegin(); it != waiting.rend(); ++it)  // oldest first
      if (it->spec.is_object() && it->spec.value("backend", "") == b.name) queued.push_back(it->id);
    out.push_back({{"backend", b.name},
                   {"max_concurrent_jobs", b.max_concurrent_jobs},
                   {"running", running},
                   {"queued", queued}});
  }
  return out;
}

const AlgorithmTable& CampaignManager::table_for(const std::string& backend_name) {
  std::lock_guard lock(tables_mutex_);
  auto it = tables_.find(backend_name);
  if (it != tables_.end()) return *it->second;
  auto table = std::make_unique<AlgorithmTable>(AlgorithmTable::builtin_4_1());
  if (const auto* b = config_.backend(backend_name)) {
    try {
      auto backend = make_backend(b->name, b->settings);
      *table = algorithm_table_for(*backend, "backend " + backend_name + ": ");
    } catch (const std::exception& e) {
      spdlog::warn("backend {}: ompi_info not usable ({}); using the built-in 4.1 table",
                   backend_name, e.what());
    }
  }
  return *tables_.emplace(backend_name, std::move(table)).first->second;
}

void CampaignManager::reap_locked() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->second->finished && it->second->thread.get_id() != std::this_thread::get_id()) {
      // It set `finished` as its last act under this lock: join returns promptly.
      if (it->second->thread.joinable()) it->second->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

void CampaignManager::schedule_locked() {
  reap_locked();
  if (!started_ || stopping_) return;
  std::map<std::string, int> active;
  for (const auto& [id, w] : workers_)
    if (!w->finished) ++active[w->backend];
  // Campaigns a previous daemon left running go first, then queued ones, oldest first.
  std::vector<CampaignRecord> candidates;
  for (const CampaignState state : {CampaignState::running, CampaignState::queued}) {
    auto list = store_.campaigns(state, 100000, 0);
    std::reverse(list.begin(), list.end());
    for (auto& c : list) candidates.push_back(std::move(c));
  }
  for (const auto& c : candidates) {
    if (workers_.count(c.id)) continue;
    const std::string backend = c.spec.is_object() ? c.spec.value("backend", "") : "";
    const BackendConfig* b = config_.backend(backend);
    if (!b) {
      fail_campaign(store_, hub_, c.id,
                    "backend '" + backend + "' is not configured on this daemon");
      continue;
    }
    if (active[backend] >= b->max_concurrent_jobs) continue;
    ++active[backend];
    auto worker = std::make_unique<Worker>();
    worker->backend = backend;
    Worker* raw = worker.get();
    workers_.emplace(c.id, std::move(worker));
    raw->thread = std::thread([this, id = c.id, raw] { run_worker(id, raw); });
  }
}

namespace {

// A worker's events: to the hub (stored and streamed, or streamed only), plus what the daemon
// derives from them: new bests (durable new_best events) and decision-time metrics.
class WorkerEvents : public EventSink {
 public:
  WorkerEvents(EventHub& hub, Metrics& metrics, Store& store)
      : hub_(hub), metrics_(metrics), best_(store) {}

  std::int64_t durable(std::int64_t campaign_id, const std::string& type,
                       const nlohmann::json& payload) override {
    const std::int64_t id = hub_.durable(campaign_id, type, payload);
    follow(campaign_id, type, payload);
    return id;
  }
  void transient(std::int64_t campaign_id, const std::string& type,
                 const nlohmann::json& payload) override {
    hub_.transient(campaign_id, type, payload);
    follow(campaign_id, type, payload);
  }

 private:
  void follow(std::int64_t campaign_id, const std::string& type, const nlohmann::json& payload) {
    const auto now = std::chrono::steady_clock::now();
    if (type == "context_started" || type == "job_done") {
      decision_start_ = now;
    } else if (type == "job_started") {
      if (decision_start_ && payload.value("purpose", "") == "search")
        metrics_.observe_decision(std::chrono::duration<double>(now - *decision_start_).count());
      decision_start_.reset();
    } else if (type == "run") {
      if (auto improved = best_.improvements(payload); !improved.is_null()) {
        improved["campaign_id"] = campaign_id;
        hub_.durable(campaign_id, "new_best", improved);
      }
    }
  }

  EventHub& hub_;
  Metrics& metrics_;
  BestTracker best_;
  std::optional<std::chrono::steady_clock::time_point> decision_start_;
};

}  // namespace

CampaignRunResult CampaignManager::run_campaign_once(std::int64_t id, Worker* worker) {
  const BackendConfig* b = config_.backend(worker->backend);
  auto backend = make_backend(b->name, b->settings);
  WorkerEvents events(hub_, metrics_, store_);
  // The campaign's own copy of its rules file (scratch: verification loads it on the backend);
  // deploys copy a version into rules_dir.
  const std::filesystem::path work =
      std::filesystem::path(config_.database + ".work") / ("campaign-" + std::to_string(id));
  std::filesystem::create_directories(work);
  CampaignRun run;
  run.rules_path = work / "colltune-rules.conf";
  run.work_dir = work;
  run.backend_name = b->name;
  run.backend_settings = b->settings;
  run.table = &table_for(worker->backend);
  run.events = &events;
  run.cancel = &worker->cancel;
  run.on_interrupt = [this, worker] { return interrupt_action(worker); };
  spdlog::info("campaign {}: worker started on backend {}", id, worker->backend);
  return run_campaign(store_, *backend, id, run);
}

void CampaignManager::record_failure(std::int64_t id, const std::string& what) {
  try {
    fail_campaign(store_, hub_, id, what);
  } catch (const std::exception& inner) {
    spdlog::error("campaign {}: cannot record failure: {}", id, inner.what());
  }
}

void CampaignManager::run_worker(std::int64_t id, Worker* worker) {
  CampaignRunResult result;
  // Another process holding the database's write lock longer than the busy timeout must not
  // fail the campaign: wait with backoff (1, 2, 4 ... 30 s), say so in the events, and resume
  // from what the store holds (as after a restart: no recorded run is repeated).
  double waited_s = 0;
  int lock_waits = 0;
  for (;;) {
    try {
      result = run_campaign_once(id, worker);
    } catch (const sql::Error& e) {
      if (sql::is_busy(e) && !worker->cancel.cancelled()) {
        const double delay = std::min(30.0, static_cast<double>(1 << std::min(lock_waits, 5)));
        ++lock_waits;
        spdlog::warn("campaign {}: {}; retrying in {:.0f} s (wait {})", id, e.what(), delay,
                     lock_waits);
        // Transient: the store cannot take an event while another process holds its lock.
        hub_.transient(id, "database_locked",
                       {{"campaign_id", id},
                        {"error", e.what()},
                        {"attempt", lock_waits},
                        {"retry_in_s", delay},
                        {"waited_s", waited_s}});
        const auto until = std::chrono::steady_clock::now() +
                           std::chrono::milliseconds(static_cast<int>(delay * 1000));
        while (std::chrono::steady_clock::now() < until && !worker->cancel.cancelled())
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        waited_s += delay;
        if (!worker->cancel.cancelled()) continue;
        // Interrupted while waiting: the end the stop request asks for.
        result = {};
        result.end = CampaignRunResult::End::interrupted;
        try {
          result.state = settle_interrupted(store_, hub_, id, interrupt_action(worker));
        } catch (const std::exception& inner) {
          spdlog::error("campaign {}: cannot record its end: {}", id, inner.what());
        }
        break;
      }
      result.error = e.what();
      record_failure(id, e.what());
    } catch (const std::exception& e) {
      result.error = e.what();
      record_failure(id, e.what());
    }
    break;
  }
  if (lock_waits > 0) {
    try {
      hub_.record(id, "database_lock_waited",
                  {{"campaign_id", id},
                   {"waits", lock_waits},
                   {"waited_s", waited_s},
                   {"message",
                    "the database was locked by another process; the campaign "
                    "waited and resumed"}});
    } catch (const std::exception& e) {
      spdlog::error("campaign {}: cannot record the lock wait: {}", id, e.what());
    }
  }

  if (result.end == CampaignRunResult::End::failed)
    spdlog::warn("campaign {} failed: {}", id, result.error);
  std::lock_guard lock(mutex_);
  spdlog::info("campaign {}: worker ended", id);
  // A worker's optimizer state can be tens of MB; give freed memory back to the system
  // instead of keeping it in this thread's malloc arena for the daemon's lifetime.
  ::malloc_trim(0);
  settle_late_request_locked(id, worker);
  worker->finished = true;
  worker_finished_.notify_all();
  schedule_locked();
}

}  // namespace colltune
