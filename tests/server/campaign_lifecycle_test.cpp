// One campaign lifecycle (server/campaign_lifecycle.h) on the simulated backend (no MPI): the
// final state is set by run_campaign, every event goes through the sink (durable ones stored
// once, transient ones never), an interruption ends as the caller asks. And the context result
// type keeps what the store holds.
#include "campaign/campaign_lifecycle.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "campaign/context_result.h"
#include "runner/backend_factory.h"
#include "tests/server/daemon_test_support.h"
#include "tests/support/recording_event_sink.h"

namespace colltune {
namespace {

using json = nlohmann::json;
using testing::RecordingEventSink;
using testing::TempDir;

CampaignSpec small_spec(const std::string& strategy = "random") {
  return parse_campaign_spec(
      {{"backend", "sim"},
       {"contexts", json::array({{{"collective", "bcast"}, {"comm_size", 4}}})},
       {"sizes", "4:64"},
       {"strategy", strategy},
       {"budget", 4},
       {"seed", 2}});
}

CampaignRun run_options(const TempDir& dir, EventSink& events, const CancelFlag& cancel) {
  CampaignRun run;
  run.rules_path = dir.path() / "rules.conf";
  run.work_dir = dir.path();
  run.backend_name = "sim";
  run.backend_settings = {{"profile", "pise"}, {"noise", "none"}};
  run.events = &events;
  run.cancel = &cancel;
  return run;
}

TEST(CampaignLifecycle, RunsToDoneAndSaysSoOnce) {
  TempDir dir;
  Store store(dir / "db");
  auto backend = make_backend("sim", {{"profile", "pise"}, {"noise", "none"}});
  const auto id = create_admitted_campaign(store, *backend, small_spec(), {{"backend", "sim"}});
  EXPECT_EQ(store.campaign(id)->state, CampaignState::queued);
  ASSERT_TRUE(store.campaign_launch(id));
  RecordingEventSink events(store);
  CancelFlag cancel;
  const CampaignRunResult r = run_campaign(store, *backend, id, run_options(dir, events, cancel));
  ASSERT_EQ(r.end, CampaignRunResult::End::done) << r.error;
  EXPECT_EQ(r.state, CampaignState::done);
  EXPECT_EQ(store.campaign(id)->state, CampaignState::done);
  ASSERT_TRUE(r.rules);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rules.conf"));

  // The end: one rules_version, then one final campaign_state, the last event.
  ASSERT_FALSE(events.events.empty());
  EXPECT_EQ(events.events.back().type, "campaign_state");
  EXPECT_EQ(events.events.back().payload.at("state"), "done");
  EXPECT_EQ(events.of_type("rules_version").size(), 1u);
  std::size_t done_states = 0;
  for (const auto& e : events.of_type("campaign_state"))
    if (e.payload.at("state") == "done") ++done_states;
  EXPECT_EQ(done_states, 1u);
  // Durable events are stored once each, under the id the sink got; runs are transient.
  const auto stored = store.events_after(0, 10000);
  std::size_t durable = 0;
  for (const auto& e : events.events) {
    if (!e.durable) {
      EXPECT_EQ(e.type, "run");
      continue;
    }
    ++durable;
    EXPECT_EQ(e.payload.at("campaign_id"), id) << e.type;
  }
  EXPECT_EQ(stored.size(), durable);
  EXPECT_GE(events.of_type("run").size(), 4u);  // at least the search runs
  for (const auto& s : stored) EXPECT_NE(s.type, "run");
}

TEST(CampaignLifecycle, AnInterruptionEndsAsTheCallerAsks) {
  for (const InterruptAction action :
       {InterruptAction::pause, InterruptAction::cancel, InterruptAction::keep_running}) {
    TempDir dir;
    Store store(dir / "db");
    auto backend = make_backend("sim", {{"profile", "pise"}, {"noise", "none"}});
    const auto id = create_admitted_campaign(store, *backend, small_spec());
    RecordingEventSink events(store);
    CancelFlag cancel;
    cancel.cancel();
    CampaignRun run = run_options(dir, events, cancel);
    int asked = 0;
    run.on_interrupt = [&] {
      ++asked;
      return action;
    };
    run.pause_reason = "interrupted by signal";
    const CampaignRunResult r = run_campaign(store, *backend, id, run);
    EXPECT_EQ(r.end, CampaignRunResult::End::interrupted);
    EXPECT_FALSE(r.in_rules_stage);
    EXPECT_EQ(asked, 1);
    const auto campaign = store.campaign(id);
    const std::string expected = action == InterruptAction::pause    ? "paused"
                                 : action == InterruptAction::cancel ? "cancelled"
                                                                     : "running";
    EXPECT_EQ(to_string(r.state), expected);
    EXPECT_EQ(to_string(campaign->state), expected);
    if (action == InterruptAction::pause) {
      EXPECT_EQ(campaign->error, "interrupted by signal");
    }
    if (action != InterruptAction::keep_running) {
      EXPECT_EQ(events.events.back().type, "campaign_state");
      EXPECT_EQ(events.events.back().payload.at("state"), expected);
    }
  }
}

TEST(CampaignLifecycle, AnUnknownStrategyIsRefusedBeforeAnythingIsStored) {
  TempDir dir;
  Store store(dir / "db");
  auto backend = make_backend("sim", {{"profile", "pise"}});
  try {
    create_admitted_campaign(store, *backend, small_spec("annealing"));
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown strategy 'annealing'"), std::string::npos);
  }
  EXPECT_TRUE(store.campaigns(std::nullopt, 10, 0).empty());
}

// The stored strings are the database's format: they must never change.
TEST(CampaignStates, StoredStringsAreStableAndRoundTrip) {
  EXPECT_STREQ(to_string(CampaignState::cancelled), "cancelled");
  EXPECT_STREQ(to_string(ContextState::finalizing), "finalizing");
  EXPECT_STREQ(to_string(JobState::submitting), "submitting");
  EXPECT_STREQ(to_string(JobPurpose::remeasure_tuned), "remeasure-tuned");
  EXPECT_STREQ(to_string(JobPurpose::remeasure_default), "remeasure-default");
  for (const char* s : {"queued", "running", "paused", "done", "failed", "cancelled"})
    EXPECT_STREQ(to_string(*parse_campaign_state(s)), s);
  for (const char* s : {"pending", "searching", "finalizing", "done", "failed"})
    EXPECT_STREQ(to_string(*parse_context_state(s)), s);
  for (const char* s : {"submitting", "running", "done", "cancelled"})
    EXPECT_STREQ(to_string(*parse_job_state(s)), s);
  for (const char* s : {"search", "final", "verify", "remeasure-tuned", "remeasure-default"})
    EXPECT_STREQ(to_string(*parse_job_purpose(s)), s);
  EXPECT_FALSE(parse_campaign_state("Done"));
  EXPECT_FALSE(parse_job_purpose("remeasure_tuned"));
  // A new store writes them as such (queued campaign, pending context, submitting job).
  testing::TempDir dir;
  Store store(dir / "db");
  auto backend = make_backend("sim", {{"profile", "pise"}});
  const auto id = create_admitted_campaign(store, *backend, small_spec());
  EXPECT_EQ(store.campaign(id)->state, CampaignState::queued);
  EXPECT_EQ(store.contexts(id).at(0).state, ContextState::pending);
  sql::Database raw(dir / "db");
  auto campaign_state = raw.prepare("SELECT state FROM campaigns WHERE id = ?");
  campaign_state.bind(1, id);
  ASSERT_TRUE(campaign_state.step());
  EXPECT_EQ(campaign_state.text(0), "queued");
  auto context_state = raw.prepare("SELECT state FROM contexts WHERE campaign_id = ?");
  context_state.bind(1, id);
  ASSERT_TRUE(context_state.step());
  EXPECT_EQ(context_state.text(0), "pending");
}

TEST(ContextResult, KeepsEveryStoredFieldThroughTheType) {
  const json median_pick = {{"msg_size", 4},
                            {"method", "median"},
                            {"best", TuningConfig{2, 0, 0}},
                            {"best_us", 1.5},
                            {"default_us", nullptr},
                            {"noise", 0.02},
                            {"default_within_noise", false},
                            {"samples", 3}};
  json paired_pick = {{"msg_size", 8},
                      {"method", "paired"},
                      {"best", TuningConfig{}},
                      {"best_us", 2.0},
                      {"default_us", 2.0},
                      {"noise", 0.0},
                      {"default_within_noise", true},
                      {"samples", 6},
                      {"candidate", nullptr},
                      {"ratio", 1.01},
                      {"ratio_low", 0.9},
                      {"ratio_high", 1.1},
                      {"confidence", 0.95},
                      {"pairs", 6},
                      {"verdict", "tie"}};
  paired_pick["reverted"] = {{"msg_size", 8}, {"reason", "slower"}};
  const json old_pick = {{"msg_size", 16}, {"best", TuningConfig{3, 0, 0}},
                         {"best_us", 1.0}, {"default_us", 2.0},
                         {"noise", 0.01},  {"default_within_noise", false},
                         {"samples", 3}};  // before the paired method: no "method"
  const json stored = {{"picks", json::array({median_pick, paired_pick, old_pick})},
                       {"evaluations", 12},
                       {"space", 40},
                       {"strategy", "bo"},
                       {"failed_sizes", json::array({{{"msg_size", 32}, {"reason", "x"}}})},
                       {"final_passes", json::array({5, 7})}};
  const auto result = context_result_of(stored);
  ASSERT_TRUE(result);
  EXPECT_EQ(json(*result), stored);
  EXPECT_EQ(result->final_passes, (std::vector<int>{5, 7}));
  ASSERT_EQ(result->picks.size(), 3u);
  EXPECT_EQ(result->picks[1].extra.at("verdict"), "tie");
  EXPECT_EQ(result->picks[2].method_or_median(), "median");
  ASSERT_NE(result->pick_at(16), nullptr);
  EXPECT_EQ(result->pick_at(16)->best, (TuningConfig{3, 0, 0}));
  EXPECT_EQ(result->pick_at(64), nullptr);
  // Without failed sizes (or passes: no budget for the whole campaign) the field is absent, as
  // the engine always stored it.
  json no_failures = stored;
  no_failures.erase("failed_sizes");
  no_failures.erase("final_passes");
  EXPECT_EQ(json(no_failures.get<ContextResult>()), no_failures);
  EXPECT_FALSE(context_result_of(nullptr));
  EXPECT_FALSE(context_result_of(json::object()));
}

}  // namespace
}  // namespace colltune
