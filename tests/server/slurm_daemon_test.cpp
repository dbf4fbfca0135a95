// The daemon on the real single-node Slurm dev cluster (slurm/dev-cluster start): the
// `colltune serve` binary with the slurm backend, campaigns created over REST.
//  - End to end: followed through Server-Sent Events to its end; the rules file validates and
//    verifies (the verification runs through sbatch too).
//  - kill -9 while a Slurm job of the campaign runs, then a restart: the job is re-attached,
//    not submitted again (Slurm's own records say one job per tag), and every run is stored
//    exactly once.
// Each test skips when no controller answers `scontrol ping`.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "campaign/store.h"
#include "runner/process.h"
#include "runner/slurm_backend.h"
#include "slurm/slurm_client.h"
#include "tests/server/daemon_test_support.h"

namespace colltune::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool slurm_up() {
  auto ping = run_process({"scontrol", "ping"}, {.timeout_s = 10});
  return ping.succeeded() && ping.stdout_text.find("is UP") != std::string::npos;
}

// A config with only the slurm backend; job folders under the test's folder.
std::string write_slurm_config(const TempDir& dir) {
  const std::string path = dir / "colltune.json";
  write_json_file(path, {{"listen", "127.0.0.1:0"},
                         {"database", dir / "colltune.db"},
                         {"rules_dir", dir / "rules"},
                         {"backends",
                          {{"slurm",
                            {{"osu_dir", COLLTUNE_OSU_BENCH_DIR},
                             {"job_root", dir / "jobs"},
                             {"keep_job_dirs", true},
                             {"poll_initial_s", 0.05},
                             {"poll_max_s", 0.5}}}}},
                         {"tokens", tokens_json()}});
  return path;
}

json slurm_campaign_spec(int budget, int batch_size) {
  return {{"name", "slurm e2e"},
          {"backend", "slurm"},
          {"contexts", {{{"collective", "bcast"}, {"comm_size", 4}}}},
          {"sizes", "4:1024"},
          {"strategy", "random"},
          {"budget", budget},
          {"iterations", 10},
          {"warmup", 2},
          {"batch_size", batch_size},
          {"final_candidates", 1},
          {"final_repeats", 2},
          {"seed", 5}};
}

httplib::Headers viewer_headers() {
  return {{"Authorization", std::string("Bearer ") + kViewerToken}};
}

bool campaign_ended(const SseEvent& e) {
  return e.type == "campaign_state" &&
         (e.data["payload"]["state"] == "done" || e.data["payload"]["state"] == "failed");
}

// Slurm's own answer to "which jobs were submitted for this batch": jobs named colltune-<tag>
// (squeue and the job completion log) working in a folder under `job_root`.
std::set<std::string> slurm_jobs_of(const std::string& tag, const fs::path& job_root) {
  slurm::SlurmClient client({}, process_command_runner());
  std::string error;
  auto jobs = client.find_jobs_by_name("colltune-" + tag, &error);
  EXPECT_TRUE(jobs.has_value()) << error;
  std::set<std::string> ids;
  for (const auto& j : jobs.value_or(std::vector<slurm::NamedJob>{}))
    if (fs::path(j.work_dir).parent_path() == job_root) ids.insert(j.job_id);
  return ids;
}

// Every job of the campaign: done, each run stored once, exactly one Slurm job per tag (the
// one the store names). Returns the number of runs.
std::size_t expect_one_slurm_job_per_tag(const std::string& db, std::int64_t campaign,
                                         const fs::path& job_root) {
  Store store(db);
  std::size_t runs = 0;
  const auto jobs = store.jobs(campaign);
  EXPECT_FALSE(jobs.empty());
  for (const auto& job : jobs) {
    EXPECT_EQ(job.state, JobState::done) << job.tag;
    const auto request = job.request.get<BenchmarkRequest>();
    std::set<std::pair<std::size_t, int>> seen;
    for (const auto& run : store.runs_of_job(job.id)) {
      EXPECT_TRUE(seen.insert({run.config_index, run.repeat}).second) << job.tag;
      EXPECT_EQ(run.provenance.job_id, job.backend_job_id) << job.tag;
    }
    EXPECT_EQ(seen.size(), request.configs.size() * static_cast<std::size_t>(request.repeats))
        << job.tag;
    runs += seen.size();
    EXPECT_EQ(slurm_jobs_of(job.tag, job_root), std::set<std::string>{job.backend_job_id})
        << job.tag << " was submitted more than once (or never)";
  }
  return runs;
}

TEST(SlurmDaemon, CampaignOverRestFollowedBySseToVerifiedRules) {
  if (!slurm_up()) GTEST_SKIP() << "no Slurm controller answers (slurm/dev-cluster start)";
  TempDir dir;
  DaemonProcess daemon(COLLTUNE_BINARY, write_slurm_config(dir), dir / "daemon.log");
  const std::string url = daemon.start();
  const auto started = std::chrono::steady_clock::now();
  auto client = bearer_client(url);

  std::int64_t id = 0;
  std::thread creator([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto res =
        client.Post("/api/v1/campaigns", slurm_campaign_spec(3, 3).dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
    id = json::parse(res->body).at("id").get<std::int64_t>();
  });
  auto events =
      read_sse(url, "/api/v1/events", viewer_headers(), campaign_ended, std::chrono::seconds(400));
  creator.join();
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(campaign_ended(events.back())) << daemon.log();
  EXPECT_EQ(events.back().data["payload"]["state"], "done") << events.back().data.dump() << "\n"
                                                            << daemon.log();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::map<std::string, int> counts;
  for (const auto& e : events) ++counts[e.type];
  EXPECT_GE(counts["job_submitted"], 2);  // a search and a final job at least, via sbatch
  EXPECT_GE(counts["run"], 3 + 2 * 2);
  EXPECT_EQ(counts["rules_version"], 1);
  std::printf(
      "[ figures  ] campaign over REST on the Slurm dev cluster: %.1f s, %d Slurm jobs, "
      "%zu events\n",
      seconds, counts["job_submitted"], events.size());

  auto rules = json_of(client.Get("/api/v1/campaigns/" + std::to_string(id) + "/rules"));
  EXPECT_TRUE(rules.at("validation").at("deployable").get<bool>()) << rules.dump(2);
  EXPECT_FALSE(rules.at("verification").at("skipped").get<bool>()) << rules.dump(2);
  EXPECT_TRUE(rules.at("verification").at("verified").get<bool>()) << rules.dump(2);
  auto text = client.Get("/api/v1/campaigns/" + std::to_string(id) + "/rules?format=text");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 200);
  EXPECT_FALSE(text->body.empty());
  auto report = json_of(client.Get("/api/v1/campaigns/" + std::to_string(id) + "/report"));
  EXPECT_EQ(report.at("results").size(), 9u) << report.dump(2);  // 4 B .. 1 KiB

  EXPECT_EQ(WEXITSTATUS(daemon.stop(SIGTERM)), 0);
  expect_one_slurm_job_per_tag(dir / "colltune.db", id, dir.path() / "jobs");
}

TEST(SlurmDaemon, KillNineDuringASlurmJobReattachesAndSubmitsNothingTwice) {
  if (!slurm_up()) GTEST_SKIP() << "no Slurm controller answers (slurm/dev-cluster start)";
  TempDir dir;
  const std::string config = write_slurm_config(dir);
  DaemonProcess daemon(COLLTUNE_BINARY, config, dir / "daemon.log");
  const std::string url = daemon.start();
  auto client = bearer_client(url);

  // A search batch of 6 runs (a few seconds in one job): the kill lands after its first run is
  // stored, while the job still runs.
  auto res = client.Post("/api/v1/campaigns", slurm_campaign_spec(6, 6).dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const auto id = json::parse(res->body).at("id").get<std::int64_t>();
  std::string killed_tag, killed_job;
  bool saw_run = false;
  read_sse(
      url, "/api/v1/events?campaign_id=" + std::to_string(id), viewer_headers(),
      [&](const SseEvent& e) {
        if (e.type == "job_submitted" && killed_tag.empty()) {
          killed_tag = e.data["payload"].value("tag", "");
          killed_job = e.data["payload"].value("backend_job_id", "");
        }
        if (e.type == "run" && !killed_tag.empty()) saw_run = true;
        return saw_run || campaign_ended(e);
      },
      std::chrono::seconds(300));
  ASSERT_TRUE(saw_run) << daemon.log();
  daemon.stop(SIGKILL);
  const std::string state_at_kill =
      run_process({"squeue", "-h", "-t", "all", "-j", killed_job, "-o", "%T"}, {.timeout_s = 10})
          .stdout_text;
  std::printf("[ figures  ] killed the daemon while Slurm job %s (%s) was %s", killed_job.c_str(),
              killed_tag.c_str(), state_at_kill.c_str());

  // Restart on the same store: the campaign goes on by itself.
  DaemonProcess restarted(COLLTUNE_BINARY, config, dir / "daemon2.log");
  const std::string url2 = restarted.start();
  auto client2 = bearer_client(url2);
  auto campaign = wait_for_state(client2, id, {"done", "failed"}, std::chrono::seconds(400));
  ASSERT_EQ(campaign.value("state", ""), "done") << campaign.dump(2) << restarted.log();
  EXPECT_EQ(WEXITSTATUS(restarted.stop(SIGTERM)), 0);

  // The restarted daemon followed the job again (or collected it, had it ended meanwhile).
  const std::string log = restarted.log();
  std::string picked_up;
  for (const std::string& how :
       {"re-attached to job " + killed_job, "finished in job " + killed_job,
        "earlier job " + killed_job + " ended"})
    if (log.find(how) != std::string::npos) picked_up = how;
  EXPECT_FALSE(picked_up.empty()) << "the restarted daemon did not pick up job " << killed_job
                                  << ":\n"
                                  << log;
  std::printf("[ figures  ] after the restart: %s\n", picked_up.c_str());
  const auto runs = expect_one_slurm_job_per_tag(dir / "colltune.db", id, dir.path() / "jobs");
  EXPECT_GE(runs, 6u + 2u * 2u);
  EXPECT_EQ(slurm_jobs_of(killed_tag, dir.path() / "jobs"), std::set<std::string>{killed_job});
}

}  // namespace
}  // namespace colltune::testing
