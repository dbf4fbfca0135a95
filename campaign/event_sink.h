// Where a campaign's events go: the engine, the job executor, the rules stage and the lifecycle
// emit through one EventSink, and the sink decides where they land (the store's event log, the
// daemon's live stream, the CLI's progress line, a test's recording). Two kinds of event:
//
//   durable    part of the campaign's history: stored in the campaign's event log (the store's
//              events table) and only then shown to listeners, with its store id (the SSE id a
//              client resumes from). Examples: campaign_state, context_started, job_started,
//              job_done, sizes_failed, rules_version.
//   transient  progress that is not history: shown to listeners only, never stored, no id.
//              Examples: run (one benchmark run recorded), database_locked.
//
// Payloads are JSON objects and carry "campaign_id" as their emitter set it; a sink passes them
// on unchanged. Calls come from the campaign's own thread.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "campaign/store.h"

namespace colltune {

class EventSink {
 public:
  virtual ~EventSink() = default;

  // Stores the event in `campaign_id`'s event log, then publishes it with the id it was stored
  // under; returns that id (> 0). Throws what the store throws (sql::Error, e.g. a database
  // locked past its timeout): the event is then neither stored nor published.
  virtual std::int64_t durable(std::int64_t campaign_id, const std::string& type,
                               const nlohmann::json& payload) = 0;

  // Publishes the event without storing it. Never touches the store; does not throw.
  virtual void transient(std::int64_t campaign_id, const std::string& type,
                         const nlohmann::json& payload) = 0;
};

// Stores durable events in a Store and passes every event (durable ones after they are stored,
// with their id) to an optional observer: the foreground `tune` (progress line) and the default
// sink of an engine built without one.
class StoreEventSink : public EventSink {
 public:
  using Observer = std::function<void(const std::string& type, const nlohmann::json& payload)>;
  explicit StoreEventSink(Store& store, Observer observer = nullptr)
      : store_(store), observer_(std::move(observer)) {}

  std::int64_t durable(std::int64_t campaign_id, const std::string& type,
                       const nlohmann::json& payload) override {
    const std::int64_t id = store_.add_event(campaign_id, type, payload);
    if (observer_) observer_(type, payload);
    return id;
  }
  void transient(std::int64_t, const std::string& type, const nlohmann::json& payload) override {
    if (observer_) observer_(type, payload);
  }

 private:
  Store& store_;
  Observer observer_;
};

}  // namespace colltune
