// Crash safety: the `colltune serve` binary is killed with SIGKILL at random moments during a
// campaign (at least 10 times) and started again each time. The campaign must end exactly as an
// uninterrupted run with the same seed on the same deterministic backend (the simulated
// cluster without noise): the same jobs (none created twice), every run and measurement stored
// once, the same final choices and the same rules file.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "campaign/store.h"
#include "tests/server/daemon_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

json kill_test_spec() {
  return {{"name", "kill -9"},
          {"backend", "sim"},
          {"contexts",
           {{{"collective", "bcast"}, {"comm_size", 16}},
            {{"collective", "allreduce"}, {"comm_size", 16}},
            {{"collective", "reduce"}, {"comm_size", 16}},
            {{"collective", "gather"}, {"comm_size", 16}}}},
          {"sizes", "4:65536"},
          {"strategy", "bo"},
          {"budget", 16},
          {"seed", 7},
          {"batch_size", 4},
          {"final_repeats", 2}};
}

void write_config(const TempDir& dir, const std::string& name) {
  write_json_file(dir / (name + ".json"),
                  {{"listen", "127.0.0.1:0"},
                   {"database", dir / (name + ".db")},
                   // A small pace makes each run take a few milliseconds of wall time, so that
                   // kills land inside jobs as well as between them.
                   {"backends", {{"sim", {{"noise", "none"}, {"pace", 0.005}}}}},
                   {"tokens", tokens_json()}});
}

httplib::Client admin_client(const std::string& url) {
  httplib::Client c(url);
  c.set_default_headers({{"Authorization", std::string("Bearer ") + kAdminToken}});
  c.set_connection_timeout(2);
  c.set_read_timeout(5);
  return c;
}

// Everything that must be equal between the interrupted and the uninterrupted campaign.
struct Outcome {
  std::string state;
  std::vector<std::tuple<std::string, std::string, std::string, json>>
      jobs;  // tag, purpose, state, request
  std::map<std::string,
           std::map<std::pair<std::size_t, int>, std::vector<std::pair<std::int64_t, double>>>>
      runs;
  std::size_t run_count = 0;
  std::int64_t measurements = 0;
  std::vector<json> results;  // per context: picks
  std::string rules;
  std::size_t rules_versions = 0;
  int resumed_jobs = 0;  // jobs started again with some runs already recorded (a mid-job kill)
};

Outcome read_outcome(const std::string& db, std::int64_t id) {
  Store store(db);
  Outcome o;
  o.state = to_string(store.campaign(id)->state);
  for (const auto& job : store.jobs(id)) {
    json request = job.request;
    o.jobs.emplace_back(job.tag, to_string(job.purpose), to_string(job.state), request);
    for (const auto& run : store.runs_of_job(job.id)) {
      ++o.run_count;
      auto& rows = o.runs[job.tag][{run.config_index, run.repeat}];
      EXPECT_TRUE(rows.empty()) << job.tag << " run " << run.config_index << "/" << run.repeat
                                << " stored twice";
      for (const auto& row : run.rows) rows.emplace_back(row.size, row.avg_us);
    }
  }
  o.measurements = store.count_measurements(id);
  for (const auto& ctx : store.contexts(id)) o.results.push_back(ctx.result);
  for (const auto& e : store.events_after(0, 1000000))
    if (e.type == "job_started" && e.payload.value("already_recorded", 0) > 0) ++o.resumed_jobs;
  const auto versions = store.rules_versions(id);
  o.rules_versions = versions.size();
  if (!versions.empty()) o.rules = versions.front().content;
  return o;
}

// Runs `spec` once uninterrupted, then killed with SIGKILL at random moments until it is done:
// the same jobs, runs, measurements, final choices and rules file.
void check_survives_repeated_sigkill(const json& spec) {
  TempDir dir;
  write_config(dir, "reference");
  write_config(dir, "killed");

  // The uninterrupted reference.
  double reference_seconds = 0;
  std::int64_t reference_runs = 0;
  std::int64_t id = 0;
  {
    DaemonProcess daemon(COLLTUNE_BINARY, dir / "reference.json", dir / "reference.log");
    const std::string url = daemon.start();
    auto client = admin_client(url);
    const auto start = std::chrono::steady_clock::now();
    auto res = client.Post("/api/v1/campaigns", spec.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
    id = json::parse(res->body).at("id").get<std::int64_t>();
    auto c = wait_for_state(client, id, {"done", "failed"}, std::chrono::seconds(240));
    ASSERT_EQ(c.at("state"), "done") << c.dump() << daemon.log();
    reference_runs = c.at("progress").at("runs").get<std::int64_t>();
    reference_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    daemon.stop(SIGTERM);
  }

  // The same campaign, killed at random moments until it is done: 20 lives at run counts
  // drawn at random (KillMoments), the lives after them in a window that doubles each life.
  std::random_device rd;
  const unsigned seed = rd();
  KillMoments moments(seed, reference_runs, reference_seconds, 20);
  int kills = 0;
  int lives = 0;
  std::int64_t killed_id = 0;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    DaemonProcess daemon(COLLTUNE_BINARY, dir / "killed.json", dir / "killed.log");
    const std::string url = daemon.start();
    ++lives;
    if (killed_id == 0) {
      auto client = admin_client(url);
      auto res = client.Post("/api/v1/campaigns", spec.dump(), "application/json");
      ASSERT_TRUE(res);
      ASSERT_EQ(res->status, 201) << res->body;
      killed_id = json::parse(res->body).at("id").get<std::int64_t>();
    }
    LiveProgress now;
    if (moments.draws_left()) {
      now = moments.wait_for_drawn(url, killed_id);
    } else {
      now = live_progress(url, killed_id);
      if (!now.ended()) moments.wait_in_growing_window();
    }
    if (now.ended()) {
      daemon.stop(SIGTERM);
      break;
    }
    const int status = daemon.stop(SIGKILL);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    ++kills;
    ASSERT_LT(kills, 400) << "the campaign does not get anywhere between kills";
  }
  const double killed_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "[ figures  ] reference %.1f s, %lld runs; killed run: %d SIGKILLs, %d daemon starts, %.1f s "
      "(rng seed %u)\n",
      reference_seconds, static_cast<long long>(reference_runs), kills, lives, killed_seconds,
      seed);
  EXPECT_GE(kills, 10) << "too few kills landed before the campaign ended (rng seed " << seed
                       << ")";

  const Outcome reference = read_outcome(dir / "reference.db", id);
  const Outcome killed = read_outcome(dir / "killed.db", killed_id);
  EXPECT_EQ(killed.state, "done");
  EXPECT_EQ(killed.jobs.size(), reference.jobs.size());
  EXPECT_EQ(killed.jobs, reference.jobs)
      << "jobs differ (a job created twice, or different suggestions)";
  EXPECT_EQ(killed.run_count, reference.run_count);
  EXPECT_EQ(killed.measurements, reference.measurements);
  EXPECT_EQ(killed.runs, reference.runs) << "measurements differ";
  EXPECT_EQ(killed.results, reference.results) << "final choices differ";
  EXPECT_EQ(killed.rules, reference.rules);
  EXPECT_FALSE(killed.rules.empty());
  std::printf(
      "[ figures  ] %zu jobs, %zu runs, %lld measurements, %zu rules versions (reference %zu), "
      "%d jobs resumed mid-way\n",
      killed.jobs.size(), killed.run_count, static_cast<long long>(killed.measurements),
      killed.rules_versions, reference.rules_versions, killed.resumed_jobs);
  EXPECT_EQ(reference.resumed_jobs, 0);
  EXPECT_GE(killed.resumed_jobs, 1) << "no kill landed inside a job (rng seed " << seed << ")";
  // Every job was completed, none is left running or cancelled.
  for (const auto& [tag, purpose, state, request] : killed.jobs) EXPECT_EQ(state, "done") << tag;
}

TEST(DaemonKill, CampaignSurvivesRepeatedSigkillWithTheSameResult) {
  check_survives_repeated_sigkill(kill_test_spec());
}

// A whole-cluster campaign under a budget for the whole campaign (its search, its final phases
// planned on what the search left, and the leftover looks the money they leave pays for).
TEST(DaemonKill, AWholeClusterCampaignUnderATotalBudgetSurvivesRepeatedSigkill) {
  json contexts = json::array();
  for (int p : {2, 4, 8, 16}) contexts.push_back({{"collective", "reduce"}, {"comm_size", p}});
  check_survives_repeated_sigkill(
      {{"name", "kill -9, whole cluster"},
       {"backend", "sim"},
       {"contexts", contexts},
       {"sizes", "4:1048576"},
       {"budget", 0},
       {"seed", 7},
       {"batch_size", 8},
       {"final_repeats", 3},
       {"cluster", {{"strategy", "bo-cluster"}, {"total_node_seconds", 180.0}}}});
}

}  // namespace
}  // namespace colltune::testing
