// SlurmClient against scripted command runners: which commands it runs (argv, never a shell) and
// how it falls back from squeue to sacct to `sacct -c`. The real commands are exercised by the
// integration tests on the dev cluster.
#include "slurm/slurm_client.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace colltune::slurm {
namespace {

// Answers each command by its program name; records every argv.
struct ScriptedSlurm {
  std::vector<std::vector<std::string>> calls;
  std::map<std::string, std::vector<CommandOutput>> answers;  // consumed front to back

  CommandRunner runner() {
    return [this](const std::vector<std::string>& argv, double) {
      calls.push_back(argv);
      auto& queue = answers[argv.at(0)];
      if (queue.empty()) return CommandOutput{.exit_code = 1, .stderr_text = "unexpected call\n"};
      auto out = queue.front();
      queue.erase(queue.begin());
      return out;
    };
  }
};

CommandOutput ok(std::string out) { return {.exit_code = 0, .stdout_text = std::move(out)}; }
CommandOutput err(std::string text) { return {.exit_code = 1, .stderr_text = std::move(text)}; }

TEST(SlurmClient, SubmitsWithParsableAndSiteArgumentsAsSeparateWords) {
  ScriptedSlurm slurm;
  slurm.answers["/opt/slurm/bin/sbatch"] = {ok("42;dev\n")};
  SlurmCommands commands;
  commands.sbatch = "/opt/slurm/bin/sbatch";
  SlurmClient client(commands, slurm.runner());
  auto result = client.submit("/jobs/b1/job-1.sh", {"--constraint=ib&fast", "--gres=gpu:1"});
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.job_id, "42");
  EXPECT_EQ(slurm.calls.at(0),
            (std::vector<std::string>{"/opt/slurm/bin/sbatch", "--parsable", "--constraint=ib&fast",
                                      "--gres=gpu:1", "/jobs/b1/job-1.sh"}));
}

TEST(SlurmClient, SubmitFailuresSayWhyAndWhetherToRetry) {
  ScriptedSlurm slurm;
  slurm.answers["sbatch"] = {
      err("sbatch: error: invalid partition specified: nosuch\nsbatch: error: Batch job "
          "submission failed: Invalid partition name specified\n"),
      err("sbatch: error: Batch job submission failed: Unable to contact slurm controller "
          "(connect failure)\n")};
  SlurmClient client({}, slurm.runner());
  auto bad = client.submit("/j.sh");
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(bad.transient);
  EXPECT_NE(bad.error.find("Invalid partition name"), std::string::npos) << bad.error;
  auto down = client.submit("/j.sh");
  EXPECT_FALSE(down.ok());
  EXPECT_TRUE(down.transient);
}

TEST(SlurmClient, StatusFromSqueueWithExitCodeOnceEnded) {
  ScriptedSlurm slurm;
  slurm.answers["squeue"] = {ok("9|RUNNING|None\n"), ok("9|FAILED|NonZeroExitCode\n")};
  slurm.answers["scontrol"] = {ok("JobId=9 JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0\n")};
  SlurmClient client({}, slurm.runner());
  auto running = client.status("9");
  ASSERT_TRUE(running.status);
  EXPECT_EQ(running.status->state, JobState::running);
  EXPECT_FALSE(running.status->exit_code.has_value());
  EXPECT_EQ(slurm.calls.at(0),
            (std::vector<std::string>{"squeue", "-h", "-t", "all", "-j", "9", "-o", "%i|%T|%r"}));
  auto failed = client.status("9");
  ASSERT_TRUE(failed.status);
  EXPECT_EQ(failed.status->state, JobState::failed);
  EXPECT_EQ(failed.status->exit_code, (JobExitCode{3, 0}));
  EXPECT_EQ(failed.status->source, JobStatus::Source::queue);
}

TEST(SlurmClient, ForgottenJobsComeFromTheCompletionLogWithoutSlurmdbd) {
  ScriptedSlurm slurm;
  slurm.answers["squeue"] = {err("slurm_load_jobs error: Invalid job id specified\n"),
                             err("slurm_load_jobs error: Invalid job id specified\n")};
  slurm.answers["sacct"] = {err("Slurm accounting storage is disabled\n"),
                            ok("3|b|TIMEOUT|0:0|s|e|00:01:07|vm\n"),
                            ok("4|b|CANCELLED by 0|0:0|s|e|00:00:01|vm\n")};
  SlurmClient client({}, slurm.runner());
  auto first = client.status("3");
  ASSERT_TRUE(first.status) << first.error;
  EXPECT_EQ(first.status->state, JobState::timeout);
  EXPECT_EQ(first.status->source, JobStatus::Source::accounting);
  // sacct, then sacct -c; the second query goes to -c directly.
  ASSERT_EQ(slurm.calls.size(), 3u);
  EXPECT_EQ(slurm.calls[1].at(1), "-X");
  EXPECT_EQ(slurm.calls[2].at(1), "-c");
  auto second = client.status("4");
  ASSERT_TRUE(second.status);
  EXPECT_EQ(second.status->state, JobState::cancelled);
  EXPECT_EQ(slurm.calls.back().at(1), "-c");
}

TEST(SlurmClient, UnreachableControllerIsNotAnUnknownJob) {
  ScriptedSlurm slurm;
  slurm.answers["squeue"] = {
      err("slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n")};
  SlurmClient client({}, slurm.runner());
  auto query = client.status("5");
  EXPECT_FALSE(query.status);
  EXPECT_TRUE(query.controller_unreachable);
  EXPECT_NE(query.error.find("Unable to contact"), std::string::npos);
  EXPECT_EQ(slurm.calls.size(), 1u);  // no sacct call: the job may well be running
}

TEST(SlurmClient, CancelPingAndNodes) {
  ScriptedSlurm slurm;
  slurm.answers["scancel"] = {
      ok(""), err("scancel: error: Kill job error on job id 8: Invalid job id specified\n")};
  slurm.answers["scontrol"] = {
      ok("Slurmctld(primary) at vm is UP\n"),
      {.exit_code = 1, .stdout_text = "Slurmctld(primary) at vm is DOWN\n"}};
  slurm.answers["sinfo"] = {ok("vm|idle|8|none\n")};
  SlurmClient client({}, slurm.runner());
  EXPECT_TRUE(client.cancel("7"));
  std::string error;
  EXPECT_FALSE(client.cancel("8", &error));
  EXPECT_NE(error.find("Invalid job id"), std::string::npos);
  EXPECT_TRUE(client.ping());
  std::string detail;
  EXPECT_FALSE(client.ping(&detail));
  EXPECT_NE(detail.find("DOWN"), std::string::npos);
  auto nodes = client.nodes("debug");
  ASSERT_TRUE(nodes);
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ(slurm.calls.back(),
            (std::vector<std::string>{"sinfo", "-h", "-N", "-o", "%N|%T|%c|%E", "-p", "debug"}));
}

TEST(CommandOutput, FailureNamesTheCause) {
  EXPECT_EQ((CommandOutput{.spawn_error = "program not found: sbatch"}).failure(),
            "program not found: sbatch");
  EXPECT_EQ((CommandOutput{.timed_out = true}).failure(), "timed out");
  EXPECT_EQ((CommandOutput{.exit_code = 2, .stderr_text = "a\nlast words\n\n"}).failure(),
            "last words");
  EXPECT_EQ((CommandOutput{.exit_code = 2}).failure(), "exit status 2");
}

// Recorded on the dev cluster (jobcomp/filetxt, no slurmdbd): `sacct -c` ignores --name and
// prints every job of the completion log, steps excluded by -X.
constexpr std::string_view kCompletionLogByName =
    "141|colltune-ct-c1-x2-remeasure-default1|COMPLETED|0:0|/root/.colltune/slurm-jobs/"
    "ct-c1-x2-remeasure-default1-20261122-032346-10899-11\n"
    "150|colltune-ct-c1-x1-search1|NODE_FAIL|0:0|/tmp/a/ct-c1-x1-search1-20261122-040000-000\n"
    "151|colltune-ct-c1-x1-search1|CANCELLED by 0|0:15|/tmp/b/ct-c1-x1-search1-20261122-040100-5\n"
    "151|colltune-ct-c1-x1-search1|TIMEOUT|0:0|/tmp/b/ct-c1-x1-search1-20261122-040100-5\n"
    "152.batch|colltune-ct-c1-x1-search1|COMPLETED|0:0|/tmp/b\n";
// `squeue -h -t all --name=colltune-probe -o '%i|%j|%T|%r|%Z'`, recorded.
constexpr std::string_view kSqueueByName = "144|colltune-probe|PENDING|None|/tmp\n";

TEST(SlurmOutput, JobsByNameKeepOnlyThatNameAndTheLastRecordOfARequeuedJob) {
  auto jobs = parse_sacct_named(kCompletionLogByName, "colltune-ct-c1-x1-search1");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job_id, "150");
  EXPECT_EQ(jobs[0].state, JobState::node_fail);
  EXPECT_EQ(jobs[0].work_dir, "/tmp/a/ct-c1-x1-search1-20261122-040000-000");
  EXPECT_EQ(jobs[1].job_id, "151");
  EXPECT_EQ(jobs[1].state, JobState::timeout);
  ASSERT_TRUE(jobs[1].exit_code.has_value());
  EXPECT_TRUE(parse_sacct_named(kCompletionLogByName, "colltune-other").empty());
  // A name is matched whole, not as a prefix.
  EXPECT_TRUE(parse_sacct_named(kCompletionLogByName, "colltune-ct-c1-x1-search").empty());

  auto queued = parse_squeue_named(kSqueueByName, "colltune-probe");
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].job_id, "144");
  EXPECT_EQ(queued[0].state, JobState::pending);
  EXPECT_EQ(queued[0].work_dir, "/tmp");
  EXPECT_TRUE(parse_squeue_named("garbage\n\n", "colltune-probe").empty());
}

TEST(SlurmClient, FindsJobsByNameInTheCompletionLogAndTakesLiveStatesFromSqueue) {
  ScriptedSlurm slurm;
  slurm.answers["sacct"] = {err("Slurm accounting storage is disabled\n"),
                            ok(std::string(kCompletionLogByName))};
  // Job 153 is still pending (not in the completion log yet); 151 is known to both.
  slurm.answers["squeue"] = {
      ok("153|colltune-ct-c1-x1-search1|PENDING|Priority|/tmp/b/ct-c1-x1-search1-x\n")};
  SlurmClient client({}, slurm.runner());
  std::string error;
  auto jobs = client.find_jobs_by_name("colltune-ct-c1-x1-search1", &error);
  ASSERT_TRUE(jobs.has_value()) << error;
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ(jobs->at(0).job_id, "150");
  EXPECT_EQ(jobs->at(2).job_id, "153");
  EXPECT_EQ(jobs->at(2).state, JobState::pending);
  // Names travel as one argv word (--name=...), never through a shell.
  ASSERT_EQ(slurm.calls.size(), 3u);
  EXPECT_EQ(slurm.calls[1].at(1), "-c");
  EXPECT_EQ(slurm.calls[1].back(), "--name=colltune-ct-c1-x1-search1");
  EXPECT_EQ(slurm.calls[2].at(0), "squeue");
  EXPECT_NE(
      std::find(slurm.calls[2].begin(), slurm.calls[2].end(), "--name=colltune-ct-c1-x1-search1"),
      slurm.calls[2].end());

  // Neither command answers: no list, and the reason.
  ScriptedSlurm down;
  down.answers["sacct"] = {err("sacct: error: slurm_persist_conn_open_without_init\n")};
  down.answers["squeue"] = {err("slurm_load_jobs error: Unable to contact slurm controller\n")};
  SlurmClient unreachable({}, down.runner());
  EXPECT_FALSE(unreachable.find_jobs_by_name("colltune-x", &error).has_value());
  EXPECT_NE(error.find("Unable to contact"), std::string::npos) << error;
}

}  // namespace
}  // namespace colltune::slurm
