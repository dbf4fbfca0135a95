// The Slurm backend on a REAL Slurm cluster (slurm/dev-cluster start): batches through sbatch,
// squeue, sacct -c and scancel, with the bundled OSU benchmark under srun and mpirun, and the
// faults a cluster inflicts (scancel from outside, time limit, a crashing configuration, a
// drained node, a failed node, a slurmctld restart). Every test skips when `scontrol ping` does
// not answer.
//
// In every test: each (configuration, repeat) is reported exactly once, and each result carries
// the Slurm job id it ran in.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "runner/local_backend.h"
#include "runner/process.h"
#include "runner/slurm_backend.h"
#include "slurm/job_folder.h"
#include "slurm/slurm_client.h"

#ifndef COLLTUNE_SOURCE_DIR
#define COLLTUNE_SOURCE_DIR "."
#endif
#ifndef COLLTUNE_TEST_OSU_DIR
#define COLLTUNE_TEST_OSU_DIR ""
#endif

namespace colltune {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kDevCluster = std::string(COLLTUNE_SOURCE_DIR) + "/slurm/dev-cluster";

std::string command(const std::vector<std::string>& argv, double timeout_s = 60) {
  auto out = run_process(argv, {.timeout_s = timeout_s});
  return out.stdout_text + out.stderr_text;
}

// The first node of the default partition (sinfo marks it with '*'): the jobs of these tests
// land there, also on a cluster with more partitions (dev-cluster start --nodes N).
std::string node_name() {
  auto out = run_process({"sinfo", "-h", "-N", "-o", "%N %P"}, {.timeout_s = 10});
  std::istringstream in(out.stdout_text);
  std::string name, partition;
  while (in >> name >> partition)
    if (!partition.empty() && partition.back() == '*') return name;
  return {};
}

std::string job_state(const std::string& job_id) {
  auto out =
      run_process({"squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T|%r"}, {.timeout_s = 10});
  auto line = out.stdout_text.substr(0, out.stdout_text.find('\n'));
  return line;
}

// Collects what a backend reports; callbacks run on the backend's thread.
class RecordingSink : public RunSink {
 public:
  std::function<void(const std::string& job_id)> on_submit;
  std::function<void(const RunResult&)> on_each;

  void on_job_submitted(const std::string& tag, const std::string& job_id) override {
    EXPECT_FALSE(tag.empty());
    {
      std::lock_guard lock(mutex_);
      job_ids.push_back(job_id);
    }
    changed_.notify_all();
    if (on_submit) on_submit(job_id);
  }
  void on_result(const RunResult& result) override {
    {
      std::lock_guard lock(mutex_);
      results.push_back(result);
    }
    changed_.notify_all();
    if (on_each) on_each(result);
  }
  // Waits until `predicate` holds (checked under the lock) or the timeout passes.
  bool wait_until(const std::function<bool()>& predicate, double timeout_s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::duration<double>(timeout_s), predicate);
  }

  std::vector<std::string> job_ids;
  std::vector<RunResult> results;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
};

// Every (config, repeat) exactly once; every result names a submitted job.
void expect_each_run_once(const BenchmarkRequest& request, const RecordingSink& sink) {
  std::set<std::pair<std::size_t, int>> seen;
  for (const auto& r : sink.results) {
    EXPECT_TRUE(seen.insert({r.config_index, r.repeat}).second)
        << "reported twice: config " << r.config_index << " repeat " << r.repeat;
    EXPECT_EQ(r.tag, request.tag);
    EXPECT_EQ(r.provenance.backend, "slurm");
    EXPECT_NE(std::find(sink.job_ids.begin(), sink.job_ids.end(), r.provenance.job_id),
              sink.job_ids.end())
        << "job id '" << r.provenance.job_id << "' was never reported as submitted";
  }
  EXPECT_EQ(seen.size(), request.configs.size() * static_cast<std::size_t>(request.repeats));
}

std::string describe(const RunResult& r) {
  return to_string(r.config) + " -> " + std::string(to_string(r.outcome)) + " " + r.error +
         " [job " + r.provenance.job_id + "]\nstderr: " + r.provenance.stderr_excerpt;
}

class SlurmCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ping = run_process({"scontrol", "ping"}, {.timeout_s = 10});
    if (ping.stdout_text.find("is UP") == std::string::npos)
      GTEST_SKIP() << "no Slurm controller answers `scontrol ping` (start one with `sudo "
                   << kDevCluster << " start`): " << ping.spawn_error << ping.stdout_text
                   << ping.stderr_text;
    if (!fs::exists(fs::path(COLLTUNE_TEST_OSU_DIR) / "osu_bcast"))
      GTEST_SKIP() << "bundled benchmark not built in " << COLLTUNE_TEST_OSU_DIR;
    node_ = node_name();
    ASSERT_FALSE(node_.empty());
    job_root_ = fs::path("/tmp") / ("colltune-slurm-it-" + std::to_string(::getpid()));
  }

  void TearDown() override {
    // Leave the node usable for the next test whatever happened.
    if (!node_.empty()) {
      auto state = command({"sinfo", "-h", "-N", "-n", node_, "-o", "%T"});
      if (state.find("drain") != std::string::npos || state.find("down") != std::string::npos)
        command({"scontrol", "update", "nodename=" + node_, "state=resume"});
    }
    if (!HasFailure()) {
      std::error_code ec;
      fs::remove_all(job_root_, ec);
    }
  }

  SlurmBackendOptions options() const {
    SlurmBackendOptions o;
    o.osu_dir = COLLTUNE_TEST_OSU_DIR;
    o.job_root = job_root_;
    o.keep_job_dirs = true;
    o.poll_initial_s = 0.05;
    o.poll_max_s = 0.5;
    o.controller_timeout_s = 120;
    return o;
  }

  static BenchmarkRequest bcast_request(std::string tag, std::vector<TuningConfig> configs) {
    BenchmarkRequest r;
    r.tag = std::move(tag);
    r.collective = Collective::bcast;
    r.comm_size = 4;
    r.min_size = 4;
    r.max_size = 65536;
    r.iterations = 50;
    r.warmup = 5;
    r.configs = std::move(configs);
    r.order_seed = 11;
    r.run_timeout_s = 60;
    return r;
  }

  std::string node_;
  fs::path job_root_;
};

TEST_F(SlurmCluster, BatchMatchesTheShapeOfALocalRunAndIsReportedWhileTheJobRuns) {
  auto request = bcast_request("it-shape/c1:b1", {TuningConfig{}, TuningConfig{1, 0, 0},
                                                  TuningConfig{6, 8192, 0}, TuningConfig{2, 0, 4}});
  SlurmBackend slurm_backend(options());
  RecordingSink sink;
  std::string state_at_first_result;
  sink.on_each = [&](const RunResult& r) {
    if (state_at_first_result.empty()) state_at_first_result = job_state(r.provenance.job_id);
  };
  CancelFlag cancel;
  slurm_backend.run(request, sink, cancel);

  ASSERT_EQ(sink.job_ids.size(), 1u);
  expect_each_run_once(request, sink);
  // Reported from the job folder while the job was still running, not at its end.
  EXPECT_EQ(state_at_first_result.rfind("RUNNING", 0), 0u) << state_at_first_result;

  LocalBackend local({.osu_dir = COLLTUNE_TEST_OSU_DIR});
  RecordingSink local_sink;
  local.run(request, local_sink, cancel);
  ASSERT_EQ(local_sink.results.size(), sink.results.size());
  std::map<std::size_t, std::vector<std::int64_t>> local_sizes;
  for (const auto& r : local_sink.results) {
    ASSERT_EQ(r.outcome, RunOutcome::ok) << r.error;
    for (const auto& row : r.rows) local_sizes[r.config_index].push_back(row.size);
  }
  for (const auto& r : sink.results) {
    ASSERT_EQ(r.outcome, RunOutcome::ok) << describe(r);
    std::vector<std::int64_t> sizes;
    for (const auto& row : r.rows) sizes.push_back(row.size);
    EXPECT_EQ(sizes, local_sizes[r.config_index]);
    EXPECT_EQ(sizes.size(), 15u);  // 4 B .. 64 KiB
    EXPECT_EQ(r.provenance.job_id, sink.job_ids[0]);
    EXPECT_EQ(r.provenance.argv.at(0), "srun");
    EXPECT_EQ(r.provenance.argv.at(1), "--mpi=pmix");
    EXPECT_EQ(r.provenance.host, node_);
    EXPECT_FALSE(r.provenance.ompi_version.empty());
    EXPECT_LE(r.provenance.start_time, r.provenance.end_time);
    EXPECT_NE(r.provenance.benchmark.find("Broadcast"), std::string::npos);
    if (!r.config.is_default()) {
      EXPECT_EQ(r.provenance.env.at("OMPI_MCA_coll_tuned_bcast_algorithm"),
                std::to_string(r.config.algorithm));
      EXPECT_EQ(r.provenance.mca.at("coll_tuned_bcast_algorithm"),
                std::to_string(r.config.algorithm));
    }
    // 4 ranks on a machine with fewer cores: the job must have made them yield.
    if (static_cast<int>(std::thread::hardware_concurrency()) < 4) {
      EXPECT_EQ(r.provenance.mca.at("mpi_yield_when_idle"), "1");
    }
  }

  // The job's record: squeue now, the job completion log (sacct -c) later.
  slurm::SlurmClient client({}, process_command_runner());
  auto status = client.status(sink.job_ids[0]);
  ASSERT_TRUE(status.status) << status.error;
  EXPECT_EQ(status.status->state, slurm::JobState::completed);
  std::string error;
  auto record = client.accounting(sink.job_ids[0], &error);
  ASSERT_TRUE(record) << error;
  EXPECT_EQ(record->state, slurm::JobState::completed);
  EXPECT_EQ(record->job_name, "colltune-it-shape_c1_b1");
  auto unknown = client.status("987654321");
  EXPECT_FALSE(unknown.status);
  EXPECT_FALSE(unknown.controller_unreachable);
}

TEST_F(SlurmCluster, MpirunInsideTheAllocationYieldsAndMeasuresSanely) {
  auto request = bcast_request("it-mpirun", {TuningConfig{}, TuningConfig{6, 0, 0}});
  request.min_size = 1024;
  request.max_size = 1024;
  request.iterations = 200;
  auto o = options();
  o.launcher = SlurmLauncher::mpirun;
  SlurmBackend backend(o);
  RecordingSink sink;
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  expect_each_run_once(request, sink);
  for (const auto& r : sink.results) {
    ASSERT_EQ(r.outcome, RunOutcome::ok) << describe(r);
    EXPECT_EQ(r.provenance.argv.at(0), "mpirun");
    ASSERT_EQ(r.rows.size(), 1u);
    // Without yield, 4 busy-polling ranks on 2 cores take milliseconds per 1 KiB bcast
    // (docs/reference/slurm-single-node.md §5); with it, a few microseconds.
    EXPECT_LT(r.rows[0].avg_us, 500.0) << "ranks busy-poll: yield_when_idle not applied?";
  }
}

TEST_F(SlurmCluster, ACrashingConfigurationFailsAloneAfterTwoAttempts) {
  // allgather two_proc (6) with 4 ranks: MPI_ERR_UNSUPPORTED_OPERATION aborts the run.
  BenchmarkRequest request =
      bcast_request("it-crash", {TuningConfig{}, TuningConfig{6, 0, 0}, TuningConfig{3, 0, 0}});
  request.collective = Collective::allgather;
  request.max_size = 1024;
  SlurmBackend backend(options());
  RecordingSink sink;
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  ASSERT_EQ(sink.job_ids.size(), 1u);
  expect_each_run_once(request, sink);
  for (const auto& r : sink.results) {
    if (r.config.algorithm == 6) {
      EXPECT_EQ(r.outcome, RunOutcome::failed) << describe(r);
      EXPECT_NE(r.error.find("failed 2 times the same way"), std::string::npos) << r.error;
      EXPECT_NE(r.provenance.exit_status, 0);
      EXPECT_EQ(r.provenance.job_id, sink.job_ids[0]);
    } else {
      EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
    }
  }
  // Both attempts' files are kept for a post-mortem.
  EXPECT_TRUE(fs::exists(backend.last_job_dir() / "runs"));
}

TEST_F(SlurmCluster, AJobCancelledFromOutsideReportsItsUnfinishedRunsCancelled) {
  auto request = bcast_request("it-scancel", std::vector<TuningConfig>(6, TuningConfig{}));
  for (int i = 0; i < 6; ++i) request.configs[i] = TuningConfig{i % 3 == 0 ? 0 : 1 + i, 0, 0};
  SlurmBackend backend(options());
  RecordingSink sink;
  sink.on_each = [&](const RunResult& r) {
    if (sink.results.size() == 1) command({"scancel", r.provenance.job_id});
  };
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  ASSERT_EQ(sink.job_ids.size(), 1u);
  expect_each_run_once(request, sink);
  int ok = 0, cancelled = 0;
  for (const auto& r : sink.results) {
    if (r.outcome == RunOutcome::ok) ++ok;
    if (r.outcome == RunOutcome::cancelled) {
      ++cancelled;
      EXPECT_NE(r.error.find("cancelled outside colltune"), std::string::npos) << r.error;
    }
  }
  EXPECT_GE(ok, 1);
  EXPECT_GE(cancelled, 1);
  EXPECT_EQ(ok + cancelled, 6) << "a run was neither ok nor cancelled";
  EXPECT_EQ(job_state(sink.job_ids[0]).rfind("CANCELLED", 0), 0u);
}

TEST_F(SlurmCluster, CancelFlagScancelsTheJobPromptly) {
  auto request = bcast_request("it-cancel", std::vector<TuningConfig>(6, TuningConfig{}));
  SlurmBackend backend(options());
  RecordingSink sink;
  CancelFlag cancel;
  sink.on_each = [&](const RunResult&) { cancel.cancel(); };
  const auto start = Clock::now();
  backend.run(request, sink, cancel);
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  expect_each_run_once(request, sink);
  int cancelled = 0;
  for (const auto& r : sink.results) {
    if (r.outcome == RunOutcome::cancelled) {
      ++cancelled;
      EXPECT_NE(r.error.find("colltune scancelled"), std::string::npos) << r.error;
    }
  }
  EXPECT_GE(cancelled, 4);
  EXPECT_LT(took, 30);
  EXPECT_EQ(job_state(sink.job_ids.at(0)).rfind("CANCELLED", 0), 0u);
}

TEST_F(SlurmCluster, ANodeDrainedWhileTheJobIsPendingDelaysButDoesNotFailTheBatch) {
  ASSERT_EQ(
      command({"scontrol", "update", "nodename=" + node_, "state=drain", "reason=colltune-test"}),
      "");
  auto request = bcast_request("it-drain", {TuningConfig{}, TuningConfig{1, 0, 0}});
  SlurmBackend backend(options());
  RecordingSink sink;
  std::string pending_state;
  std::thread resumer([&] {
    if (!sink.wait_until([&] { return !sink.job_ids.empty(); }, 30)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    pending_state = job_state(sink.job_ids[0]);
    command({"scontrol", "update", "nodename=" + node_, "state=resume"});
  });
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  resumer.join();
  EXPECT_EQ(pending_state.rfind("PENDING", 0), 0u) << pending_state;
  ASSERT_EQ(sink.job_ids.size(), 1u);
  expect_each_run_once(request, sink);
  for (const auto& r : sink.results) EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
}

TEST_F(SlurmCluster, ANodeFailureResubmitsOnlyTheUnfinishedRuns) {
  auto request = bcast_request("it-nodefail", std::vector<TuningConfig>(5, TuningConfig{}));
  for (int i = 0; i < 5; ++i) request.configs[i] = TuningConfig{i, 0, 0};
  SlurmBackend backend(options());
  RecordingSink sink;
  sink.on_each = [&](const RunResult&) {
    if (sink.results.size() == 1 && sink.job_ids.size() == 1)
      command({"scontrol", "update", "nodename=" + node_, "state=down", "reason=colltune-test"});
  };
  sink.on_submit = [&](const std::string&) {
    if (sink.job_ids.size() == 2) {  // the resubmission: bring the node back if still down
      auto state = command({"sinfo", "-h", "-N", "-n", node_, "-o", "%T"});
      if (state.find("down") != std::string::npos)
        command({"scontrol", "update", "nodename=" + node_, "state=resume"});
    }
  };
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  ASSERT_EQ(sink.job_ids.size(), 2u) << "expected one resubmission after NODE_FAIL";
  expect_each_run_once(request, sink);
  int in_first = 0, in_second = 0;
  for (const auto& r : sink.results) {
    EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
    if (r.provenance.job_id == sink.job_ids[0]) ++in_first;
    if (r.provenance.job_id == sink.job_ids[1]) ++in_second;
  }
  EXPECT_GE(in_first, 1);
  EXPECT_GE(in_second, 1);
  EXPECT_EQ(in_first + in_second, 5);
  EXPECT_EQ(job_state(sink.job_ids[0]).rfind("NODE_FAIL", 0), 0u);
}

TEST_F(SlurmCluster, ControllerRestartDuringABatchLosesNothing) {
  auto request = bcast_request("it-ctld", std::vector<TuningConfig>(6, TuningConfig{}));
  for (int i = 0; i < 6; ++i) request.configs[i] = TuningConfig{i, 0, 0};
  SlurmBackend backend(options());
  RecordingSink sink;
  std::thread restarter([&] {
    if (!sink.wait_until([&] { return !sink.results.empty(); }, 60)) return;
    // slurmctld away for 3 s while the job keeps running under slurmd.
    command({kDevCluster, "restart-controller", "3"}, 60);
  });
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  restarter.join();
  ASSERT_EQ(sink.job_ids.size(), 1u);
  expect_each_run_once(request, sink);
  for (const auto& r : sink.results) EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
  std::string detail;
  EXPECT_TRUE(backend.controller_up(&detail)) << detail;
}

// Slurm enforces time limits only about every 30 s, so this test takes 60-100 s. The run that
// outlives the limit is a hung one, asleep: the test holds no core while it waits on Slurm.
TEST_F(SlurmCluster, AJobOverItsTimeLimitTimesOutTheRunningRunAndResubmitsTheRest) {
  // A configuration whose run hangs (as a collective that deadlocks does), and the default,
  // which finishes in about a second. The hang: the bundled osu_bcast behind a wrapper that
  // sleeps instead of starting it when the run forces pipeline bcast (3) with 4-byte segments
  // (the per-run MCA parameters reach the ranks as OMPI_MCA_* variables, through mpirun or
  // srun). It used to be that configuration for real, 2000 iterations of 1 MiB (about 2
  // minutes here): its 4 ranks kept both cores busy for the 60-100 s the test waits.
  const fs::path osu = job_root_.string() + "-osu";
  fs::create_directories(osu);
  {
    const fs::path real = fs::path(COLLTUNE_TEST_OSU_DIR) / "osu_bcast";
    std::ofstream script(osu / "osu_bcast");
    script << "#!/bin/sh\n"
           << "if [ \"${OMPI_MCA_coll_tuned_bcast_algorithm:-}\" = 3 ] &&\n"
           << "   [ \"${OMPI_MCA_coll_tuned_bcast_algorithm_segmentsize:-}\" = 4 ]; then\n"
           << "  exec sleep 600\nfi\n"
           << "exec '" << real.string() << "' \"$@\"\n";
  }
  fs::permissions(osu / "osu_bcast", fs::perms::owner_all);
  auto request = bcast_request("it-timelimit", {TuningConfig{3, 4, 0}, TuningConfig{}});
  request.run_timeout_s = 600;  // the Slurm limit strikes first
  // Run the hung one first whatever order_seed shuffles.
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    request.order_seed = seed;
    if (run_order(request).front().first == 0) break;
  }
  ASSERT_EQ(run_order(request).front().first, 0u);
  auto o = options();
  o.osu_dir = osu;
  o.time_limit_minutes = 1;
  SlurmBackend backend(o);
  RecordingSink sink;
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  ASSERT_EQ(sink.job_ids.size(), 2u);
  expect_each_run_once(request, sink);
  for (const auto& r : sink.results) {
    if (r.config_index == 0) {
      EXPECT_EQ(r.outcome, RunOutcome::timeout) << describe(r);
      EXPECT_NE(r.error.find("time limit"), std::string::npos) << r.error;
      EXPECT_EQ(r.provenance.job_id, sink.job_ids[0]);
    } else {
      EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
      EXPECT_EQ(r.provenance.job_id, sink.job_ids[1]);
    }
  }
  EXPECT_EQ(job_state(sink.job_ids[0]).rfind("TIMEOUT", 0), 0u);
  std::error_code ec;
  fs::remove_all(osu, ec);
}

TEST_F(SlurmCluster, DevClusterStartIsIdempotentAndStatusReportsTheNode) {
  auto start = run_process({kDevCluster, "start"}, {.timeout_s = 60});
  EXPECT_EQ(start.exit_code, 0) << start.stdout_text << start.stderr_text;
  EXPECT_NE(start.stdout_text.find("already running"), std::string::npos) << start.stdout_text;
  auto status = run_process({kDevCluster, "status"}, {.timeout_s = 60});
  EXPECT_EQ(status.exit_code, 0) << status.stdout_text;
  EXPECT_NE(status.stdout_text.find("controller: UP"), std::string::npos) << status.stdout_text;
}

TEST_F(SlurmCluster, AnUnknownPartitionFailsEveryRunWithSbatchsReason) {
  auto o = options();
  o.partition = "no_such_partition";
  SlurmBackend backend(o);
  auto request = bcast_request("it-badpart", {TuningConfig{}, TuningConfig{1, 0, 0}});
  RecordingSink sink;
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  EXPECT_TRUE(sink.job_ids.empty());
  ASSERT_EQ(sink.results.size(), 2u);
  for (const auto& r : sink.results) {
    EXPECT_EQ(r.outcome, RunOutcome::failed);
    EXPECT_NE(r.error.find("Invalid partition"), std::string::npos) << r.error;
  }
}

// Jobs named `name` working in `folder`, from the job completion log and squeue: what Slurm
// itself says was submitted for a batch.
std::set<std::string> slurm_jobs_of(const std::string& name, const fs::path& folder) {
  slurm::SlurmClient client({}, process_command_runner());
  std::string error;
  auto jobs = client.find_jobs_by_name(name, &error);
  EXPECT_TRUE(jobs.has_value()) << error;
  std::set<std::string> ids;
  for (const auto& j : jobs.value_or(std::vector<slurm::NamedJob>{}))
    if (fs::path(j.work_dir) == folder) ids.insert(j.job_id);
  return ids;
}

struct SimulatedCrash {};

// The daemon dies (kill -9) while its Slurm job runs: here the sink throws out of run(), so the
// backend is torn down without scancel and the job carries on, exactly as after a crash. A new
// backend resuming the batch (only the runs never reported, the job id never stored and its
// id file lost too) must find the job by name, re-attach, and submit nothing.
TEST_F(SlurmCluster, AResumedBatchReattachesToItsLiveJobAndSubmitsNothingTwice) {
  auto request = bcast_request("it-resume-" + std::to_string(::getpid()),
                               std::vector<TuningConfig>(6, TuningConfig{}));
  for (int i = 0; i < 6; ++i) request.configs[i] = TuningConfig{i % 3, 0, 0};
  request.max_size = 4096;  // short runs: the point is the job, not the numbers
  request.iterations = 10;
  request.run_timeout_s = 120;
  request.recorded_at =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string name = "colltune-" + request.tag;
  std::set<std::pair<std::size_t, int>> before_crash;
  std::string first_job;
  fs::path folder;
  {
    SlurmBackend backend(options());
    RecordingSink sink;
    sink.on_each = [&](const RunResult& r) {
      before_crash.insert({r.config_index, r.repeat});
      if (before_crash.size() == 2) throw SimulatedCrash{};
    };
    CancelFlag cancel;
    EXPECT_THROW(backend.run(request, sink, cancel), SimulatedCrash);
    ASSERT_EQ(sink.job_ids.size(), 1u);
    first_job = sink.job_ids[0];
    folder = backend.last_job_dir();
  }
  ASSERT_EQ(before_crash.size(), 2u);
  const std::string state = job_state(first_job);
  EXPECT_TRUE(state.rfind("RUNNING", 0) == 0 || state.rfind("COMPLETING", 0) == 0) << state;
  // The worst case: the job id was recorded nowhere (crash right after sbatch answered).
  fs::remove(slurm::job_id_path(folder, 1));

  BenchmarkRequest resumed = request;
  resumed.resume = true;
  for (const auto& run : run_order(request))
    if (!before_crash.count(run)) resumed.only_runs.push_back(run);
  SlurmBackend restarted(options());
  RecordingSink sink;
  CancelFlag cancel;
  restarted.run(resumed, sink, cancel);
  EXPECT_EQ(restarted.last_job_dir(), folder);
  EXPECT_EQ(sink.job_ids, std::vector<std::string>{first_job}) << "re-attached, not resubmitted";
  ASSERT_EQ(sink.results.size(), 4u);
  std::set<std::pair<std::size_t, int>> after;
  for (const auto& r : sink.results) {
    EXPECT_TRUE(after.insert({r.config_index, r.repeat}).second) << "reported twice";
    EXPECT_FALSE(before_crash.count({r.config_index, r.repeat})) << "already reported";
    EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
    EXPECT_EQ(r.provenance.job_id, first_job);
    EXPECT_EQ(r.rows.size(), 11u);  // 4 B .. 4 KiB
  }
  EXPECT_EQ(slurm_jobs_of(name, folder), std::set<std::string>{first_job});

  // Resumed again once the job is long over (the caller died before recording anything):
  // every run comes from the folder, nothing is submitted, the id is known from the caller.
  BenchmarkRequest again = request;
  again.resume = true;
  again.resume_job_id = first_job;
  RecordingSink late;
  SlurmBackend(options()).run(again, late, cancel);
  EXPECT_TRUE(late.job_ids.empty());
  ASSERT_EQ(late.results.size(), 6u);
  for (const auto& r : late.results) EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
  EXPECT_EQ(slurm_jobs_of(name, folder), std::set<std::string>{first_job});
}

// A batch paused (CancelFlag: colltune scancels its job) and resumed later: the cancelled job is
// over, so its unfinished runs go into one new job; finished ones are not run again.
TEST_F(SlurmCluster, AResumedBatchWhoseJobWasCancelledSubmitsOnlyItsUnfinishedRuns) {
  auto request = bcast_request("it-pause-" + std::to_string(::getpid()),
                               std::vector<TuningConfig>(5, TuningConfig{}));
  for (int i = 0; i < 5; ++i) request.configs[i] = TuningConfig{i, 0, 0};
  request.max_size = 4096;
  request.iterations = 10;
  request.run_timeout_s = 120;
  request.recorded_at =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  SlurmBackend backend(options());
  RecordingSink first;
  CancelFlag pause;
  std::set<std::pair<std::size_t, int>> measured;
  first.on_each = [&](const RunResult& r) {
    if (r.outcome == RunOutcome::ok) measured.insert({r.config_index, r.repeat});
    if (measured.size() == 1) pause.cancel();
  };
  backend.run(request, first, pause);
  ASSERT_EQ(first.job_ids.size(), 1u);
  ASSERT_GE(measured.size(), 1u);
  ASSERT_LT(measured.size(), 5u) << "the pause came too late to test anything";

  BenchmarkRequest resumed = request;
  resumed.resume = true;
  resumed.resume_job_id = first.job_ids[0];
  for (const auto& run : run_order(request))
    if (!measured.count(run)) resumed.only_runs.push_back(run);
  RecordingSink second;
  CancelFlag go_on;
  backend.run(resumed, second, go_on);
  ASSERT_EQ(second.job_ids.size(), 1u);
  EXPECT_NE(second.job_ids[0], first.job_ids[0]);
  EXPECT_EQ(second.results.size(), resumed.only_runs.size());
  for (const auto& r : second.results) {
    EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
    EXPECT_FALSE(measured.count({r.config_index, r.repeat}));
  }
  EXPECT_EQ(slurm_jobs_of("colltune-" + request.tag, backend.last_job_dir()),
            (std::set<std::string>{first.job_ids[0], second.job_ids[0]}));
}

// Slurm commands failing or slow: wrappers around the real sbatch / squeue in a folder of their
// own (SlurmCommands points at them), each logging its calls and misbehaving while a flag file
// exists.
class SlurmFaults : public SlurmCluster {
 protected:
  void SetUp() override {
    SlurmCluster::SetUp();
    if (IsSkipped()) return;
    bin_ = job_root_.string() + "-bin";
    fs::create_directories(bin_);
    for (const char* name : {"sbatch", "squeue"}) {
      const auto real = find_in_path(name);
      ASSERT_FALSE(real.empty()) << name << " not found in PATH";
      // sbatch.hang: submit for real, then hang (the answer never arrives in time).
      // squeue.down: fail as when the controller cannot be reached.
      std::ofstream script(bin_ / name);
      script << "#!/bin/bash\n"
             << "echo \"$*\" >> '" << (bin_ / name).string() << ".calls'\n"
             << "if [ -e '" << (bin_ / name).string() << ".down' ]; then\n"
             << "  echo 'slurm_load_jobs error: Unable to contact slurm controller (connect "
                "failure)' >&2; exit 1\nfi\n"
             << "out=$('" << real << "' \"$@\"); rc=$?\n"
             << "if [ -e '" << (bin_ / name).string() << ".hang' ]; then\n"
             << "  rm -f '" << (bin_ / name).string() << ".hang'; exec sleep 60\nfi\n"
             << "printf '%s\\n' \"$out\"; exit $rc\n";
      script.close();
      fs::permissions(bin_ / name, fs::perms::owner_all);
    }
  }
  void TearDown() override {
    SlurmCluster::TearDown();
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(bin_, ec);
  }

  static std::string find_in_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin");
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (::access((fs::path(dir) / name).c_str(), X_OK) == 0)
        return (fs::path(dir) / name).string();
    return {};
  }

  SlurmBackendOptions faulty_options() const {
    auto o = options();
    o.commands.sbatch = (bin_ / "sbatch").string();
    o.commands.squeue = (bin_ / "squeue").string();
    o.command_timeout_s = 3;
    return o;
  }

  int calls(const std::string& name) const {
    std::ifstream in(bin_ / (name + ".calls"));
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  fs::path bin_;
};

// sbatch submits but its answer never comes (a slow controller): after the command timeout the
// backend finds the job it did submit, by name in its folder, and follows it; no second job.
TEST_F(SlurmFaults, AnSbatchThatHangsAfterSubmittingDoesNotSubmitTwice) {
  std::ofstream(bin_ / "sbatch.hang").close();
  auto request = bcast_request("it-sbatch-hang", {TuningConfig{}, TuningConfig{1, 0, 0}});
  request.max_size = 4096;
  request.iterations = 10;
  SlurmBackend backend(faulty_options());
  RecordingSink sink;
  CancelFlag cancel;
  const auto began = Clock::now();
  backend.run(request, sink, cancel);
  const double took = std::chrono::duration<double>(Clock::now() - began).count();
  ASSERT_EQ(sink.job_ids.size(), 1u);
  expect_each_run_once(request, sink);
  for (const auto& r : sink.results) EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
  EXPECT_EQ(calls("sbatch"), 1);
  EXPECT_EQ(slurm_jobs_of("colltune-it-sbatch-hang", backend.last_job_dir()),
            std::set<std::string>{sink.job_ids[0]});
  EXPECT_LT(took, 60) << "waited for the hung sbatch instead of its 3 s timeout";
}

// squeue cannot reach the controller for a while: the backend keeps polling within its
// controller timeout, results keep arriving through the job folder, and the batch completes
// with its one job.
TEST_F(SlurmFaults, SqueueFailingForAWhileIsWaitedOut) {
  auto request = bcast_request("it-squeue-down", std::vector<TuningConfig>(4, TuningConfig{}));
  for (int i = 0; i < 4; ++i) request.configs[i] = TuningConfig{i, 0, 0};
  request.max_size = 4096;
  request.iterations = 10;
  SlurmBackend backend(faulty_options());
  RecordingSink sink;
  sink.on_submit = [&](const std::string&) { std::ofstream(bin_ / "squeue.down").close(); };
  std::thread heal([&] {
    sink.wait_until([&] { return !sink.job_ids.empty(); }, 120);
    std::this_thread::sleep_for(std::chrono::seconds(4));
    fs::remove(bin_ / "squeue.down");
  });
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  heal.join();
  ASSERT_EQ(sink.job_ids.size(), 1u);
  expect_each_run_once(request, sink);
  for (const auto& r : sink.results) EXPECT_EQ(r.outcome, RunOutcome::ok) << describe(r);
  EXPECT_GE(calls("squeue"), 3) << "expected polling to go on during the outage";
  EXPECT_EQ(calls("sbatch"), 1);
}

// Bad sbatch options fail every run at once with sbatch's own reason; nothing is retried.
TEST_F(SlurmFaults, APermanentSbatchErrorFailsFastWithItsReason) {
  auto o = faulty_options();
  o.sbatch_extra_args = {"--constraint=colltune_no_such_feature"};
  SlurmBackend backend(o);
  auto request = bcast_request("it-sbatch-bad", {TuningConfig{}});
  RecordingSink sink;
  CancelFlag cancel;
  const auto began = Clock::now();
  backend.run(request, sink, cancel);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - began).count(), 20);
  EXPECT_TRUE(sink.job_ids.empty());
  ASSERT_EQ(sink.results.size(), 1u);
  EXPECT_EQ(sink.results[0].outcome, RunOutcome::failed);
  EXPECT_NE(sink.results[0].error.find("sbatch failed"), std::string::npos)
      << sink.results[0].error;
  EXPECT_EQ(calls("sbatch"), 1);
}

}  // namespace
}  // namespace colltune
