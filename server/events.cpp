#include "server/events.h"

namespace colltune {

std::string format_sse(const StreamEvent& event) {
  nlohmann::json data = {{"type", event.type}, {"time", event.time}, {"payload", event.payload}};
  if (event.campaign_id) data["campaign_id"] = *event.campaign_id;
  if (event.id > 0) data["id"] = event.id;
  std::string out;
  if (event.id > 0) out += "id: " + std::to_string(event.id) + "\n";
  // Event types are our own identifiers (no newlines); the data is one line of JSON.
  out += "event: " + event.type + "\n";
  out += "data: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
  return out;
}

EventHub::EventHub(Store& store, std::size_t capacity)
    : store_(store), capacity_(capacity), last_store_id_(store.last_event_id()) {}

StreamEvent EventHub::push_locked(std::int64_t id, std::optional<std::int64_t> campaign_id,
                                  const std::string& type, nlohmann::json payload, double time) {
  StreamEvent e;
  e.id = id;
  e.campaign_id = campaign_id;
  e.type = type;
  e.payload = std::move(payload);
  e.time = time;
  e.seq = ++seq_;
  ring_.push_back(e);
  while (ring_.size() > capacity_) ring_.pop_front();
  return e;
}

std::vector<StreamEvent> EventHub::sync_locked() {
  std::vector<StreamEvent> published;
  for (;;) {
    auto records = store_.events_after(last_store_id_, 500);
    if (records.empty()) break;
    for (auto& r : records) {
      last_store_id_ = r.id;
      published.push_back(push_locked(r.id, r.campaign_id, r.type, std::move(r.payload), r.time));
    }
  }
  if (!published.empty()) changed_.notify_all();
  return published;
}

void EventHub::deliver(const std::vector<StreamEvent>& events) {
  if (events.empty()) return;
  std::lock_guard lock(listeners_mutex_);
  for (const auto& e : events)
    for (const auto& listener : listeners_) listener(e);
}

void EventHub::sync() {
  std::vector<StreamEvent> published;
  {
    std::lock_guard lock(mutex_);
    published = sync_locked();
  }
  deliver(published);
}

std::int64_t EventHub::record(std::optional<std::int64_t> campaign_id, const std::string& type,
                              const nlohmann::json& payload) {
  std::vector<StreamEvent> published;
  std::int64_t id = 0;
  {
    std::lock_guard lock(mutex_);
    id = store_.add_event(campaign_id, type, payload);
    published = sync_locked();
  }
  deliver(published);
  return id;
}

std::int64_t EventHub::durable(std::int64_t campaign_id, const std::string& type,
                               const nlohmann::json& payload) {
  return record(campaign_id, type, payload);
}

void EventHub::transient(std::int64_t campaign_id, const std::string& type,
                         const nlohmann::json& payload) {
  std::vector<StreamEvent> published;
  {
    std::lock_guard lock(mutex_);
    published.push_back(push_locked(0, campaign_id, type, payload, unix_time_now()));
    changed_.notify_all();
  }
  deliver(published);
}

void EventHub::add_listener(std::function<void(const StreamEvent&)> listener) {
  std::lock_guard lock(listeners_mutex_);
  listeners_.push_back(std::move(listener));
}

void EventHub::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

bool EventHub::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

EventHub::Position EventHub::position() {
  std::lock_guard lock(mutex_);
  return {seq_, last_store_id_};
}

EventHub::Batch EventHub::wait_after(std::uint64_t seq, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return closed_ || seq_ > seq; });
  Batch batch;
  batch.position = {seq_, last_store_id_};
  if (closed_ || seq_ <= seq) return batch;
  if (ring_.empty() || ring_.front().seq > seq + 1) {
    batch.gap = true;
    return batch;
  }
  for (auto it = ring_.rbegin(); it != ring_.rend() && it->seq > seq; ++it)
    batch.events.push_back(*it);
  std::reverse(batch.events.begin(), batch.events.end());
  return batch;
}

EventSubscription::EventSubscription(EventHub& hub, std::optional<std::int64_t> last_event_id,
                                     std::optional<std::int64_t> campaign_id)
    : hub_(hub), campaign_id_(campaign_id) {
  hub_.sync();
  const auto position = hub_.position();
  seq_ = position.seq;
  last_delivered_id_ = position.last_store_id;
  if (last_event_id && *last_event_id < position.last_store_id) {
    replay_from_ = *last_event_id;
    replay_to_ = position.last_store_id;
  }
}

bool EventSubscription::wanted(const StreamEvent& e) const {
  return !campaign_id_ || (e.campaign_id && *e.campaign_id == *campaign_id_);
}

std::vector<StreamEvent> EventSubscription::next(std::chrono::milliseconds timeout) {
  std::vector<StreamEvent> out;
  while (replay_from_ < replay_to_) {
    auto records = hub_.store().events_after(replay_from_, 200);
    if (records.empty()) {
      replay_from_ = replay_to_;
      break;
    }
    for (auto& r : records) {
      if (r.id > replay_to_) {
        replay_from_ = replay_to_;
        break;
      }
      replay_from_ = r.id;
      StreamEvent e{r.id, r.campaign_id, r.type, std::move(r.payload), r.time, 0};
      if (wanted(e)) out.push_back(std::move(e));
    }
    if (!out.empty()) return out;
  }
  if (hub_.closed()) return out;
  auto batch = hub_.wait_after(seq_, timeout);
  if (batch.gap) {
    // Fell behind the in-memory window: replay durable events from the store.
    replay_from_ = last_delivered_id_;
    replay_to_ = batch.position.last_store_id;
    seq_ = batch.position.seq;
    return next(std::chrono::milliseconds(0));
  }
  for (auto& e : batch.events) {
    seq_ = e.seq;
    if (e.id > 0) last_delivered_id_ = e.id;
    if (wanted(e)) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace colltune
