// Parsers of Slurm command output, on text captured from slurm-wlm 22.05.8 (the dev cluster).
#include "slurm/slurm_output.h"

#include <gtest/gtest.h>

#include "slurm/job_state.h"

namespace colltune::slurm {
namespace {

TEST(JobState, ParsesLongNamesCodesAndSacctDecorations) {
  EXPECT_EQ(parse_job_state("PENDING"), JobState::pending);
  EXPECT_EQ(parse_job_state("PD"), JobState::pending);
  EXPECT_EQ(parse_job_state("R"), JobState::running);
  EXPECT_EQ(parse_job_state("CG"), JobState::completing);
  EXPECT_EQ(parse_job_state("CD"), JobState::completed);
  EXPECT_EQ(parse_job_state("TO"), JobState::timeout);
  EXPECT_EQ(parse_job_state("NF"), JobState::node_fail);
  EXPECT_EQ(parse_job_state("PR"), JobState::preempted);
  EXPECT_EQ(parse_job_state("OOM"), JobState::out_of_memory);
  EXPECT_EQ(parse_job_state("CANCELLED by 0"), JobState::cancelled);
  EXPECT_EQ(parse_job_state("CANCELLED+"), JobState::cancelled);
  EXPECT_EQ(parse_job_state(" NODE_FAIL \n"), JobState::node_fail);
  EXPECT_EQ(parse_job_state("REQUEUE_HOLD"), JobState::requeued);
  EXPECT_FALSE(parse_job_state("").has_value());
  EXPECT_FALSE(parse_job_state("RUNNINGX").has_value());
  EXPECT_FALSE(parse_job_state("running").has_value());  // Slurm prints upper case only
}

TEST(JobState, EveryStateRoundTripsThroughItsName) {
  for (int i = 0; i <= static_cast<int>(JobState::special_exit); ++i) {
    auto state = static_cast<JobState>(i);
    EXPECT_EQ(parse_job_state(to_string(state)), state) << to_string(state);
  }
}

TEST(JobState, TerminalStatesAndWhatTheyMeanForUnfinishedRuns) {
  EXPECT_FALSE(is_terminal(JobState::pending));
  EXPECT_FALSE(is_terminal(JobState::running));
  EXPECT_FALSE(is_terminal(JobState::completing));
  EXPECT_FALSE(is_terminal(JobState::requeued));
  EXPECT_FALSE(is_terminal(JobState::suspended));
  EXPECT_TRUE(is_terminal(JobState::completed));
  EXPECT_TRUE(is_terminal(JobState::node_fail));

  EXPECT_EQ(job_ending(JobState::completed), JobEnding::finished);
  EXPECT_EQ(job_ending(JobState::node_fail), JobEnding::resubmit);
  EXPECT_EQ(job_ending(JobState::preempted), JobEnding::resubmit);
  EXPECT_EQ(job_ending(JobState::boot_fail), JobEnding::resubmit);
  EXPECT_EQ(job_ending(JobState::timeout), JobEnding::time_limit);
  EXPECT_EQ(job_ending(JobState::cancelled), JobEnding::cancelled);
  EXPECT_EQ(job_ending(JobState::failed), JobEnding::failed);
  EXPECT_EQ(job_ending(JobState::out_of_memory), JobEnding::failed);
  EXPECT_EQ(job_ending(JobState::deadline), JobEnding::failed);
}

TEST(JobExitCode, ParsesExitColonSignal) {
  EXPECT_EQ(parse_job_exit_code("3:0"), (JobExitCode{3, 0}));
  EXPECT_EQ(parse_job_exit_code("0:15"), (JobExitCode{0, 15}));
  EXPECT_EQ(to_string(JobExitCode{2, 9}), "2:9");
  EXPECT_FALSE(parse_job_exit_code("3").has_value());
  EXPECT_FALSE(parse_job_exit_code("a:0").has_value());
  EXPECT_FALSE(parse_job_exit_code("-1:0").has_value());
  EXPECT_FALSE(parse_job_exit_code(":0").has_value());
}

TEST(Sbatch, ParsableIdWithAndWithoutCluster) {
  EXPECT_EQ(parse_sbatch_parsable("12\n"), "12");
  EXPECT_EQ(parse_sbatch_parsable("4711;dev\n"), "4711");
  EXPECT_EQ(parse_sbatch_parsable("sbatch: warning: something\n98\n"), "98");
  EXPECT_FALSE(parse_sbatch_parsable("").has_value());
  EXPECT_FALSE(parse_sbatch_parsable("Submitted batch job 12\n").has_value());
}

TEST(Squeue, FindsTheJobLine) {
  auto entry = parse_squeue("1|FAILED|NonZeroExitCode\n", "1");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->state, JobState::failed);
  EXPECT_EQ(entry->reason, "NonZeroExitCode");
  // Another job's line (e.g. 11 when asking for 1) is not taken.
  EXPECT_FALSE(parse_squeue("11|RUNNING|None\n", "1").has_value());
  auto pending = parse_squeue("7|PENDING|ReqNodeNotAvail, UnavailableNodes:vm\n", "7");
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->state, JobState::pending);
  EXPECT_EQ(pending->reason, "ReqNodeNotAvail, UnavailableNodes:vm");
  EXPECT_FALSE(parse_squeue("", "1").has_value());
  EXPECT_FALSE(parse_squeue("1|WHATEVER|x\n", "1").has_value());
}

TEST(Sacct, TakesTheLastRecordOfExactlyThatJob) {
  const char* text =
      "10|demo|FAILED|2:0|2026-11-21T23:32:14|2026-11-21T23:32:14|00:00:00|vm\n"
      "10.batch|batch|FAILED|2:0|2026-11-21T23:32:14|2026-11-21T23:32:14|00:00:00|vm\n"
      "100|other|COMPLETED|0:0|x|y|00:00:01|vm\n";
  auto record = parse_sacct(text, "10");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->job_name, "demo");
  EXPECT_EQ(record->state, JobState::failed);
  EXPECT_EQ(record->exit_code, (JobExitCode{2, 0}));
  EXPECT_EQ(record->node_list, "vm");

  auto requeued = parse_sacct(
      "5|b|NODE_FAIL|0:0|s|e|00:00:03|vm\n5|b|CANCELLED by 0|0:15|s|e|00:00:01|None\n", "5");
  ASSERT_TRUE(requeued);
  EXPECT_EQ(requeued->state, JobState::cancelled);
  EXPECT_EQ(requeued->state_text, "CANCELLED by 0");
  EXPECT_FALSE(parse_sacct(text, "11").has_value());
  EXPECT_FALSE(parse_sacct("10|demo|FAILED\n", "10").has_value());  // too few fields
}

TEST(Scontrol, RecordKeepsValuesWithSpaces) {
  auto r = parse_scontrol_record(
      "JobId=1 JobName=probe UserId=root(0) JobState=FAILED Reason=NonZeroExitCode "
      "ExitCode=3:0 ReqB:S:C:T=0:0:*:* Socks/Node=* Command=/tmp/my dir/j.sh WorkDir=/tmp\n");
  EXPECT_EQ(r["JobId"], "1");
  EXPECT_EQ(r["JobState"], "FAILED");
  EXPECT_EQ(r["ExitCode"], "3:0");
  EXPECT_EQ(r["ReqB:S:C:T"], "0:0:*:*");
  EXPECT_EQ(r["Socks/Node"], "*");
  EXPECT_EQ(r["Command"], "/tmp/my dir/j.sh");
  EXPECT_EQ(r["WorkDir"], "/tmp");
}

TEST(Ping, UpOrNot) {
  EXPECT_TRUE(ping_says_up("Slurmctld(primary) at vm is UP\n"));
  EXPECT_FALSE(ping_says_up("Slurmctld(primary) at vm is DOWN\n"));
  EXPECT_FALSE(ping_says_up(""));
}

TEST(Sinfo, NodesWithReasons) {
  auto nodes = parse_sinfo_nodes("vm|idle|8|none\nn2|drained|16|maintenance | disk\n");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "vm");
  EXPECT_EQ(nodes[0].state, "idle");
  EXPECT_EQ(nodes[0].cpus, 8);
  EXPECT_EQ(nodes[1].state, "drained");
  EXPECT_EQ(nodes[1].reason, "maintenance | disk");
}

TEST(Hostlist, ExpandsRangesListsAndPadding) {
  using V = std::vector<std::string>;
  EXPECT_EQ(expand_hostlist("ct-n[1-3,5]"), (V{"ct-n1", "ct-n2", "ct-n3", "ct-n5"}));
  EXPECT_EQ(expand_hostlist("vm"), (V{"vm"}));
  EXPECT_EQ(expand_hostlist("a,b[08-10],c"), (V{"a", "b08", "b09", "b10", "c"}));
  EXPECT_EQ(expand_hostlist("rack[2]-x"), (V{"rack2-x"}));
  EXPECT_EQ(expand_hostlist(""), V{});
  EXPECT_EQ(expand_hostlist("n[3-1]"), std::nullopt);
  EXPECT_EQ(expand_hostlist("n[1-2"), std::nullopt);
  EXPECT_EQ(expand_hostlist("n1]"), std::nullopt);
  EXPECT_EQ(expand_hostlist("n[1-x]"), std::nullopt);
  EXPECT_EQ(expand_hostlist("a,,b"), std::nullopt);
  EXPECT_EQ(expand_hostlist("n[1-1000000]", 1000), std::nullopt);  // bounded
}

TEST(ErrorText, ClassifiesControllerAndJobErrors) {
  EXPECT_TRUE(says_invalid_job_id("slurm_load_jobs error: Invalid job id specified\n"));
  EXPECT_FALSE(says_invalid_job_id(
      "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"));
  EXPECT_TRUE(is_transient_slurm_error(
      "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"));
  EXPECT_TRUE(is_transient_slurm_error(
      "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n"));
  EXPECT_FALSE(is_transient_slurm_error(
      "sbatch: error: Batch job submission failed: Invalid partition name specified\n"));
  EXPECT_TRUE(says_accounting_disabled("Slurm accounting storage is disabled\n"));
  EXPECT_FALSE(says_accounting_disabled("sacct: error: Problem talking to the database\n"));
}

}  // namespace
}  // namespace colltune::slurm
