// The generated batch script: directives, validation, and the script itself executed by a real
// bash (without Slurm: the #SBATCH lines are comments to bash), checking the job-folder files.
#include "slurm/batch_script.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/file_text.h"
#include "runner/process.h"
#include "slurm/job_folder.h"
#include "slurm/shell_quote.h"
#include "tests/support/temp_dir.h"

namespace colltune::slurm {
namespace {

namespace fs = std::filesystem;

const std::string kNasty = "a'b\"c $(touch PWNED) `touch PWNED2` ; rm -rf / # \\ \n{{runs}} *";

BatchScriptSpec simple_spec(const fs::path& dir) {
  BatchScriptSpec spec;
  spec.job_name = "colltune-c1-b2";
  spec.partition = "debug";
  spec.account = "proj_1";
  spec.qos = "normal.q";
  spec.nodes = 1;
  spec.ntasks = 4;
  spec.time_limit_minutes = 7;
  spec.job_dir = dir;
  spec.runs = {{"r000", 60, {}, {"srun", "--mpi=pmix", "osu_bcast", "-m", "4:8"}}};
  return spec;
}

using colltune::testing::TempDir;

TEST(ShellQuote, EveryValueComesBackVerbatimFromBash) {
  TempDir dir;
  for (const std::string& value :
       {std::string(), std::string("plain"), std::string("it's"), std::string("''"), kNasty,
        std::string("-n"), std::string("new\nline"), std::string("$HOME ~ !x")}) {
    auto out = run_process({"bash", "-c", "printf '%s' " + shell_quote(value)},
                           {.cwd = dir.path().string(), .timeout_s = 10});
    ASSERT_EQ(out.exit_code, 0) << out.stderr_text;
    EXPECT_EQ(out.stdout_text, value);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "PWNED"));
  EXPECT_FALSE(fs::exists(dir.path() / "PWNED2"));
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(ShellQuote, NamesAndPaths) {
  EXPECT_TRUE(is_valid_slurm_name("debug"));
  EXPECT_TRUE(is_valid_slurm_name("gpu_a100.long-2"));
  EXPECT_FALSE(is_valid_slurm_name(""));
  EXPECT_FALSE(is_valid_slurm_name("-p"));
  EXPECT_FALSE(is_valid_slurm_name("a b"));
  EXPECT_FALSE(is_valid_slurm_name("a;b"));
  EXPECT_FALSE(is_valid_slurm_name("a,b"));
  EXPECT_TRUE(is_shell_identifier("OMPI_MCA_x1"));
  EXPECT_FALSE(is_shell_identifier("1X"));
  EXPECT_FALSE(is_shell_identifier("A-B"));
  EXPECT_TRUE(is_directive_safe_path("/scratch/u1/colltune/jobs/c1_b2-x.3"));
  EXPECT_FALSE(is_directive_safe_path("relative/dir"));
  EXPECT_FALSE(is_directive_safe_path("/tmp/with space"));
  EXPECT_FALSE(is_directive_safe_path("/tmp/a'b"));
  EXPECT_EQ(sanitize_name("campaign 3/batch#7"), "campaign_3_batch_7");
  EXPECT_EQ(sanitize_name("abcdef", 3), "abc");
}

TEST(BatchScript, DirectivesCarryTheJobShape) {
  auto script = render_batch_script(simple_spec("/scratch/jobs/b1"));
  EXPECT_EQ(script.rfind("#!/bin/bash\n#SBATCH --job-name=colltune-c1-b2\n", 0), 0u) << script;
  for (const char* line :
       {"#SBATCH --partition=debug\n", "#SBATCH --account=proj_1\n", "#SBATCH --qos=normal.q\n",
        "#SBATCH --nodes=1\n", "#SBATCH --ntasks=4\n", "#SBATCH --exclusive\n",
        "#SBATCH --time=7\n", "#SBATCH --no-requeue\n", "#SBATCH --chdir=/scratch/jobs/b1\n",
        "#SBATCH --output=/scratch/jobs/b1/slurm-%j.out\n",
        "\ncolltune_run 'r000' 60 'srun' '--mpi=pmix' 'osu_bcast' '-m' '4:8'\n"})
    EXPECT_NE(script.find(line), std::string::npos) << line << "\n" << script;
  EXPECT_EQ(script.find("--ntasks-per-node"), std::string::npos);

  auto spec = simple_spec("/scratch/jobs/b1");
  spec.partition.clear();
  spec.account.clear();
  spec.qos.clear();
  spec.exclusive = false;
  spec.nodes = 2;
  spec.ntasks_per_node = 2;
  script = render_batch_script(spec);
  EXPECT_EQ(script.find("--partition"), std::string::npos);
  EXPECT_EQ(script.find("--account"), std::string::npos);
  EXPECT_EQ(script.find("--exclusive"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --ntasks-per-node=2\n"), std::string::npos);
}

TEST(BatchScript, RejectsUnsafeNamesAndBadShapes) {
  auto bad = [](auto mutate) {
    auto spec = simple_spec("/scratch/jobs/b1");
    mutate(spec);
    return spec;
  };
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.partition = "debug\n#SBATCH --x"; })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.account = "a b"; })), std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.qos = "$(x)"; })), std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.job_name = "x y"; })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.job_dir = "/tmp/a b"; })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.job_dir = "jobs"; })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.runs.clear(); })), std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.runs.push_back(s.runs[0]); })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.runs[0].id = "../x"; })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.runs[0].argv.clear(); })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.runs[0].argv[0] = "A=B"; })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.runs[0].env["X-Y"] = "1"; })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.env["1X"] = "1"; })), std::invalid_argument);
  EXPECT_THROW(
      render_batch_script(bad([](auto& s) { s.runs[0].argv.push_back(std::string(1, '\0')); })),
      std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.time_limit_minutes = 0; })),
               std::invalid_argument);
  EXPECT_THROW(render_batch_script(bad([](auto& s) { s.unset_env_prefixes = {"X*"}; })),
               std::invalid_argument);
}

TEST(BatchScript, TemplatesNeedEachPlaceholderOnceInOrder) {
  const auto spec = simple_spec("/scratch/jobs/b1");
  EXPECT_NO_THROW(validate_batch_template(default_batch_template()));
  auto custom = render_batch_script(
      spec, "#!/bin/bash\n# site\n{{directives}}\nmodule load openmpi\n{{prologue}}\n{{runs}}\n");
  EXPECT_NE(custom.find("#SBATCH --open-mode=append\nmodule load openmpi\nset -u\n"),
            std::string::npos)
      << custom;
  EXPECT_THROW(render_batch_script(spec, "{{directives}}{{prologue}}{{runs}}"),
               std::invalid_argument);  // no #!
  EXPECT_THROW(render_batch_script(spec, "#!/bin/sh\n{{directives}}\n{{runs}}\n"),
               std::invalid_argument);  // no prologue
  EXPECT_THROW(
      render_batch_script(spec, "#!/bin/sh\n{{directives}}\n{{prologue}}\n{{runs}}{{runs}}"),
      std::invalid_argument);
  EXPECT_THROW(
      render_batch_script(spec, "#!/bin/sh\nmodule load x\n{{directives}}\n{{prologue}}\n{{runs}}"),
      std::invalid_argument);  // #SBATCH after a command would be ignored
  EXPECT_THROW(render_batch_script(spec, "#!/bin/sh\n{{directives}}\n{{runs}}\n{{prologue}}\n"),
               std::invalid_argument);
}

TEST(BatchScript, TimeLimitCoversEveryAttemptWithMargin) {
  std::vector<ScriptRun> runs(8, ScriptRun{"r", 30, {}, {"x"}});
  // 60 s allowance + 8 runs x 2 attempts x (30 + 10) s = 700 s; +10 % = 770 s -> 13 min.
  EXPECT_EQ(time_limit_minutes_for(runs, 2, 10), 13);
  EXPECT_EQ(time_limit_minutes_for(runs, 1, 10, 0.0, 0), 6);  // 320 s -> 6 min
  EXPECT_EQ(time_limit_minutes_for({}, 1, 0, 0.0, 0), 1);
  runs[0].timeout_s = 0.2;  // rounded up to whole seconds
  EXPECT_EQ(time_limit_minutes_for({runs[0]}, 1, 0, 0.0, 59), 1);
  EXPECT_EQ(time_limit_minutes_for({runs[0]}, 1, 0, 0.0, 60), 2);
}

// Executes the script with bash, as the batch step would.
ProcessResult execute(const std::string& script, const fs::path& dir,
                      std::map<std::string, std::string> env = {}) {
  const auto path = dir / "job.sh";
  std::ofstream(path) << script;
  return run_process({"bash", path.string()},
                     {.env = std::move(env), .cwd = dir.string(), .timeout_s = 60});
}

TEST(BatchScript, RunsWriteTheirOwnFilesAndFailuresStayLocal) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "job";
  BatchScriptSpec spec = simple_spec(dir);
  spec.attempts = 2;
  spec.kill_after_s = 1;
  spec.ranks_per_node = 4096;  // more than any machine's cores: yield must be exported
  spec.ompi_info = "";
  spec.env = {{"JOB_WIDE", kNasty}};
  spec.runs = {
      {"ok", 30, {}, {"sh", "-c", "echo hello; echo warn >&2"}},
      {"crash", 30, {}, {"sh", "-c", "echo partial; exit 3"}},
      {"hang", 1, {}, {"sleep", "30"}},
      {"quoted",
       30,
       {{"RUN_VAR", kNasty}},
       {"sh", "-c",
        "printf '%s|%s|%s|%s|%s' \"$1\" \"$RUN_VAR\" \"$JOB_WIDE\" "
        "\"${OMPI_MCA_coll_tuned_bcast_algorithm:-unset}\" "
        "\"${OMPI_MCA_mpi_yield_when_idle:-unset}\"",
        "sh", kNasty}},
  };
  auto out = execute(render_batch_script(spec), tmp.path(),
                     {{"OMPI_MCA_coll_tuned_bcast_algorithm", "5"},
                      {"SLURM_JOB_ID", "77"},
                      {"SLURM_JOB_NODELIST", "ct-n[1-2]"}});
  ASSERT_EQ(out.exit_code, 0) << out.stderr_text;
  EXPECT_FALSE(fs::exists(tmp.path() / "PWNED"));
  EXPECT_FALSE(fs::exists(dir / "PWNED"));

  auto ok = read_run(dir, "ok");
  ASSERT_TRUE(ok.done);
  ASSERT_EQ(ok.attempts.size(), 1u);
  EXPECT_TRUE(ok.attempts[0].finished);
  EXPECT_EQ(ok.attempts[0].exit_status, 0);
  EXPECT_EQ(ok.attempts[0].stdout_text, "hello\n");
  EXPECT_EQ(ok.attempts[0].stderr_text, "warn\n");
  EXPECT_GT(ok.attempts[0].start_time, 1.6e9);
  EXPECT_GE(ok.attempts[0].end_time, ok.attempts[0].start_time);
  EXPECT_FALSE(ok.attempts[0].host.empty());

  auto crash = read_run(dir, "crash");  // tried twice, both kept
  ASSERT_TRUE(crash.done);
  ASSERT_EQ(crash.attempts.size(), 2u);
  EXPECT_EQ(crash.attempts[0].exit_status, 3);
  EXPECT_EQ(crash.attempts[1].exit_status, 3);
  EXPECT_EQ(crash.attempts[1].stdout_text, "partial\n");

  auto hang = read_run(dir, "hang");  // a timeout is not retried
  ASSERT_TRUE(hang.done);
  ASSERT_EQ(hang.attempts.size(), 1u);
  EXPECT_EQ(hang.attempts[0].exit_status, 124);
  EXPECT_LT(hang.attempts[0].end_time - hang.attempts[0].start_time, 5);

  auto quoted = read_run(dir, "quoted");
  ASSERT_TRUE(quoted.done);
  EXPECT_EQ(quoted.attempts[0].stdout_text, kNasty + "|" + kNasty + "|" + kNasty + "|unset|1");

  auto facts = read_node_facts(dir);
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->job_id, "77");
  EXPECT_EQ(facts->node_list, "ct-n[1-2]");  // the job's nodes: every run's hosts
  EXPECT_GE(facts->cores, 1);
  EXPECT_TRUE(facts->yield_when_idle);
  EXPECT_FALSE(facts->host.empty());
}

TEST(BatchScript, AResubmittedScriptSkipsRunsAlreadyDone) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "job";
  BatchScriptSpec spec = simple_spec(dir);
  spec.ompi_info = "";
  spec.ranks_per_node = 1;
  const std::string counter = (tmp.path() / "count").string();
  spec.runs = {{"once", 30, {}, {"sh", "-c", "echo x >> \"$1\"; echo run", "sh", counter}}};
  ASSERT_EQ(execute(render_batch_script(spec), tmp.path()).exit_code, 0);
  ASSERT_EQ(execute(render_batch_script(spec), tmp.path()).exit_code, 0);
  EXPECT_EQ(read_file_text(counter).value_or(""), "x\n");
  auto facts = read_node_facts(dir);
  ASSERT_TRUE(facts);
  EXPECT_FALSE(facts->yield_when_idle);

  // An interrupted run (start file, no .done) is started afresh, its stale attempts removed.
  fs::remove(dir / "runs" / "once.done");
  std::ofstream(dir / "runs" / "once.a2.start") << "1 stale\n";
  ASSERT_EQ(execute(render_batch_script(spec), tmp.path()).exit_code, 0);
  auto record = read_run(dir, "once");
  EXPECT_TRUE(record.done);
  EXPECT_EQ(record.attempts.size(), 1u);
  EXPECT_FALSE(fs::exists(dir / "runs" / "once.a2.start"));
}

TEST(BatchScript, ALaunchThatNeverStartedIsRelaunchedWithoutUsingAnAttempt) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "job";
  BatchScriptSpec spec = simple_spec(dir);
  spec.ompi_info = "";
  spec.attempts = 1;
  spec.relaunch_delay_s = 1;
  spec.relaunch_markers = {"Requested nodes are busy"};
  const std::string flag = (tmp.path() / "flag").string();
  // First launch: what srun prints when it cannot create its step; second launch: runs.
  const std::string body =
      "if [ -e \"$1\" ]; then echo ran; else touch \"$1\"; "
      "echo 'srun: error: Unable to create step for job 5: Requested nodes are busy' >&2; "
      "exit 1; fi";
  spec.runs = {{"busy", 30, {}, {"sh", "-c", body, "sh", flag}},
               {"broken", 30, {}, {"sh", "-c", "echo 'some other error' >&2; exit 1"}},
               {"hopeless", 2, {}, {"sh", "-c", "echo 'Requested nodes are busy' >&2; exit 1"}}};
  ASSERT_EQ(execute(render_batch_script(spec), tmp.path()).exit_code, 0);
  auto busy = read_run(dir, "busy");
  ASSERT_TRUE(busy.done);
  ASSERT_EQ(busy.attempts.size(), 1u);
  EXPECT_EQ(busy.attempts[0].exit_status, 0);
  EXPECT_EQ(busy.attempts[0].stdout_text, "ran\n");
  auto broken = read_run(dir, "broken");  // other failures are not relaunched
  ASSERT_TRUE(broken.done);
  EXPECT_EQ(broken.attempts.at(0).exit_status, 1);
  // Relaunches stop within the run's own time: the failure is then reported as it is.
  auto hopeless = read_run(dir, "hopeless");
  ASSERT_TRUE(hopeless.done);
  EXPECT_EQ(hopeless.attempts.at(0).exit_status, 1);
  EXPECT_LT(hopeless.attempts[0].end_time - hopeless.attempts[0].start_time, 3);
}

TEST(BatchScript, ARunThatLostTheJobStopsTheScriptWithoutBeingMarkedDone) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "job";
  BatchScriptSpec spec = simple_spec(dir);
  spec.ompi_info = "";
  spec.job_gone_markers = {"srun: error: Node failure on"};
  spec.runs = {
      {"first", 30, {}, {"sh", "-c", "echo fine"}},
      // srun exits 0 after a node failure: the marker counts, not the status.
      {"victim", 30, {}, {"sh", "-c", "echo 'srun: error: Node failure on vm' >&2; exit 0"}},
      {"never", 30, {}, {"sh", "-c", "echo should-not-run"}}};
  spec.job_gone_wait_s = 2;
  const auto began = std::chrono::steady_clock::now();
  auto out = execute(render_batch_script(spec), tmp.path());
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_EQ(out.exit_code, kJobGoneExit);
  EXPECT_NE(out.stdout_text.find("run victim " + std::string(kJobGoneMessage)), std::string::npos)
      << out.stdout_text;
  // It waited for Slurm to end the job (which records TIMEOUT / NODE_FAIL) before exiting.
  EXPECT_GE(took, 2.0);
  EXPECT_TRUE(read_run(dir, "first").done);
  // Not blamed: no .done, and no attempt left that would look like it ran and timed out.
  auto victim = read_run(dir, "victim");
  EXPECT_FALSE(victim.done);
  EXPECT_FALSE(victim.started());
  EXPECT_FALSE(read_run(dir, "never").started());

  // A timeout is a timeout, even if the killed launcher printed such a line.
  spec.runs = {
      {"slow", 1, {}, {"sh", "-c", "echo 'srun: error: Node failure on vm' >&2; sleep 30"}}};
  spec.kill_after_s = 1;
  ASSERT_EQ(execute(render_batch_script(spec), tmp.path()).exit_code, 0);
  auto slow = read_run(dir, "slow");
  ASSERT_TRUE(slow.done);
  EXPECT_EQ(slow.attempts.at(0).exit_status, 124);
}

TEST(JobFolder, ReadsPartialRunsAndEpochFormats) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  fs::create_directories(dir / "runs");
  std::ofstream(dir / "runs" / "r1.a1.start") << "1700000000,25 node7\n";
  std::ofstream(dir / "runs" / "r1.a1.out") << "# partial\n";
  auto record = read_run(dir, "r1");
  EXPECT_FALSE(record.done);
  ASSERT_EQ(record.attempts.size(), 1u);
  EXPECT_FALSE(record.attempts[0].finished);
  EXPECT_DOUBLE_EQ(record.attempts[0].start_time, 1700000000.25);
  EXPECT_EQ(record.attempts[0].host, "node7");
  EXPECT_EQ(record.attempts[0].stdout_text, "# partial\n");
  EXPECT_FALSE(run_is_done(dir, "r1"));
  EXPECT_FALSE(read_run(dir, "absent").started());
  EXPECT_FALSE(parse_epoch_seconds("x").has_value());
  EXPECT_FALSE(read_node_facts(dir).has_value());
  EXPECT_EQ(script_path("/j", 2), fs::path("/j/job-2.sh"));
  EXPECT_EQ(slurm_output_path("/j", "15"), fs::path("/j/slurm-15.out"));
}

TEST(JobFolder, ARecordedBatchAlwaysGetsTheSameFolderAndFindsItsScriptsAndJobIds) {
  TempDir tmp;
  const double recorded = 1795316985.0123;
  const fs::path dir = recorded_job_folder(tmp.path(), "ct-c1-x1-search1", recorded);
  EXPECT_EQ(dir, recorded_job_folder(tmp.path(), "ct-c1-x1-search1", recorded));
  EXPECT_EQ(dir.filename().string(), "ct-c1-x1-search1-20261122-030945-012");
  // Another store's job with the same tag, recorded at another time: another folder.
  EXPECT_NE(dir, recorded_job_folder(tmp.path(), "ct-c1-x1-search1", recorded + 0.002));
  // Unsafe characters never reach the path.
  EXPECT_EQ(recorded_job_folder(tmp.path(), "a b/../c", recorded).parent_path(), tmp.path());

  EXPECT_TRUE(submitted_scripts(dir).empty());  // no folder yet
  fs::create_directories(dir);
  for (const char* name : {"job-1.sh", "job-10.sh", "job-2.sh", "job-x.sh", "job-3.sh.tmp"})
    std::ofstream(dir / name) << "#!/bin/bash\n";
  EXPECT_EQ(submitted_scripts(dir), (std::vector<int>{1, 2, 10}));
  std::ofstream(job_id_path(dir, 1)) << "4711\n";
  std::ofstream(job_id_path(dir, 2)) << "47;11\n";
  EXPECT_EQ(read_submitted_job_id(dir, 1).value_or(""), "4711");
  EXPECT_FALSE(read_submitted_job_id(dir, 2).has_value());
  EXPECT_FALSE(read_submitted_job_id(dir, 10).has_value());
}

}  // namespace
}  // namespace colltune::slurm
