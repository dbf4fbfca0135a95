// Slurm job states as squeue, sacct and scontrol print them, and what each one means for the
// runs of a batch (docs/reference/slurm-single-node.md §4).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace colltune::slurm {

enum class JobState {
  pending,
  running,
  suspended,
  completing,
  configuring,
  requeued,  // REQUEUED / REQUEUE_FED / REQUEUE_HOLD: going back to pending
  resizing,
  stopped,
  signaling,
  stage_out,
  completed,
  failed,
  cancelled,
  timeout,
  node_fail,
  preempted,
  boot_fail,
  deadline,
  out_of_memory,
  revoked,
  special_exit,
};

std::string_view to_string(JobState state);  // Slurm's long name, e.g. "NODE_FAIL"

// Parses a long name ("RUNNING", "CANCELLED by 0", "CANCELLED+") or a squeue compact code
// ("PD", "R", "CG", "CD", "F", "CA", "TO", "NF", "PR", "OOM", ...). nullopt when unknown.
std::optional<JobState> parse_job_state(std::string_view text);

// True once the job has ended for good (it will not run again under this id).
bool is_terminal(JobState state);

// What a batch should do about runs that did not finish when the job ended in `state`.
enum class JobEnding {
  finished,    // the script ran to its end (COMPLETED): a missing run is an error
  resubmit,    // the job died through no fault of the runs (node failure, preemption, boot
               // failure): submit the unfinished runs again
  time_limit,  // TIMEOUT: the run in progress timed out; the ones never started may go again
  cancelled,   // cancelled (scancel, by us or by someone else)
  failed,      // the script itself failed (FAILED, OUT_OF_MEMORY, DEADLINE, ...)
};
JobEnding job_ending(JobState terminal_state);

// Exit code of a job as Slurm prints it: "exit:signal".
struct JobExitCode {
  int exit = 0;
  int signal = 0;
  auto operator<=>(const JobExitCode&) const = default;
};
std::optional<JobExitCode> parse_job_exit_code(std::string_view text);  // "3:0"
std::string to_string(const JobExitCode& code);

}  // namespace colltune::slurm
