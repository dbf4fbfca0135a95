// SlurmBackend behaviour that needs no cluster: option checks, a request it cannot run, a
// cancelled batch, and the script it writes when sbatch itself is missing.
#include "runner/slurm_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "slurm/job_folder.h"
#include "tests/support/temp_dir.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

using colltune::testing::TempDir;

struct Sink : RunSink {
  void on_job_submitted(const std::string&, const std::string& id) override { jobs.push_back(id); }
  void on_result(const RunResult& r) override { results.push_back(r); }
  std::vector<std::string> jobs;
  std::vector<RunResult> results;
};

// A folder with an executable osu_bcast (never run: these tests stop before any job starts).
fs::path fake_osu_dir(const fs::path& root) {
  fs::create_directories(root / "osu");
  const auto binary = root / "osu" / "osu_bcast";
  std::ofstream(binary) << "#!/bin/sh\nexit 0\n";
  fs::permissions(binary, fs::perms::owner_all);
  return root / "osu";
}

SlurmBackendOptions offline_options(const fs::path& root) {
  SlurmBackendOptions o;
  o.osu_dir = fake_osu_dir(root);
  o.job_root = root / "jobs";
  o.keep_job_dirs = true;
  for (auto* command : {&o.commands.sbatch, &o.commands.squeue, &o.commands.sacct,
                        &o.commands.scancel, &o.commands.sinfo, &o.commands.scontrol})
    *command = "/nonexistent/slurm/" + *command;
  o.controller_timeout_s = 1;
  return o;
}

BenchmarkRequest request() {
  BenchmarkRequest r;
  r.tag = "c7/b3 it's";
  r.comm_size = 4;
  r.configs = {TuningConfig{}, TuningConfig{6, 8192, 0}};
  r.repeats = 2;
  return r;
}

TEST(SlurmBackend, RejectsUnsafeOptionsUpFront) {
  TempDir tmp;
  auto with = [&](auto mutate) {
    auto o = offline_options(tmp.path());
    mutate(o);
    return o;
  };
  EXPECT_THROW(SlurmBackend(with([](auto& o) { o.partition = "debug --x"; })),
               std::invalid_argument);
  EXPECT_THROW(SlurmBackend(with([](auto& o) { o.account = "a;b"; })), std::invalid_argument);
  EXPECT_THROW(SlurmBackend(with([](auto& o) { o.qos = "$(q)"; })), std::invalid_argument);
  EXPECT_THROW(SlurmBackend(with([](auto& o) { o.job_root = "/tmp/has space"; })),
               std::invalid_argument);
  EXPECT_THROW(SlurmBackend(with([](auto& o) { o.srun_mpi = "pmix x"; })), std::invalid_argument);
  EXPECT_THROW(SlurmBackend(with([](auto& o) { o.script_template = "/nonexistent/t.sh"; })),
               std::invalid_argument);
  const auto bad_template = tmp.path() / "bad.sh";
  std::ofstream(bad_template) << "#!/bin/bash\n{{directives}}\n{{runs}}\n";
  EXPECT_THROW(SlurmBackend(with([&](auto& o) { o.script_template = bad_template; })),
               std::invalid_argument);
  EXPECT_NO_THROW(SlurmBackend(offline_options(tmp.path())));
  EXPECT_EQ(parse_slurm_launcher("srun"), SlurmLauncher::srun);
  EXPECT_EQ(parse_slurm_launcher("mpirun"), SlurmLauncher::mpirun);
  EXPECT_FALSE(parse_slurm_launcher("aprun").has_value());
}

TEST(SlurmBackend, InvalidRequestsThrowAndMissingBenchmarksFailEveryRun) {
  TempDir tmp;
  SlurmBackend backend(offline_options(tmp.path()));
  Sink sink;
  CancelFlag cancel;
  auto bad = request();
  bad.comm_size = 1;
  EXPECT_THROW(backend.run(bad, sink, cancel), std::invalid_argument);
  bad = request();
  bad.extra_env["NOT-A-NAME"] = "1";
  EXPECT_THROW(backend.run(bad, sink, cancel), std::invalid_argument);
  EXPECT_TRUE(sink.results.empty());

  auto o = offline_options(tmp.path());
  o.osu_dir = tmp.path() / "empty";
  SlurmBackend no_benchmark(o);
  no_benchmark.run(request(), sink, cancel);
  ASSERT_EQ(sink.results.size(), 4u);
  for (const auto& r : sink.results) {
    EXPECT_EQ(r.outcome, RunOutcome::failed);
    EXPECT_NE(r.error.find("no osu_bcast under"), std::string::npos) << r.error;
  }
  EXPECT_TRUE(sink.jobs.empty());
}

// Issue #15: a whole-cluster campaign naming more nodes than the partition has is refused
// before anything is submitted (sinfo asked once); when sinfo fails the scheduler decides.
TEST(SlurmBackend, AdmitRefusesMoreNodesThanThePartitionHas) {
  TempDir tmp;
  auto o = offline_options(tmp.path());
  o.partition = "debug";
  const fs::path sinfo = tmp.path() / "sinfo";
  // Two nodes (n1 listed twice, as sinfo -N does for a node in two partitions); records argv.
  std::ofstream(sinfo) << "#!/bin/sh\necho \"$@\" >> " << (tmp.path() / "sinfo.args").string()
                       << "\nprintf 'n1|idle|4|none\\nn1|idle|4|none\\nn2|idle|4|none\\n'\n";
  fs::permissions(sinfo, fs::perms::owner_all);
  o.commands.sinfo = sinfo.string();
  SlurmBackend backend(o);
  auto r = request();
  r.comm_size = 8;
  r.nodes = 2;
  EXPECT_EQ(backend.admit(r), "");
  r.nodes = 4;
  EXPECT_EQ(backend.admit(r), "4 nodes asked, but the partition 'debug' has 2");
  std::ifstream args(tmp.path() / "sinfo.args");
  std::string line, all;
  int calls = 0;
  while (std::getline(args, line)) {
    ++calls;
    all += line;
  }
  EXPECT_EQ(calls, 1);
  EXPECT_NE(all.find("-p debug"), std::string::npos) << all;

  SlurmBackend offline(offline_options(tmp.path()));  // sinfo does not exist
  EXPECT_EQ(offline.admit(r), "");
}

TEST(SlurmBackend, ACancelledBatchSubmitsNothing) {
  TempDir tmp;
  SlurmBackend backend(offline_options(tmp.path()));
  Sink sink;
  CancelFlag cancel;
  cancel.cancel();
  backend.run(request(), sink, cancel);
  EXPECT_TRUE(sink.jobs.empty());
  ASSERT_EQ(sink.results.size(), 4u);
  for (const auto& r : sink.results) EXPECT_EQ(r.outcome, RunOutcome::cancelled) << r.error;
}

TEST(SlurmBackend, WritesOneScriptForTheBatchAndReportsWhySbatchFailed) {
  TempDir tmp;
  auto o = offline_options(tmp.path());
  o.partition = "debug";
  o.qos = "short";
  SlurmBackend backend(o);
  Sink sink;
  CancelFlag cancel;
  backend.run(request(), sink, cancel);
  ASSERT_EQ(sink.results.size(), 4u);
  for (const auto& r : sink.results) {
    EXPECT_EQ(r.outcome, RunOutcome::failed);
    EXPECT_NE(r.error.find("program not found: /nonexistent/slurm/sbatch"), std::string::npos)
        << r.error;
  }
  const auto script_file = backend.last_job_dir() / "job-1.sh";
  ASSERT_TRUE(fs::exists(script_file));
  std::stringstream text;
  text << std::ifstream(script_file).rdbuf();
  const std::string script = text.str();
  for (const char* expected :
       {"#SBATCH --job-name=colltune-c7_b3_it_s\n", "#SBATCH --partition=debug\n",
        "#SBATCH --qos=short\n", "#SBATCH --ntasks=4\n", "#SBATCH --exclusive\n",
        "'--immediate=10'", "'OMPI_MCA_coll_tuned_bcast_algorithm=6'",
        "'OMPI_MCA_coll_tuned_bcast_algorithm_segmentsize=8192'", "'OMPI_MCA_coll=^hcoll'",
        "COLLTUNE_RELAUNCH_MARKERS=('Requested nodes are busy'"})
    EXPECT_NE(script.find(expected), std::string::npos) << expected << "\n" << script;
  // 2 configurations x 2 repeats: four run lines, in one script.
  std::size_t runs = 0;
  for (auto pos = script.find("\ncolltune_run 'r"); pos != std::string::npos;
       pos = script.find("\ncolltune_run 'r", pos + 1))
    ++runs;
  EXPECT_EQ(runs, 4u);
}

TEST(SlurmBackend, MpirunLauncherForwardsTheEnvironmentAndAllowsRoot) {
  TempDir tmp;
  auto o = offline_options(tmp.path());
  o.launcher = SlurmLauncher::mpirun;
  SlurmBackend backend(o);
  Sink sink;
  CancelFlag cancel;
  auto r = request();
  r.extra_env["LD_PRELOAD"] = "/opt/tracer.so";
  backend.run(r, sink, cancel);
  std::stringstream text;
  text << std::ifstream(backend.last_job_dir() / "job-1.sh").rdbuf();
  const std::string script = text.str();
  EXPECT_NE(script.find("'mpirun' '-np' '4'"), std::string::npos) << script;
  EXPECT_NE(script.find("'-x' 'LD_PRELOAD'"), std::string::npos) << script;
  EXPECT_NE(script.find("'LD_PRELOAD=/opt/tracer.so'"), std::string::npos) << script;
  EXPECT_EQ(script.find("--oversubscribe"), std::string::npos);
  if (::geteuid() == 0) {
    EXPECT_NE(script.find("'OMPI_ALLOW_RUN_AS_ROOT=1'"), std::string::npos);
  }
}

TEST(SlurmBackend, DescribeSaysWhenNoControllerAnswers) {
  TempDir tmp;
  SlurmBackend backend(offline_options(tmp.path()));
  auto info = backend.describe();
  EXPECT_EQ(info.backend, "slurm");
  EXPECT_FALSE(info.extra.at("controller_up").get<bool>());
  EXPECT_EQ(info.extra.at("launcher"), "srun");
  EXPECT_TRUE(backend.runs_real_open_mpi());
}

TEST(SlurmBackend, OptionsFromJsonSettings) {
  auto o = slurm_backend_options_from_json(nlohmann::json::parse(R"({
    "launcher": "mpirun", "partition": "batch", "account": "proj", "qos": "short",
    "exclusive": false, "sbatch_args": ["--constraint=ib"], "job_root": "/scratch/colltune",
    "attempts": 3, "yield": "always", "time_limit_minutes": 30, "max_resubmits": 1,
    "slurm_bin_dir": "/opt/slurm/bin", "commands": {"srun": "srun-wrapper"}})"));
  EXPECT_EQ(o.launcher, SlurmLauncher::mpirun);
  EXPECT_EQ(o.partition, "batch");
  EXPECT_FALSE(o.exclusive);
  EXPECT_EQ(o.sbatch_extra_args, std::vector<std::string>{"--constraint=ib"});
  EXPECT_EQ(o.job_root, "/scratch/colltune");
  EXPECT_EQ(o.attempts, 3);
  EXPECT_EQ(o.yield, slurm::YieldPolicy::always);
  EXPECT_EQ(o.time_limit_minutes, 30);
  EXPECT_EQ(o.commands.sbatch, "/opt/slurm/bin/sbatch");
  EXPECT_EQ(o.commands.srun, "srun-wrapper");  // an explicit command wins over the folder
  EXPECT_THROW(slurm_backend_options_from_json({{"partiton", "x"}}), std::invalid_argument);
  EXPECT_THROW(slurm_backend_options_from_json({{"attempts", "two"}}), std::invalid_argument);
  EXPECT_THROW(slurm_backend_options_from_json({{"launcher", "aprun"}}), std::invalid_argument);
  EXPECT_THROW(slurm_backend_options_from_json({{"commands", {{"qsub", "/x"}}}}),
               std::invalid_argument);
  EXPECT_EQ(slurm_backend_options_from_json(nullptr).launcher, SlurmLauncher::srun);
}

// Writes an executable shell script.
void write_script(const fs::path& path, const std::string& text) {
  std::ofstream(path) << "#!/bin/bash\n" << text;
  fs::permissions(path, fs::perms::owner_all);
}

// A batch resumed after its caller died: the earlier process wrote job-1.sh and sbatch ran, but
// the job id was recorded nowhere. Slurm (scripted commands, outputs as recorded on the dev
// cluster) knows job 77 of that name in this folder, long COMPLETED, and a foreign job 78 of
// the same name in another folder, still running. The finished runs come from the folder, the
// foreign job is left alone, and only the run without a result is submitted again.
TEST(SlurmBackend, AResumedBatchReportsFinishedRunsFromItsFolderAndSubmitsOnlyTheRest) {
  TempDir tmp;
  auto o = offline_options(tmp.path());
  BenchmarkRequest r;
  r.tag = "resume";
  r.comm_size = 4;
  r.min_size = 4;
  r.max_size = 4;
  r.configs = {TuningConfig{}, TuningConfig{1, 0, 0}, TuningConfig{2, 0, 0}};
  r.recorded_at = 1795316985.25;
  r.resume = true;
  const fs::path dir = slurm::recorded_job_folder(o.job_root, r.tag, r.recorded_at);
  fs::create_directories(dir / "runs");
  std::ofstream(slurm::script_path(dir, 1)) << "#!/bin/bash\n";
  const auto order = run_order(r);
  for (const char* id : {"r000", "r001"}) {  // positions 0 and 1 of the batch's order
    const fs::path base = dir / "runs" / id;
    std::ofstream(base.string() + ".a1.start") << "1795316990.5 vm\n";
    std::ofstream(base.string() + ".a1.out")
        << "\n# OSU MPI Broadcast Latency Test v5.6.2\n"
           "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
           "4                       1.50              1.20              1.80         100\n";
    std::ofstream(base.string() + ".a1.err");
    std::ofstream(base.string() + ".a1.end") << "0 1795316991.0\n";
    std::ofstream(base.string() + ".done") << "1\n";
  }

  const fs::path bin = tmp.path() / "bin";
  fs::create_directories(bin);
  const std::string calls = (tmp.path() / "calls").string();
  write_script(bin / "squeue",
               "echo \"squeue $*\" >> '" + calls +
                   "'\n"
                   "case \"$*\" in\n"
                   "  *--name=*) echo '78|colltune-resume|RUNNING|None|/elsewhere/resume-x' ;;\n"
                   "  *) echo '77|COMPLETED|None' ;;\n"
                   "esac\n");
  write_script(bin / "sacct",
               "echo \"sacct $*\" >> '" + calls +
                   "'\n"
                   "case \"$1\" in\n"
                   "  -c) echo '77|colltune-resume|COMPLETED|0:0|" +
                   dir.string() +
                   "'\n"
                   "      echo '78|colltune-resume|RUNNING|0:0|/elsewhere/resume-x' ;;\n"
                   "  *) echo 'Slurm accounting storage is disabled' >&2; exit 1 ;;\n"
                   "esac\n");
  write_script(bin / "scontrol",
               "echo \"scontrol $*\" >> '" + calls +
                   "'\n"
                   "echo 'JobId=77 JobName=colltune-resume JobState=COMPLETED Reason=None "
                   "ExitCode=0:0'\n");
  write_script(bin / "sbatch",
               "echo \"sbatch $*\" >> '" + calls +
                   "'\n"
                   "echo 'sbatch: error: Batch job submission failed: Invalid partition name "
                   "specified' >&2; exit 1\n");
  o.commands.squeue = (bin / "squeue").string();
  o.commands.sacct = (bin / "sacct").string();
  o.commands.scontrol = (bin / "scontrol").string();
  o.commands.sbatch = (bin / "sbatch").string();
  o.poll_initial_s = 0.01;
  SlurmBackend backend(o);
  Sink sink;
  CancelFlag cancel;
  backend.run(r, sink, cancel);

  EXPECT_EQ(backend.last_job_dir(), dir);
  EXPECT_TRUE(sink.jobs.empty()) << "re-attached to " << sink.jobs.front();
  ASSERT_EQ(sink.results.size(), 3u);
  std::set<std::size_t> ok;
  for (const auto& result : sink.results) {
    if (result.outcome == RunOutcome::ok) {
      ok.insert(result.config_index);
      EXPECT_EQ(result.provenance.job_id, "77");
      ASSERT_EQ(result.rows.size(), 1u);
      EXPECT_DOUBLE_EQ(result.rows[0].avg_us, 1.5);
    } else {
      EXPECT_EQ(result.config_index, order[2].first);
      EXPECT_NE(result.error.find("Invalid partition"), std::string::npos) << result.error;
    }
  }
  EXPECT_EQ(ok, (std::set<std::size_t>{order[0].first, order[1].first}));
  // One new submission, of a new script holding only the run without a result.
  std::stringstream log;
  log << std::ifstream(calls).rdbuf();
  std::size_t sbatches = 0;
  for (auto pos = log.str().find("sbatch "); pos != std::string::npos;
       pos = log.str().find("sbatch ", pos + 1))
    ++sbatches;
  EXPECT_EQ(sbatches, 1u) << log.str();
  std::stringstream script;
  script << std::ifstream(slurm::script_path(dir, 2)).rdbuf();
  EXPECT_NE(script.str().find("colltune_run 'r002'"), std::string::npos) << script.str();
  EXPECT_EQ(script.str().find("colltune_run 'r000'"), std::string::npos);

  // Not resuming, the same recorded batch must not take these files for its own results.
  r.resume = false;
  Sink fresh;
  SlurmBackend(o).run(r, fresh, cancel);
  ASSERT_EQ(fresh.results.size(), 3u);
  for (const auto& result : fresh.results) EXPECT_EQ(result.outcome, RunOutcome::failed);
}

}  // namespace
}  // namespace colltune
