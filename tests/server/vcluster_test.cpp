// Multi-node tests on the virtual cluster of `slurm/dev-cluster start --nodes 4` (partition
// "vcluster": nodes ct-n1..ct-n4, each a network + UTS namespace with its own slurmd; ranks on
// different nodes talk over TCP between the namespaces, ranks on one node over shared memory;
// docs/virtual-cluster.md). scripts/run-slurm-tests starts that cluster for `make check`.
//  - OSU through the Slurm backend at 1x2, 2x1 and 2x2 (nodes x ranks per node): the hosts in
//    the provenance, the intra- vs inter-node latency (a figure), the partition's fingerprint.
//  - A daemon campaign with contexts {bcast, 2 nodes x 2} and {allreduce, 4 nodes x 1} to a
//    verified rules file.
//  - A node's slurmd killed mid-job: the job ends NODE_FAIL, the campaign records why, its
//    runs finish on the remaining nodes, nothing recorded is lost or run twice.
// Each test skips when the partition is not there (a single-node `dev-cluster start`).
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <set>

#include "campaign/fingerprint.h"
#include "campaign/store.h"
#include "runner/process.h"
#include "runner/slurm_backend.h"
#include "slurm/slurm_output.h"
#include "tests/server/daemon_test_support.h"

namespace colltune::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kPartition = "vcluster";
constexpr const char* kNodeState = "/run/colltune-vcluster";

std::string command(const std::vector<std::string>& argv) {
  return run_process(argv, {.timeout_s = 30}).stdout_text;
}

// Nodes of the virtual partition that Slurm can use ("" when it does not exist).
std::vector<std::string> usable_vnodes() {
  std::vector<std::string> nodes;
  std::istringstream in(command({"sinfo", "-h", "-N", "-p", kPartition, "-o", "%N %T"}));
  std::string name, state;
  while (in >> name >> state)
    if (state == "idle" || state.rfind("alloc", 0) == 0 || state.rfind("mix", 0) == 0)
      nodes.push_back(name);
  return nodes;
}

bool vcluster_ready(std::string* why) {
  auto ping = run_process({"scontrol", "ping"}, {.timeout_s = 10});
  if (ping.stdout_text.find("is UP") == std::string::npos) {
    *why = "no Slurm controller answers (sudo slurm/dev-cluster start --nodes 4)";
    return false;
  }
  if (usable_vnodes().size() < 4) {
    *why =
        "partition vcluster has fewer than 4 usable nodes (sudo slurm/dev-cluster start "
        "--nodes 4)";
    return false;
  }
  return true;
}

#define REQUIRE_VCLUSTER()                          \
  do {                                              \
    std::string why;                                \
    if (!vcluster_ready(&why)) GTEST_SKIP() << why; \
  } while (0)

// The virtual nodes share this machine's cores: every layout with more ranks than cores is
// oversubscribed even when each node holds fewer ranks than its `nproc`, so ranks yield.
json vcluster_backend_settings(const fs::path& job_root) {
  return {{"osu_dir", COLLTUNE_OSU_BENCH_DIR},
          {"partition", kPartition},
          {"yield", "always"},
          {"job_root", job_root},
          {"keep_job_dirs", true},
          {"poll_initial_s", 0.05},
          {"poll_max_s", 0.5},
          {"max_resubmits", 2}};
}

struct Collect : RunSink {
  std::vector<RunResult> results;
  void on_result(const RunResult& r) override { results.push_back(r); }
};

// One run of Open MPI's default allreduce at `nodes` x `ppn`.
RunResult osu_at(SlurmBackend& backend, int nodes, int ppn, const std::string& tag) {
  BenchmarkRequest r;
  r.tag = tag;
  r.collective = Collective::allreduce;
  r.comm_size = nodes * ppn;
  r.nodes = nodes;
  r.ppn = ppn;
  r.min_size = 4;
  r.max_size = 1024;
  r.iterations = 20;
  r.warmup = 2;
  r.configs = {TuningConfig{}};
  r.run_timeout_s = 120;
  Collect sink;
  CancelFlag cancel;
  backend.run(r, sink, cancel);
  EXPECT_EQ(sink.results.size(), 1u);
  return sink.results.empty() ? RunResult{} : sink.results.front();
}

double latency_at(const RunResult& r, std::int64_t size) {
  for (const auto& row : r.rows)
    if (row.size == size) return row.avg_us;
  return 0;
}

TEST(VirtualCluster, OsuAcrossNodesRunsOnDistinctHostsWithAnInterNodeGap) {
  REQUIRE_VCLUSTER();
  TempDir dir;
  SlurmBackend backend(slurm_backend_options_from_json(vcluster_backend_settings(dir / "jobs")));

  const RunResult two_by_two = osu_at(backend, 2, 2, "vc-2x2");
  ASSERT_EQ(two_by_two.outcome, RunOutcome::ok) << two_by_two.error << "\n"
                                                << two_by_two.provenance.stderr_excerpt;
  const auto& hosts = two_by_two.provenance.hosts;
  const std::set<std::string> distinct(hosts.begin(), hosts.end());
  EXPECT_EQ(distinct.size(), 2u) << json(hosts).dump();
  for (const auto& h : distinct) EXPECT_EQ(h.rfind("ct-n", 0), 0u) << h;
  EXPECT_EQ(two_by_two.provenance.host, hosts.empty() ? "" : hosts.front());  // the batch host
  EXPECT_EQ(two_by_two.provenance.env.at("OMPI_MCA_mpi_yield_when_idle"), "1");

  // The same two ranks on one node (shared memory) and on two nodes (TCP between namespaces).
  const RunResult intra = osu_at(backend, 1, 2, "vc-1x2");
  const RunResult inter = osu_at(backend, 2, 1, "vc-2x1");
  ASSERT_EQ(intra.outcome, RunOutcome::ok) << intra.error;
  ASSERT_EQ(inter.outcome, RunOutcome::ok) << inter.error;
  EXPECT_EQ(intra.provenance.hosts.size(), 1u);
  EXPECT_EQ(
      std::set<std::string>(inter.provenance.hosts.begin(), inter.provenance.hosts.end()).size(),
      2u);
  for (std::int64_t size : {4, 1024})
    std::printf(
        "[ figures  ] allreduce %5lld B, default algorithm: 1 node x 2 ranks %9.2f us, 2 nodes x "
        "1 rank %9.2f us, 2 nodes x 2 ranks %9.2f us\n",
        static_cast<long long>(size), latency_at(intra, size), latency_at(inter, size),
        latency_at(two_by_two, size));
  // The gap is orders of magnitude here (shared memory vs TCP + yielding ranks): a generous
  // sanity bound, not a timing target.
  EXPECT_GT(latency_at(inter, 4), latency_at(intra, 4));

  // mpirun inside the allocation (it starts its daemons on the nodes with srun) at 2x2 too.
  json mpirun_settings = vcluster_backend_settings(dir / "jobs-mpirun");
  mpirun_settings["launcher"] = "mpirun";
  SlurmBackend mpirun_backend(slurm_backend_options_from_json(mpirun_settings));
  const RunResult by_mpirun = osu_at(mpirun_backend, 2, 2, "vc-2x2-mpirun");
  ASSERT_EQ(to_string(by_mpirun.outcome), "ok") << by_mpirun.error << "\n"
                                                << by_mpirun.provenance.stderr_excerpt;
  EXPECT_EQ(by_mpirun.provenance.argv.front(), "mpirun");
  EXPECT_EQ(
      std::set<std::string>(by_mpirun.provenance.hosts.begin(), by_mpirun.provenance.hosts.end())
          .size(),
      2u);

  // The fingerprint of the partition: 4 nodes of 4 CPUs, the namespaces' bridge interface.
  FingerprintOptions fo;
  fo.scheduler = "slurm";
  fo.partition = kPartition;
  const json fp = collect_fingerprint(srun_command_runner(kPartition), fo);
  EXPECT_EQ(fp["cluster"]["node_count"], 4) << fp.dump(2);
  ASSERT_EQ(fp["node_types"].size(), 1u) << fp.dump(2);
  const json& type = fp["node_types"].begin().value();
  EXPECT_EQ(type["cpus"], 4) << fp.dump(2);
  EXPECT_EQ(type["nodes"], 4) << fp.dump(2);
  EXPECT_TRUE(fp["network"]["interfaces"].contains("ct0")) << fp["network"].dump(2);
  EXPECT_FALSE(fp["network"]["interfaces"].contains("eth0")) << fp["network"].dump(2);
}

std::string write_config(const TempDir& dir) {
  const std::string path = dir / "colltune.json";
  write_json_file(path, {{"listen", "127.0.0.1:0"},
                         {"database", dir / "colltune.db"},
                         {"rules_dir", dir / "rules"},
                         {"backends", {{"slurm", vcluster_backend_settings(dir / "jobs")}}},
                         {"tokens", tokens_json()}});
  return path;
}

// Every job done, each of its runs stored exactly once, each run's hosts as many distinct
// virtual nodes as its context names. Returns the number of runs.
std::size_t expect_runs_once_on_their_nodes(const std::string& db, std::int64_t campaign) {
  Store store(db);
  std::size_t runs = 0;
  for (const auto& job : store.jobs(campaign)) {
    EXPECT_EQ(job.state, "done") << job.tag;
    const auto request = job.request.get<BenchmarkRequest>();
    std::set<std::pair<std::size_t, int>> seen;
    for (const auto& run : store.runs_of_job(job.id)) {
      EXPECT_TRUE(seen.insert({run.config_index, run.repeat}).second) << job.tag << " twice";
      const std::set<std::string> hosts(run.provenance.hosts.begin(), run.provenance.hosts.end());
      EXPECT_EQ(hosts.size(), static_cast<std::size_t>(request.nodes))
          << job.tag << ": " << json(run.provenance.hosts).dump();
    }
    EXPECT_EQ(seen.size(), request.configs.size() * static_cast<std::size_t>(request.repeats))
        << job.tag;
    runs += seen.size();
  }
  return runs;
}

TEST(VirtualCluster, DaemonCampaignOverNodesAndRanksPerNodeToVerifiedRules) {
  REQUIRE_VCLUSTER();
  TempDir dir;
  DaemonProcess daemon(COLLTUNE_BINARY, write_config(dir), dir / "daemon.log");
  const std::string url = daemon.start();
  auto client = bearer_client(url);
  const json spec = {{"name", "vcluster layouts"},
                     {"backend", "slurm"},
                     {"contexts",
                      {{{"collective", "bcast"}, {"nodes", 2}, {"ppn", 2}},
                       {{"collective", "allreduce"}, {"nodes", 4}, {"ppn", 1}}}},
                     {"sizes", "4:64"},
                     {"strategy", "random"},
                     {"budget", 2},
                     {"iterations", 5},
                     {"warmup", 1},
                     {"batch_size", 2},
                     {"final_candidates", 1},
                     {"final_repeats", 1},
                     {"seed", 3}};
  const auto started = std::chrono::steady_clock::now();
  auto res = client.Post("/api/v1/campaigns", spec.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const auto id = json::parse(res->body).at("id").get<std::int64_t>();
  auto campaign = wait_for_state(client, id, {"done", "failed"}, std::chrono::seconds(600));
  ASSERT_EQ(campaign.value("state", ""), "done") << campaign.dump(2) << daemon.log();
  std::printf("[ figures  ] campaign {bcast 2x2, allreduce 4x1} on the virtual cluster: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

  auto rules = json_of(client.Get("/api/v1/campaigns/" + std::to_string(id) + "/rules"));
  EXPECT_TRUE(rules.at("validation").at("deployable").get<bool>()) << rules.dump(2);
  EXPECT_FALSE(rules.at("verification").at("skipped").get<bool>()) << rules.dump(2);
  EXPECT_TRUE(rules.at("verification").at("verified").get<bool>()) << rules.dump(2);
  EXPECT_EQ(WEXITSTATUS(daemon.stop(SIGTERM)), 0);

  Store store(dir / "colltune.db");
  std::map<std::string, std::pair<int, int>> layouts;  // collective -> (nodes, ppn) as stored
  for (const auto& job : store.jobs(id)) {
    const auto request = job.request.get<BenchmarkRequest>();
    layouts[std::string(name(request.collective))] = {request.nodes, request.ppn};
  }
  EXPECT_EQ(layouts["bcast"], std::make_pair(2, 2));
  EXPECT_EQ(layouts["allreduce"], std::make_pair(4, 1));
  EXPECT_GE(expect_runs_once_on_their_nodes(dir / "colltune.db", id), 2u * (2 + 2));
}

// The pid of a virtual node's slurmd, from the pid file dev-cluster gave it.
pid_t slurmd_pid(const std::string& node) {
  std::ifstream in(fs::path(kNodeState) / ("slurmd-" + node + ".pid"));
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

TEST(VirtualCluster, ANodeDyingMidJobEndsItNodeFailAndTheCampaignFinishesElsewhere) {
  REQUIRE_VCLUSTER();
  TempDir dir;
  DaemonProcess daemon(COLLTUNE_BINARY, write_config(dir), dir / "daemon.log");
  const std::string url = daemon.start();
  auto client = bearer_client(url);
  // One search job of 6 runs at 2 nodes x 2 ranks; 3 nodes remain after the failure.
  const json spec = {{"name", "vcluster node failure"},
                     {"backend", "slurm"},
                     {"contexts", {{{"collective", "bcast"}, {"nodes", 2}, {"ppn", 2}}}},
                     {"sizes", "4:64"},
                     {"strategy", "random"},
                     {"budget", 6},
                     {"iterations", 10},
                     {"warmup", 1},
                     {"batch_size", 6},
                     {"final_candidates", 1},
                     {"final_repeats", 1},
                     {"verify", false},
                     {"seed", 9}};
  auto res = client.Post("/api/v1/campaigns", spec.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const auto id = json::parse(res->body).at("id").get<std::int64_t>();

  std::string job_id;
  bool saw_run = false;
  read_sse(
      url, "/api/v1/events?campaign_id=" + std::to_string(id),
      {{"Authorization", std::string("Bearer ") + kViewerToken}},
      [&](const SseEvent& e) {
        if (e.type == "job_submitted" && job_id.empty())
          job_id = e.data["payload"].value("backend_job_id", "");
        if (e.type == "run" && !job_id.empty()) saw_run = true;
        return saw_run;
      },
      std::chrono::seconds(300));
  ASSERT_TRUE(saw_run) << daemon.log();
  const auto nodes = slurm::expand_hostlist(command({"squeue", "-h", "-j", job_id, "-o", "%N"}));
  ASSERT_TRUE(nodes && nodes->size() == 2) << "job " << job_id << " is not running on 2 nodes";
  const std::string victim = nodes->back();  // not the batch host: the job script goes on
  const pid_t pid = slurmd_pid(victim);
  ASSERT_GT(pid, 0) << "no pid file for the slurmd of " << victim;
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  std::printf("[ figures  ] killed the slurmd of %s (pid %d) during Slurm job %s\n", victim.c_str(),
              static_cast<int>(pid), job_id.c_str());

  auto campaign = wait_for_state(client, id, {"done", "failed"}, std::chrono::seconds(600));
  // Bring the node back for the tests that follow, whatever happened (ReturnToService=2).
  const auto restart = run_process(
      {std::string(COLLTUNE_SOURCE_DIR) + "/slurm/dev-cluster", "start", "--nodes", "4"},
      {.timeout_s = 120});
  EXPECT_TRUE(restart.succeeded()) << restart.stdout_text << restart.stderr_text;
  ASSERT_EQ(campaign.value("state", ""), "done") << campaign.dump(2) << daemon.log();
  EXPECT_EQ(WEXITSTATUS(daemon.stop(SIGTERM)), 0);

  // Slurm's verdict on the job, the reason recorded in the campaign, the runs elsewhere.
  const std::string state =
      command({"sacct", "-c", "-X", "-n", "-P", "-o", "jobid,state", "-j", job_id});
  std::printf("[ figures  ] job %s in the job completion log: %s", job_id.c_str(), state.c_str());
  Store store(dir / "colltune.db");
  std::string reason;
  for (const auto& e : store.events_after(0, 100000))
    if (e.campaign_id == id && e.type == "job_resubmitted") reason = e.payload.value("reason", "");
  EXPECT_NE(reason.find("Slurm job " + job_id), std::string::npos) << reason;
  EXPECT_TRUE(reason.find("NODE_FAIL") != std::string::npos ||
              reason.find("lost its allocation") != std::string::npos)
      << reason;
  std::printf("[ figures  ] recorded: %s\n", reason.c_str());
  std::set<std::string> job_ids_after;
  for (const auto& job : store.jobs(id))
    for (const auto& run : store.runs_of_job(job.id)) {
      // Before a step that cannot reach the dead node counted as a lost node, the run launched
      // next was blamed: "failed 2 times the same way: exit status 233: no output on stdout".
      EXPECT_EQ(to_string(run.outcome), "ok") << run.error;
      if (run.provenance.job_id != job_id) {
        job_ids_after.insert(run.provenance.job_id);
        EXPECT_EQ(std::count(run.provenance.hosts.begin(), run.provenance.hosts.end(), victim), 0)
            << "a run after the failure was placed on the dead node";
      }
    }
  EXPECT_FALSE(job_ids_after.empty()) << "no run was made after the failure";
  EXPECT_GE(expect_runs_once_on_their_nodes(dir / "colltune.db", id), 6u + 2u);
}

}  // namespace
}  // namespace colltune::testing
