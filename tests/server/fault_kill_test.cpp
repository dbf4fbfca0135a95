// The fault suite, part 2: `colltune serve` killed with SIGKILL at random moments during a
// campaign whose backend also injects faults (failures, hangs, crashes, garbled output, slow
// nodes), restarted each time. Expected: the campaign completes; every measurement is present
// once; no job is created twice; jobs, runs (with their injected outcomes), picks and the rules
// file are those of an uninterrupted run with the same seeds.

#include "tests/server/fault_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

TEST(FaultKill, SigkillAtRandomPointsWithInjectedFaults) {
  const json faults = {{"seed", 4},          {"failure_rate", 0.1}, {"hang_rate", 0.05},
                       {"crash_rate", 0.05}, {"garble_rate", 0.05}, {"slow_node_rate", 0.1}};
  const json spec = fault_campaign_spec(17, "bo", 12);
  const int min_kills = full_fault_suite() ? 15 : 5;
  TempDir dir;

  // The uninterrupted reference.
  const auto start_reference = std::chrono::steady_clock::now();
  const auto reference_id =
      run_campaign_to_end(dir, "reference", sim_daemon_config(dir, "reference", faults, 0.005),
                          spec, std::chrono::seconds(240));
  ASSERT_GT(reference_id, 0);
  const double reference_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_reference).count();

  // The same campaign, killed until it ends: min_kills lives at run counts drawn at random over
  // the reference's (KillMoments), then left alone to finish.
  const std::int64_t reference_runs =
      Store(dir / "reference.db").campaign_progress(reference_id).runs;
  write_json_file(dir / "killed.json", sim_daemon_config(dir, "killed", faults, 0.005));
  std::random_device rd;
  const unsigned rng_seed = rd();
  KillMoments moments(rng_seed, reference_runs, reference_s, min_kills);
  int kills = 0;
  std::int64_t id = 0;
  for (;;) {
    DaemonProcess daemon(COLLTUNE_BINARY, dir / "killed.json", dir / "killed.log");
    const std::string url = daemon.start();
    if (id == 0) {
      id = create_campaign(url, spec);
      ASSERT_GT(id, 0);
    }
    if (!moments.draws_left()) {
      auto client = fault_client(url);
      (void)wait_for_state(client, id, {"done", "failed"}, std::chrono::seconds(240));
      daemon.stop(SIGTERM);
      break;
    }
    if (moments.wait_for_drawn(url, id).ended()) {
      daemon.stop(SIGTERM);
      break;
    }
    const int status = daemon.stop(SIGKILL);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    ++kills;
  }

  const auto reference = read_campaign_outcome(dir / "reference.db", reference_id);
  const auto killed = read_campaign_outcome(dir / "killed.db", id);
  EXPECT_EQ(reference.state, "done") << reference.error;
  EXPECT_EQ(killed.state, "done") << killed.error;
  EXPECT_EQ(killed.duplicate_tags, 0u);
  EXPECT_EQ(killed.duplicate_runs, 0u);
  EXPECT_EQ(killed.jobs, reference.jobs) << "jobs differ (one created twice, or other suggestions)";
  EXPECT_EQ(killed.run_count, reference.run_count);
  EXPECT_EQ(killed.run_count, killed.planned_runs);
  EXPECT_EQ(killed.measurements, reference.measurements);
  EXPECT_EQ(killed.runs, reference.runs) << "runs or their injected outcomes differ";
  EXPECT_EQ(killed.results, reference.results) << "final picks differ";
  EXPECT_EQ(killed.rules, reference.rules);
  EXPECT_FALSE(killed.rules.empty());
  EXPECT_GE(kills, min_kills);
  const bool same = killed.jobs == reference.jobs && killed.runs == reference.runs &&
                    killed.results == reference.results && killed.rules == reference.rules;
  report_fault("kill -9 of the daemon at random points (rng seed " + std::to_string(rng_seed) +
                   "), backend injecting fail/hang/crash/garble/slow",
               std::to_string(kills) + " kills; " + std::to_string(killed.run_count) + " runs (" +
                   outcome_counts_text(killed) + ")",
               "campaign done; every run and measurement once; no duplicate job; same jobs, runs, "
               "picks and rules as the uninterrupted run",
               "state " + killed.state + "; " + std::to_string(killed.jobs.size()) + " jobs, " +
                   std::to_string(killed.measurements) + " measurements (reference " +
                   std::to_string(reference.measurements) + "); " +
                   std::to_string(killed.duplicate_runs + killed.duplicate_tags) + " duplicates; " +
                   (same ? "identical to the reference" : "DIFFERENT from the reference"));
}

}  // namespace
}  // namespace colltune::testing
