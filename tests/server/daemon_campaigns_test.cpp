// The daemon's campaign scheduler (server/daemon_campaigns.h): pause and cancel requests racing
// with a worker that is ending. The interleavings are forced, not hoped for: a listener of the
// event hub (called on the worker's thread, as every event is) holds the worker at a chosen
// event while the test sends a request, then lets it go.
#include "server/daemon_campaigns.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>

#include "campaign/campaign_states.h"
#include "campaign/store.h"
#include "server/config.h"
#include "server/events.h"
#include "server/metrics.h"
#include "tests/server/daemon_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

// Holds the worker's thread at the first event `matches` accepts until release().
class Gate {
 public:
  void arm(std::function<bool(const StreamEvent&)> matches) {
    std::lock_guard lock(mutex_);
    matches_ = std::move(matches);
  }
  // The hub's listener.
  void on_event(const StreamEvent& e) {
    std::unique_lock lock(mutex_);
    if (e.type == "job_started") {
      running_ = true;
      changed_.notify_all();
    }
    if (!matches_ || !matches_(e)) return;
    matches_ = nullptr;
    held_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_; });
  }
  void wait_running() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return running_; });
  }
  void wait_held() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return held_; });
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<bool(const StreamEvent&)> matches_;
  bool running_ = false, held_ = false, released_ = false;
};

bool is_state(const StreamEvent& e, const char* state) {
  return e.type == "campaign_state" && e.payload.value("state", "") == state;
}

struct Scheduler {
  explicit Scheduler(Gate& gate, double pace)
      : store(dir / "colltune.db"),
        hub(store),
        config(parse_daemon_config({{"database", dir / "colltune.db"},
                                    {"backends", {{"sim", {{"noise", "none"}, {"pace", pace}}}}}})),
        manager(store, hub, metrics, config) {
    hub.add_listener([&gate](const StreamEvent& e) { gate.on_event(e); });
  }
  std::string last_state_event(std::int64_t id) {
    std::string last;
    for (const auto& e : store.events_after(0, 100000))
      if (e.campaign_id == id && e.type == "campaign_state") last = e.payload.value("state", "");
    return last;
  }
  TempDir dir;
  Store store;
  EventHub hub;
  Metrics metrics;
  DaemonConfig config;
  CampaignManager manager;
};

// A cancel that comes after the worker settled a pause, while the worker has not ended yet: the
// campaign ends cancelled (before: the worker had read "pause" and wrote "paused" after the
// cancel was accepted, and the cancel was lost).
TEST(CampaignManager, ACancelAfterThePauseWasSettledStillCancels) {
  Gate gate;
  Scheduler s(gate, 0.1);  // paced: still running when paused
  s.manager.start();
  const auto id = s.manager.create(sim_campaign_spec(40)).id;
  gate.wait_running();
  gate.arm([](const StreamEvent& e) { return is_state(e, "paused"); });
  s.manager.pause(id, std::chrono::milliseconds(0));
  gate.wait_held();  // the worker decided "pause" and wrote it; it has not ended
  EXPECT_EQ(s.store.campaign(id)->state, CampaignState::paused);
  const auto answer = s.manager.cancel(id, std::chrono::milliseconds(0));
  EXPECT_NE(answer.state, CampaignState::cancelled);  // not yet: the worker still runs
  gate.release();
  s.manager.stop();  // joins the worker
  EXPECT_EQ(s.store.campaign(id)->state, CampaignState::cancelled);
  EXPECT_EQ(s.last_state_event(id), "cancelled");
  for (const auto& job : s.store.jobs(id))
    EXPECT_TRUE(job.state == JobState::done || job.state == JobState::cancelled)
        << job.tag << " " << to_string(job.state);
}

// A request that comes as the worker finishes the campaign does not undo a final state: a
// cancel after "done" was written leaves it done (and says nothing more).
TEST(CampaignManager, ACancelAsTheCampaignIsDoneLeavesItDone) {
  Gate gate;
  Scheduler s(gate, 0);
  gate.arm([](const StreamEvent& e) { return is_state(e, "done"); });
  s.manager.start();
  const auto id = s.manager.create(sim_campaign_spec(4)).id;
  gate.wait_held();
  s.manager.cancel(id, std::chrono::milliseconds(0));
  gate.release();
  s.manager.stop();
  EXPECT_EQ(s.store.campaign(id)->state, CampaignState::done);
  EXPECT_EQ(s.last_state_event(id), "done");
}

}  // namespace
}  // namespace colltune::testing
