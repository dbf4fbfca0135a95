// The fault suite, part 1: campaigns on the real `colltune serve` binary with the simulated
// cluster wrapped in fault injection (runner/fault_injection.h): jobs that fail at launch, runs
// that hang past the time limit, crashes mid-output, garbled output, slow nodes. Each campaign
// must continue and end "done" (every planned run recorded exactly once, with the injected
// outcome, and a deployable rules file), or, when nothing can succeed, stop "failed" with a
// clear reason and no rules.
#include "tests/server/fault_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

struct RateCase {
  std::string what;            // for the table
  json faults;                 // injection options
  std::string outcome;         // the run outcome the fault must produce
  std::string error_fragment;  // part of that run's error
};

// Runs the campaign with `faults` for each seed; checks and reports.
void run_rate_case(const RateCase& c) {
  const std::vector<std::uint64_t> seeds = full_fault_suite()
                                               ? std::vector<std::uint64_t>{1, 2, 3, 4, 5}
                                               : std::vector<std::uint64_t>{1};
  int campaigns_done = 0, injected = 0, runs = 0;
  std::string failures;
  for (const auto seed : seeds) {
    TempDir dir;
    json faults = c.faults;
    faults["seed"] = seed;
    const auto id = run_campaign_to_end(dir, "c", sim_daemon_config(dir, "c", faults),
                                        fault_campaign_spec(10 + seed));
    ASSERT_GT(id, 0);
    const auto o = read_campaign_outcome(dir / "c.db", id);
    EXPECT_EQ(o.state, "done") << o.error;
    EXPECT_EQ(o.duplicate_tags, 0u);
    EXPECT_EQ(o.duplicate_runs, 0u);
    EXPECT_EQ(o.run_count, o.planned_runs) << "a planned run is missing (lost) or extra";
    EXPECT_TRUE(o.rules_deployable) << "no deployable rules file";
    for (const auto& [tag, purpose, state, request] : o.jobs) EXPECT_EQ(state, "done") << tag;
    int hits = 0;
    for (const auto& [tag, by_run] : o.runs)
      for (const auto& [key, run] : by_run)
        if (std::get<0>(run) == c.outcome &&
            std::get<1>(run).find(c.error_fragment) != std::string::npos)
          ++hits;
    EXPECT_GT(hits, 0) << "no run shows the injected fault (" << outcome_counts_text(o) << ")";
    if (o.state == "done") ++campaigns_done;
    injected += hits;
    runs += static_cast<int>(o.run_count);
    if (o.state != "done")
      failures += " seed " + std::to_string(seed) + ": " + o.state + " " + o.error + ";";
  }
  report_fault(c.what,
               std::to_string(injected) + " of " + std::to_string(runs) + " runs, " +
                   std::to_string(seeds.size()) + " campaign(s)",
               "campaign continues to done; every planned run stored once with outcome " +
                   c.outcome + "; deployable rules",
               std::to_string(campaigns_done) + "/" + std::to_string(seeds.size()) +
                   " campaigns done, no run lost or duplicated" + failures);
}

TEST(FaultInjection, JobFailuresAtARate) {
  run_rate_case(
      {"job fails at launch (rate 0.25)", {{"failure_rate", 0.25}}, "failed", "exit status 1"});
}

TEST(FaultInjection, HangsPastTheTimeLimit) {
  run_rate_case({"run hangs past run_timeout_s, killed (rate 0.2)",
                 {{"hang_rate", 0.2}},
                 "timeout",
                 "run timeout"});
}

TEST(FaultInjection, CrashMidOutput) {
  run_rate_case({"rank SIGSEGV mid-line, truncated output (rate 0.2)",
                 {{"crash_rate", 0.2}},
                 "failed",
                 "exit status 139"});
}

TEST(FaultInjection, GarbledOutput) {
  run_rate_case({"garbled data line (rate 0.2)", {{"garble_rate", 0.2}}, "parse_error", ""});
}

TEST(FaultInjection, CrashAbortsTheRestOfTheBatch) {
  run_rate_case({"crash kills the rest of its batch job (rate 0.1)",
                 {{"crash_rate", 0.1}, {"crash_aborts_batch", true}},
                 "failed",
                 "batch aborted"});
}

TEST(FaultInjection, SlowNodes) {
  // Slow runs are still ok runs (3x latency): nothing fails, the campaign just ends.
  const std::vector<std::uint64_t> seeds =
      full_fault_suite() ? std::vector<std::uint64_t>{1, 2, 3} : std::vector<std::uint64_t>{1};
  int done = 0, slow = 0, runs = 0;
  for (const auto seed : seeds) {
    TempDir dir;
    const auto id = run_campaign_to_end(
        dir, "c", sim_daemon_config(dir, "c", {{"slow_node_rate", 0.3}, {"seed", seed}}),
        fault_campaign_spec(20 + seed));
    ASSERT_GT(id, 0);
    const auto o = read_campaign_outcome(dir / "c.db", id);
    EXPECT_EQ(o.state, "done") << o.error;
    EXPECT_EQ(o.run_count, o.planned_runs);
    EXPECT_EQ(o.outcomes.size(), 1u) << outcome_counts_text(o);
    EXPECT_TRUE(o.rules_deployable);
    Store store(dir / "c.db");
    for (const auto& job : store.jobs(id))
      for (const auto& run : store.runs_of_job(job.id))
        if (run.provenance.stderr_excerpt.find("slow node") != std::string::npos) ++slow;
    done += o.state == "done";
    runs += static_cast<int>(o.run_count);
  }
  EXPECT_GT(slow, 0);
  report_fault(
      "slow node, latency x3 (rate 0.3)",
      std::to_string(slow) + " of " + std::to_string(runs) + " runs, " +
          std::to_string(seeds.size()) + " campaign(s)",
      "runs stay ok; campaign done; deployable rules",
      std::to_string(done) + "/" + std::to_string(seeds.size()) + " campaigns done, all runs ok");
}

TEST(FaultInjection, EveryRunFailsStopsWithAClearReason) {
  TempDir dir;
  const auto id = run_campaign_to_end(
      dir, "c", sim_daemon_config(dir, "c", {{"failure_rate", 1.0}}), fault_campaign_spec());
  ASSERT_GT(id, 0);
  const auto o = read_campaign_outcome(dir / "c.db", id);
  EXPECT_EQ(o.state, "failed");
  EXPECT_NE(o.error.find("no successful measurement"), std::string::npos) << o.error;
  EXPECT_EQ(o.rules_versions, 0u) << "a campaign without measurements produced rules";
  EXPECT_EQ(o.duplicate_runs, 0u);
  EXPECT_EQ(o.outcomes.count("ok"), 0u);
  report_fault(
      "every run fails at launch (rate 1.0)", std::to_string(o.run_count) + " runs, 1 campaign",
      "campaign stops failed with a clear reason; no rules version",
      o.state + ": \"" + o.error + "\"; " + std::to_string(o.rules_versions) + " rules versions");
}

TEST(FaultInjection, SameSeedSameOutcome) {
  // The injector is deterministic: two daemons, same faults and campaign seed, same store.
  const json faults = {{"seed", 9},          {"failure_rate", 0.1}, {"hang_rate", 0.1},
                       {"crash_rate", 0.05}, {"garble_rate", 0.05}, {"slow_node_rate", 0.1}};
  TempDir dir;
  const auto a = run_campaign_to_end(dir, "a", sim_daemon_config(dir, "a", faults),
                                     fault_campaign_spec(5, "bo", 12));
  const auto b = run_campaign_to_end(dir, "b", sim_daemon_config(dir, "b", faults),
                                     fault_campaign_spec(5, "bo", 12));
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  const auto oa = read_campaign_outcome(dir / "a.db", a);
  const auto ob = read_campaign_outcome(dir / "b.db", b);
  EXPECT_EQ(oa.state, "done") << oa.error;
  EXPECT_EQ(oa.jobs, ob.jobs);
  EXPECT_EQ(oa.runs, ob.runs);
  EXPECT_EQ(oa.results, ob.results);
  EXPECT_EQ(oa.rules, ob.rules);
  report_fault("mixed faults (fail/hang 0.1, crash/garble 0.05, slow 0.1), bo strategy, twice",
               std::to_string(oa.run_count) + " runs (" + outcome_counts_text(oa) + ")",
               "both campaigns identical (jobs, runs, picks, rules)",
               std::string(oa.runs == ob.runs && oa.rules == ob.rules ? "identical" : "DIFFERENT") +
                   ", state " + oa.state);
}

}  // namespace
}  // namespace colltune::testing
