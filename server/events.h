// The daemon's live event stream. Durable events live in the store's events table (their id is
// the SSE event id, so a client resumes with Last-Event-ID); the hub tails that table and adds
// transient events (per-run progress, never stored, no id) in the order they happened.
//
// Writers: the hub is the daemon's EventSink (server/event_sink.h): a campaign's durable events
// are stored and published with their id (durable(), record()), transient ones published only
// (transient()); events other processes store are published by sync(). Readers: one
// EventSubscription per SSE client.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "campaign/store.h"
#include "campaign/event_sink.h"

namespace colltune {

struct StreamEvent {
  std::int64_t id = 0;  // store id; 0 for a transient event
  std::optional<std::int64_t> campaign_id;
  std::string type;
  nlohmann::json payload;
  double time = 0;
  std::uint64_t seq = 0;  // the hub's order of publication
};

// `id:` (when durable), `event:` and `data:` lines and a blank line.
std::string format_sse(const StreamEvent& event);

class EventHub : public EventSink {
 public:
  // `capacity`: events kept in memory for subscribers that fall behind (durable ones are
  // re-read from the store beyond it).
  explicit EventHub(Store& store, std::size_t capacity = 4096);

  // Publishes events stored since the last call (by anyone).
  void sync();
  // Stores a durable event and publishes it. Returns its id.
  std::int64_t record(std::optional<std::int64_t> campaign_id, const std::string& type,
                      const nlohmann::json& payload);
  // EventSink: a campaign's durable event is record()ed (stored, then published with its id,
  // after any event stored before it); a transient one is published now, never stored.
  std::int64_t durable(std::int64_t campaign_id, const std::string& type,
                       const nlohmann::json& payload) override;
  void transient(std::int64_t campaign_id, const std::string& type,
                 const nlohmann::json& payload) override;

  // Called (outside the hub's lock) for every event published, in order.
  void add_listener(std::function<void(const StreamEvent&)> listener);

  // Wakes every waiting subscriber and makes further waits return at once.
  void close();
  bool closed() const;

  struct Position {
    std::uint64_t seq = 0;           // last published sequence number
    std::int64_t last_store_id = 0;  // newest durable event published
  };
  Position position();

  // Events published after `seq`, waiting up to `timeout` for one. `gap` is set when some were
  // already dropped from memory: the caller then re-reads durable events from the store up to
  // `position.last_store_id` and continues from `position.seq`.
  struct Batch {
    std::vector<StreamEvent> events;
    bool gap = false;
    Position position;
  };
  Batch wait_after(std::uint64_t seq, std::chrono::milliseconds timeout);

  Store& store() { return store_; }

 private:
  std::vector<StreamEvent> sync_locked();
  StreamEvent push_locked(std::int64_t id, std::optional<std::int64_t> campaign_id,
                          const std::string& type, nlohmann::json payload, double time);
  void deliver(const std::vector<StreamEvent>& events);

  Store& store_;
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<StreamEvent> ring_;
  std::uint64_t seq_ = 0;
  std::int64_t last_store_id_ = 0;
  bool closed_ = false;
  std::mutex listeners_mutex_;
  std::vector<std::function<void(const StreamEvent&)>> listeners_;
};

// One SSE client's view: durable events after `last_event_id` replayed from the store (when
// given), then live ones, optionally only those of one campaign.
class EventSubscription {
 public:
  EventSubscription(EventHub& hub, std::optional<std::int64_t> last_event_id,
                    std::optional<std::int64_t> campaign_id);

  // The next events, waiting up to `timeout`; empty on timeout or when the hub closed.
  std::vector<StreamEvent> next(std::chrono::milliseconds timeout);

 private:
  bool wanted(const StreamEvent& e) const;

  EventHub& hub_;
  std::optional<std::int64_t> campaign_id_;
  std::uint64_t seq_ = 0;
  std::int64_t replay_from_ = 0;  // replay store events with id in (replay_from_, replay_to_]
  std::int64_t replay_to_ = 0;
  std::int64_t last_delivered_id_ = 0;
};

}  // namespace colltune
