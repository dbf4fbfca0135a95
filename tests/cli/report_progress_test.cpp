// The CLI's end-of-campaign table (intervals, pairs, tie and revert marks) and the progress
// lines of the rules stage (each job names the context it measures). No MPI.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/job_executor.h"
#include "campaign/store.h"
#include "cli/cluster_summary.h"
#include "cli/progress.h"
#include "cli/report_table.h"
#include "runner/sim_backend.h"
#include "tests/support/temp_dir.h"

namespace colltune {
namespace {

using json = nlohmann::json;

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  return text;
}

// What print_cluster_summary prints for `report`.
std::string summary(const json& report) {
  std::FILE* f = std::tmpfile();
  print_cluster_summary(f, report);
  std::string text = read_all(f);
  std::fclose(f);
  return text;
}

json result_row(std::int64_t size, int algorithm, double speedup, json low, json high, int pairs,
                bool tie, json reverted = nullptr) {
  return {{"collective", "reduce"},
          {"comm_size", 4},
          {"msg_size", size},
          {"best", {{"algorithm", algorithm}, {"segsize", 0}, {"fanout", 0}}},
          {"best_name", algorithm ? "linear" : "default"},
          {"default_us", 10.0},
          {"best_us", 10.0 / speedup},
          {"speedup", speedup},
          {"speedup_low", low},
          {"speedup_high", high},
          {"pairs", pairs},
          {"tie", tie},
          {"reverted", reverted},
          {"default_within_noise", tie}};
}

TEST(ReportTable, EverySpeedupCarriesItsIntervalPairsAndTieMark) {
  const json report = {
      {"results", json::array({result_row(1024, 1, 1.25, 1.10, 1.42, 6, false),
                               result_row(2048, 1, 1.05, 0.93, 1.19, 4, true),
                               result_row(4096, 0, 1.0, 0.95, 1.06, 3, true,
                                          {{"reason", "measured slower with the file"}}),
                               result_row(8192, 0, 1.0, nullptr, nullptr, 0, true)})},
      {"cost", {{"jobs", 3}, {"runs", 20}, {"benchmark_seconds", 12.5}}}};
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  print_report_table(f, report);
  const std::string text = read_all(f);
  std::fclose(f);
  EXPECT_NE(text.find("95% interval"), std::string::npos) << text;
  EXPECT_NE(text.find("pairs"), std::string::npos) << text;
  // Proven: no tie mark; the interval and the pairs are printed.
  EXPECT_NE(text.find("1.25x    1.10-1.42"), std::string::npos) << text;
  // An interval that includes 1: a tie, marked.
  EXPECT_NE(text.find("1.05x~   0.93-1.19"), std::string::npos) << text;
  // Reverted: tie and R.
  EXPECT_NE(text.find("1.00x~R  0.95-1.06"), std::string::npos) << text;
  EXPECT_NE(text.find("R = reverted to the default"), std::string::npos) << text;
  // An older report has no cost per purpose: no such line.
  EXPECT_EQ(text.find("node time by purpose"), std::string::npos) << text;
}

TEST(ReportTable, SaysWhereTheNodeTimeWent) {
  const json report = {{"results", json::array({result_row(1024, 1, 1.25, 1.10, 1.42, 6, false)})},
                       {"cost",
                        {{"jobs", 3},
                         {"runs", 20},
                         {"benchmark_seconds", 12.5},
                         {"by_purpose",
                          {{"final", {{"node_seconds", 4.3}}},
                           {"search", {{"node_seconds", 30.0}}},
                           {"verify", {{"node_seconds", 1.0}}},
                           {"remeasure-default", {{"node_seconds", 2.0}}}}}}}};
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  print_report_table(f, report);
  const std::string text = read_all(f);
  std::fclose(f);
  // In the campaign's order (search first), whatever the JSON's.
  EXPECT_NE(text.find("node time by purpose: search 30.0 s, final phase 4.3 s, trace check 1.0 s, "
                      "re-measure without it 2.0 s"),
            std::string::npos)
      << text;
}

TEST(ClusterSummary, SaysWhatWasPredictedOrThatNothingWas) {
  const auto cell = [](int p, int algorithm, double confidence) {
    return json{{"collective", "reduce"},
                {"comm_size", p},
                {"best", {{"algorithm", algorithm}}},
                {"confidence", confidence}};
  };
  // 2, 4 and 8 ranks measured, 3 and 5-7 predicted: 2 of 4 cells tuned.
  const json predicted = {{"cluster", json::array({{{"collective", "reduce"},
                                                    {"measured", {2, 4, 8}},
                                                    {"stop_reason", "ei"},
                                                    {"max_comm_size", 8}}})},
                          {"predicted", json::array({cell(3, 0, 0.5), cell(5, 2, 0.85),
                                                     cell(6, 1, 0.93), cell(7, 0, 0.6)})}};
  EXPECT_EQ(summary(predicted),
            "\nwhole cluster:\n  reduce: measured P=2,4,8 (search stopped by: ei); predicted "
            "P=3,5,6,7: 2 of 4 cells "
            "tuned (confidence 0.85-0.93), the rest default; above P=8: Open MPI's default\n");
  // Every size of the range measured: nothing to predict, said so (not "P=-: 0 of 0").
  json all_measured = predicted;
  all_measured["predicted"] = json::array();
  all_measured["cluster"][0]["measured"] = {2, 3, 4};
  all_measured["cluster"][0]["max_comm_size"] = 4;
  EXPECT_EQ(summary(all_measured),
            "\nwhole cluster:\n  reduce: measured P=2,3,4 (search stopped by: ei); nothing "
            "predicted (no size in the "
            "range was left unmeasured); above P=4: Open MPI's default\n");
  // Not a whole-cluster campaign: nothing at all.
  EXPECT_EQ(summary(json{{"results", json::array()}}), "");
}

TEST(ClusterSummary, CountsTheCellsATotalBudgetCouldNotPayToTest) {
  const auto result = [](const char* collective, int p, bool unpaid) {
    json r = {{"collective", collective}, {"comm_size", p}, {"pairs", unpaid ? 0 : 2}};
    if (unpaid) r["untested_for_money"] = true;
    return r;
  };
  const json report = {
      {"cluster",
       json::array({{{"collective", "reduce"}, {"measured", {2, 8}}, {"max_comm_size", 8}},
                    {{"collective", "bcast"}, {"measured", {2, 8}}, {"max_comm_size", 8}}})},
      {"predicted", json::array()},
      {"results", json::array({result("reduce", 8, true), result("reduce", 8, true),
                               result("reduce", 2, true), result("reduce", 2, false),
                               result("bcast", 8, false), result("bcast", 2, true)})}};
  const std::string text = summary(report);
  // Per collective, under its own line: how many cells and at which sizes.
  EXPECT_NE(text.find("  reduce: measured P=2,8; nothing predicted (no size in the range was left "
                      "unmeasured); above P=8: Open MPI's default\n    3 cells at P=2,8 kept Open "
                      "MPI's default untested: the total node-seconds could not pay to test their "
                      "candidates"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Open MPI's default\n    1 cell at P=2 kept Open MPI's default untested: "
                      "the total node-seconds could not pay to test its candidate ("),
            std::string::npos)
      << text;
  // Without such cells, no such line.
  json paid = report;
  paid["results"] = json::array({result("reduce", 8, false)});
  EXPECT_EQ(summary(paid).find("untested"), std::string::npos);
}

TEST(Progress, RulesStageJobsNameTheirOwnContext) {
  // A campaign of two contexts on the simulated backend; after both are done, jobs of the first
  // context must not be labelled with the last one (the rules stage runs them in that order).
  const testing::TempDir dir("colltune-progress");
  Store store(dir / "store.db");
  SimBackend backend(SimBackendOptions{});
  const CampaignSpec spec = parse_campaign_spec(
      {{"backend", "sim"},
       {"contexts", json::array({{{"collective", "bcast"}, {"comm_size", 4}},
                                 {{"collective", "gather"}, {"comm_size", 4}}})},
       {"sizes", "4:64"}});
  const auto id = CampaignEngine::create_campaign(store, spec);
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressDisplay progress(f);
    StoreEventSink events(
        store, [&](const std::string& type, const json& p) { progress.on_event(type, p); });
    // The last context announced is gather, as after a campaign's search phases.
    progress.on_event("context_started",
                      {{"collective", "gather"}, {"comm_size", 4}, {"space", 1}, {"planned", 1}});
    JobExecutor executor(store, backend, &events);
    CancelFlag cancel;
    for (const auto& ctx : store.contexts(id)) {
      BenchmarkRequest r;
      r.tag = "verify-" + std::to_string(ctx.id);
      r.collective = ctx.collective;
      r.comm_size = ctx.comm_size;
      r.min_size = 4;
      r.max_size = 64;
      r.configs = {TuningConfig{}};
      bool completed = false;
      executor.submit(id, ctx.id, JobPurpose::verify, r, cancel, completed);
      EXPECT_TRUE(completed);
    }
  }
  const std::string text = read_all(f);
  std::fclose(f);
  EXPECT_NE(text.find("[bcast P=4] verify job verify-"), std::string::npos) << text;
  EXPECT_NE(text.find("[gather P=4] verify job verify-"), std::string::npos) << text;
}

// Plain lines (logs, cron): each starts with an ISO-8601 UTC time; the end of a search says
// whether it stopped before its plan, and why.
TEST(Progress, PlainLinesCarryIsoTimesAndSayWhenTheSearchStopsEarly) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    double now = 1795000000;  // 2026-11-18T...Z
    ProgressDisplay progress(f, ProgressMode::plain);
    progress.set_clock([&] { return now; });
    progress.on_event("context_started",
                      {{"collective", "bcast"}, {"comm_size", 4}, {"space", 74}, {"planned", 40}});
    now += 95;
    progress.on_event("search_stopped", {{"collective", "bcast"},
                                         {"comm_size", 4},
                                         {"evaluations", 12},
                                         {"planned", 40},
                                         {"reason", "converged"}});
    progress.on_event("search_stopped", {{"collective", "gather"},
                                         {"comm_size", 4},
                                         {"evaluations", 5},
                                         {"planned", 40},
                                         {"reason", "time_budget"}});
  }
  const std::string text = read_all(f);
  std::fclose(f);
  EXPECT_EQ(text.rfind("2026-11-18T", 0), 0u) << text;
  EXPECT_NE(text.find("Z [bcast P=4] search space 74 configurations, planned 40 evaluations\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[bcast P=4] search stopped early after 12 of 40 planned evaluations "
                      "(the strategy's stopping rule) in 1m35s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[gather P=4] search stopped after 5 evaluations: the campaign's "
                      "benchmark-time budget is spent"),
            std::string::npos)
      << text;
  for (std::size_t at = 0; at < text.size(); at = text.find('\n', at) + 1)
    EXPECT_EQ(text.compare(at + 19, 2, "Z "), 0) << "a line without its time: " << text.substr(at);
}

// A whole-cluster campaign: one search over every size (labelled with all of them), then each
// size's final phase, which plans no search of its own.
TEST(Progress, AWholeClusterCampaignSaysItsSearchThenEachSizesFinalPhase) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressDisplay progress(f, ProgressMode::plain);
    progress.set_clock([] { return 1795000000.0; });
    progress.on_event("context_started", {{"collective", "reduce"},
                                          {"comm_size", 4},
                                          {"comm_sizes", {2, 3, 4}},
                                          {"space", 159},
                                          {"planned", 150}});
    progress.on_event("search_stopped", {{"collective", "reduce"},
                                         {"comm_size", 4},
                                         {"comm_sizes", {2, 3, 4}},
                                         {"evaluations", 84},
                                         {"planned", 0},
                                         {"reason", "done"},
                                         {"stop_reason", "ei"}});
    progress.on_event("context_started", {{"collective", "reduce"},
                                          {"comm_size", 3},
                                          {"space", 53},
                                          {"planned", 23},
                                          {"phase", "final"}});
  }
  const std::string text = read_all(f);
  std::fclose(f);
  EXPECT_NE(text.find("Z [reduce P=2,3,4] whole-cluster search over 3 comm sizes: 159 "
                      "configurations in all, up to 150 evaluations (fewer when its model "
                      "stops it)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Z [reduce P=2,3,4] search done: 84 evaluations in 0s (stopped by: ei)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Z [reduce P=3] final phase: the paired test against Open MPI's default "
                      "(the whole-cluster search is done)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("planned 23"), std::string::npos) << text;
}

// On a terminal: the redrawn line shows the elapsed time and the ETA of the search.
TEST(Progress, TerminalLineShowsElapsedAndEta) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    double now = 1795000000;
    ProgressDisplay progress(f, ProgressMode::terminal);
    progress.set_clock([&] { return now; });
    progress.on_event("context_started",
                      {{"collective", "bcast"}, {"comm_size", 4}, {"space", 74}, {"planned", 10}});
    const json config = TuningConfig{};
    for (int i = 0; i < 4; ++i) {
      now += 30;
      progress.on_event(
          "run", {{"purpose", "search"}, {"repeat", 0}, {"outcome", "ok"}, {"config", config}});
    }
  }
  const std::string text = read_all(f);
  std::fclose(f);
  // 4 of 10 evaluations in 2 minutes: 3 more minutes to go.
  EXPECT_NE(text.find("4/10 evals  4 runs  2m00s ETA 3m00s"), std::string::npos) << text;
  EXPECT_EQ(text.find("2026-"), std::string::npos) << "no timestamps on a terminal";
}

TEST(Progress, DurationsReadAsHoursMinutesSeconds) {
  EXPECT_EQ(format_duration(42), "42s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_duration(-3), "0s");
}

}  // namespace
}  // namespace colltune
