// An EventSink for tests: keeps every event it is given, in order, with its kind; durable ones
// are also stored (as every durable event must be) so that what the store holds can be checked.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "campaign/event_sink.h"
#include "campaign/store.h"

namespace colltune::testing {

class RecordingEventSink : public EventSink {
 public:
  struct Event {
    bool durable = false;
    std::int64_t id = 0;  // the store id of a durable event
    std::int64_t campaign_id = 0;
    std::string type;
    nlohmann::json payload;
  };

  explicit RecordingEventSink(Store& store) : store_(store) {}

  std::int64_t durable(std::int64_t campaign_id, const std::string& type,
                       const nlohmann::json& payload) override {
    const std::int64_t id = store_.add_event(campaign_id, type, payload);
    events.push_back({true, id, campaign_id, type, payload});
    return id;
  }
  void transient(std::int64_t campaign_id, const std::string& type,
                 const nlohmann::json& payload) override {
    events.push_back({false, 0, campaign_id, type, payload});
  }

  // The events of one type, in order.
  std::vector<Event> of_type(const std::string& type) const {
    std::vector<Event> out;
    for (const auto& e : events)
      if (e.type == type) out.push_back(e);
    return out;
  }

  std::vector<Event> events;

 private:
  Store& store_;
};

}  // namespace colltune::testing
