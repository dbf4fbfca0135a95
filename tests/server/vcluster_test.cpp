// Multi-node tests on the virtual cluster of `slurm/dev-cluster start --nodes 4` (partition
// "vcluster": nodes ct-n1..ct-n4, each a network + UTS namespace with its own slurmd; ranks on
// different nodes talk over TCP between the namespaces, ranks on one node over shared memory;
// docs/virtual-cluster.md). scripts/run-slurm-tests starts that cluster for `make check`.
//  - OSU through the Slurm backend at 1x2, 2x1 and 2x2 (nodes x ranks per node): the hosts in
//    the provenance, the intra- vs inter-node latency (a figure), the partition's fingerprint.
//  - A daemon campaign with contexts {bcast, 2 nodes x 2} and {allreduce, 4 nodes x 1} to a
//    verified rules file.
//  - Issue #15 across nodes: `colltune tune --nodes 1,2,4 --ppn 1 --predict-up-to 6` (layouts
//    2x1 and 4x1, sizes 3, 5, 6 predicted), every run on its layout's nodes, the file's and the
//    report's layouts, the tracer at the measured sizes and a predicted one; more nodes than the
//    partition has refused by the CLI and the daemon before anything runs.
//  - A node's slurmd killed mid-job: the job ends NODE_FAIL, the campaign records why, its
//    runs finish on the remaining nodes, nothing recorded is lost or run twice.
// Each test skips when the partition is not there (a single-node `dev-cluster start`).
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "campaign/fingerprint.h"
#include "campaign/store.h"
#include "core/file_text.h"
#include "rules/rules_reader.h"
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
    EXPECT_EQ(job.state, JobState::done) << job.tag;
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

// Issue #15 across nodes: `colltune tune --nodes 1,2,4 --ppn 1` on the virtual partition is one
// whole-cluster campaign over the layouts 2 x 1 and 4 x 1 (1 x 1 is left out), its file
// predicted up to 6 ranks. Every run on exactly its layout's nodes; the file, the report and the
// tracer (Open MPI inside the allocation) at both measured sizes and at a predicted one.
TEST(VirtualCluster, WholeClusterCampaignOverLayoutsVerifiedAtMeasuredAndPredictedSizes) {
  REQUIRE_VCLUSTER();
  TempDir dir;
  const std::string db = dir / "colltune.db";
  const std::string rules_path = dir / "rules.conf";
  const std::string report_path = dir / "report.json";
  const auto started = std::chrono::steady_clock::now();
  const auto tune = run_process({COLLTUNE_BINARY,
                                 "tune",
                                 "--backend",
                                 "slurm",
                                 "--partition",
                                 kPartition,
                                 "--backend-config",
                                 vcluster_backend_settings(dir / "jobs").dump(),
                                 "--collectives",
                                 "bcast",
                                 "--nodes",
                                 "1,2,4",
                                 "--ppn",
                                 "1",
                                 "--predict-up-to",
                                 "6",
                                 "--sizes",
                                 "4:1024",
                                 "--budget",
                                 "2",
                                 "--batch-size",
                                 "2",
                                 "--iterations",
                                 "10",
                                 "--warmup",
                                 "1",
                                 "--final-repeats",
                                 "1",
                                 "--seed",
                                 "5",
                                 "--db",
                                 db,
                                 "--rules-out",
                                 rules_path,
                                 "--report-out",
                                 report_path},
                                {.timeout_s = 900});
  ASSERT_EQ(tune.status_code(), 0) << tune.stdout_text << tune.stderr_text;
  std::printf(
      "[ figures  ] whole-cluster bcast {2x1, 4x1} -> 2..6 ranks on the virtual cluster: "
      "%.1f s\n",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

  // Every job on its layout: the search and final jobs at 2 x 1 and 4 x 1, the tracer's jobs at
  // the measured layouts and at the predicted sizes; each run on that many distinct nodes.
  Store store(db);
  ASSERT_EQ(store.campaigns().size(), 1u);
  const std::int64_t id = store.campaigns().front().id;
  std::map<int, std::pair<int, int>> layout_of;  // comm size -> (nodes, ppn) of its context
  for (const auto& c : store.contexts(id)) layout_of[c.comm_size] = {c.nodes, c.ppn};
  EXPECT_EQ(layout_of, (std::map<int, std::pair<int, int>>{{2, {2, 1}}, {4, {4, 1}}}));
  std::set<int> job_sizes;
  for (const auto& job : store.jobs(id)) {
    const auto request = job.request.get<BenchmarkRequest>();
    job_sizes.insert(request.comm_size);
    if (layout_of.count(request.comm_size)) {
      EXPECT_EQ(std::make_pair(request.nodes, request.ppn), layout_of[request.comm_size])
          << job.tag;
    } else {  // a predicted size, traced on the nodes of its nearest measured layout
      EXPECT_GE(request.nodes, 2) << job.tag;
      EXPECT_LE(request.nodes, request.comm_size) << job.tag;
    }
  }
  const std::size_t runs = expect_runs_once_on_their_nodes(db, id);
  EXPECT_GE(runs, 4u);

  // The file: a block for every size 2..6 naming its layout, Open MPI's default above.
  const std::string content = read_file_text(rules_path).value_or("");
  EXPECT_NE(content.find("bcast P=2: measured on 2 nodes x 1 ranks"), std::string::npos) << content;
  EXPECT_NE(content.find("bcast P=4: measured on 4 nodes x 1 ranks"), std::string::npos) << content;
  for (int p : {3, 5, 6}) {
    const auto at = content.find("bcast P=" + std::to_string(p) + ": PREDICTED by bo-cluster");
    ASSERT_NE(at, std::string::npos) << p << "\n" << content;
    const std::string line = content.substr(at, content.find('\n', at) - at);
    EXPECT_TRUE(line.find("layout of P=2 (2 nodes x 1 ranks)") != std::string::npos ||
                line.find("layout of P=4 (4 nodes x 1 ranks)") != std::string::npos)
        << line;
  }
  EXPECT_NE(content.find("bcast above 6 ranks"), std::string::npos) << content;
  const RulesReadResult read = read_rules_text(content, RulesDialect::ompi_4_1);
  ASSERT_TRUE(read.loaded) << read.reason;
  for (std::int64_t m : {4, 1024})
    EXPECT_TRUE(configured_choice(read.model, Collective::bcast, 7, m).is_default());
  const auto validate = run_process({COLLTUNE_BINARY, "rules", "validate", rules_path});
  EXPECT_EQ(validate.status_code(), 0) << validate.stdout_text << validate.stderr_text;

  // The report: the layouts of the measured sizes, each predicted cell's nearest layout.
  std::ifstream report_in(report_path);
  const json report = json::parse(report_in);
  ASSERT_EQ(report.at("cluster").size(), 1u) << report.dump(2);
  const json& cluster = report["cluster"][0];
  EXPECT_EQ(cluster.at("layouts"), json::parse(R"([{"comm_size":2,"nodes":2,"ppn":1},
                                                    {"comm_size":4,"nodes":4,"ppn":1}])"));
  std::set<int> predicted_sizes;
  for (const auto& p : report.at("predicted")) {
    predicted_sizes.insert(p.at("comm_size").get<int>());
    EXPECT_EQ(p.at("source"), "predicted");
    const int from = p.at("layout_from").get<int>();
    EXPECT_TRUE(from == 2 || from == 4) << p.dump();
  }
  EXPECT_EQ(predicted_sizes, (std::set<int>{3, 5, 6})) << report.at("predicted").dump(2);
  EXPECT_NE(tune.stdout_text.find("predicted P=3,5,6"), std::string::npos) << tune.stdout_text;

  // The tracer: what Open MPI ran with the file loaded matches the file at 2, 4 and at least one
  // predicted size (all on the virtual nodes).
  const auto versions = store.rules_versions(id);
  ASSERT_FALSE(versions.empty());
  const json& verification = versions.front().verification;  // the newest
  EXPECT_TRUE(verification.value("verified", false)) << verification.dump(2);
  std::set<int> traced_measured, traced_predicted;
  for (const auto& c : verification.at("contexts")) {
    EXPECT_TRUE(c.at("run_ok").get<bool>()) << c.dump();
    EXPECT_EQ(c.at("matches"), c.at("sizes")) << c.dump();
    (c.value("predicted", false) ? traced_predicted : traced_measured)
        .insert(c.at("comm_size").get<int>());
  }
  EXPECT_EQ(traced_measured, (std::set<int>{2, 4})) << verification.dump(2);
  EXPECT_FALSE(traced_predicted.empty()) << verification.dump(2);
  for (int p : traced_predicted) EXPECT_TRUE(job_sizes.count(p)) << p;
  int tuned = 0;
  for (const auto& p : report.at("predicted"))
    tuned += p.at("best").get<TuningConfig>().is_default() ? 0 : 1;
  std::printf(
      "[ figures  ] %zu jobs, %zu runs; traced at %zu measured and %zu predicted sizes; "
      "%d of %zu predicted cells tuned\n",
      store.jobs(id).size(), runs, traced_measured.size(), traced_predicted.size(), tuned,
      report.at("predicted").size());
}

// More nodes than the partition has: refused before anything runs, with the reason, by the CLI
// (--nodes) and by the daemon (a spec's context, whole-cluster or not).
TEST(VirtualCluster, MoreNodesThanThePartitionHasIsRefusedBeforeAnythingRuns) {
  REQUIRE_VCLUSTER();
  TempDir dir;
  const std::string reason = "8 nodes asked, but the partition 'vcluster' has 4";
  const auto tune = run_process(
      {COLLTUNE_BINARY, "tune", "--backend", "slurm", "--partition", kPartition, "--backend-config",
       vcluster_backend_settings(dir / "jobs").dump(), "--collectives", "bcast", "--nodes", "2,8",
       "--ppn", "1", "--db", dir / "cli.db"},
      {.timeout_s = 120});
  EXPECT_NE(tune.status_code(), 0);
  EXPECT_NE(tune.stderr_text.find(reason), std::string::npos) << tune.stderr_text;
  EXPECT_NE(tune.stderr_text.find("P=8"), std::string::npos) << tune.stderr_text;
  if (fs::exists(dir / "cli.db")) {
    EXPECT_TRUE(Store(dir / "cli.db").campaigns().empty());
  }
  EXPECT_FALSE(fs::exists(dir / "jobs")) << "a job was prepared";

  DaemonProcess daemon(COLLTUNE_BINARY, write_config(dir), dir / "daemon.log");
  auto client = bearer_client(daemon.start());
  for (const bool whole_cluster : {true, false}) {
    json spec = {{"name", "too many nodes"},
                 {"backend", "slurm"},
                 {"contexts",
                  {{{"collective", "bcast"}, {"comm_size", 2}, {"nodes", 2}, {"ppn", 1}},
                   {{"collective", "bcast"}, {"comm_size", 8}, {"nodes", 8}, {"ppn", 1}}}},
                 {"sizes", "4:64"},
                 {"budget", 2}};
    if (whole_cluster) spec["cluster"] = {{"strategy", "bo-cluster"}};
    auto res = client.Post("/api/v1/campaigns", spec.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << res->body;
    EXPECT_NE(res->body.find("contexts[1]: bcast P=8: " + reason), std::string::npos) << res->body;
  }
  auto list = json_of(client.Get("/api/v1/campaigns"));
  EXPECT_EQ(list.at("total"), 0) << list.dump();
  EXPECT_EQ(WEXITSTATUS(daemon.stop(SIGTERM)), 0);
  EXPECT_FALSE(fs::exists(dir / "jobs")) << "a job was prepared";
}

}  // namespace
}  // namespace colltune::testing
