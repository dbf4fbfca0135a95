// The sbatch script of one batch: every benchmark run of the batch, one after the other, in one
// Slurm job (per-job overhead is about 1 s, a run about 0.5 s: docs/reference/slurm-single-node.md
// §3.7). Each run writes its own files in the job folder (job_folder.h), so a crash loses only that
// run.
//
// Every value is quoted with shell_quote or validated before it reaches the script; the
// launcher command lines arrive as argv vectors and are never re-split.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace colltune::slurm {

// When to export OMPI_MCA_mpi_yield_when_idle=1. Inside an allocation mpirun/srun see the
// granted slots, not the hardware cores, and busy-poll: a 4-rank run on 2 cores is then ~100x
// slower (docs/reference/slurm-single-node.md §5). `automatic` compares ranks per node with `nproc`
// on the node.
enum class YieldPolicy { automatic, always, never };

struct ScriptRun {
  std::string id;          // [A-Za-z0-9_.-]+, unique in the script; names the run's files
  double timeout_s = 120;  // the run is killed (status 124) after this
  std::map<std::string, std::string> env;  // set for this run only
  std::vector<std::string> argv;           // the launcher command line (srun ... / mpirun ...)
};

struct BatchScriptSpec {
  std::string job_name;   // [A-Za-z0-9_.-]+
  std::string partition;  // empty = the cluster's default
  std::string account;
  std::string qos;
  int nodes = 1;
  int ntasks = 4;
  int ntasks_per_node = 0;  // 0 = unset
  bool exclusive = true;    // benchmarks must not share nodes with other jobs
  int time_limit_minutes = 10;
  std::filesystem::path job_dir;  // absolute, directive-safe, visible from the compute nodes
  int attempts = 2;               // tries of a run that exits non-zero (a timeout is not retried)
  int kill_after_s = 10;          // SIGKILL this long after a run's timeout SIGTERM
  // A launch that fails with one of these strings in its stderr never started (e.g. srun's
  // "Requested nodes are busy"): it is launched again after relaunch_delay_s, within the run's
  // timeout, without counting as an attempt. Fixed strings, one line each.
  std::vector<std::string> relaunch_markers;
  int relaunch_delay_s = 2;
  // A run (not timed out; srun may exit 0 after a node failure) whose stderr contains one of
  // these lost the job itself (node failure, expired allocation): the script stops at once
  // (exit 3) leaving the run without .done, so that it is resubmitted rather than blamed, and
  // no later run is launched into a dying job.
  std::vector<std::string> job_gone_markers;
  // Slurm ends a job over its time limit only on its periodic check (about every 30 s, then
  // KillWait), and refuses new steps as soon as the limit has passed: wait this long for it.
  int job_gone_wait_s = 120;
  int ranks_per_node = 4;
  YieldPolicy yield = YieldPolicy::automatic;
  // Variables inherited from the submitting environment (sbatch --export=ALL) whose names start
  // with one of these are unset: a user's OMPI_MCA_coll_* would change what runs measure.
  std::vector<std::string> unset_env_prefixes = {"OMPI_MCA_coll"};
  std::map<std::string, std::string> env;  // exported for every run
  std::string ompi_info = "ompi_info";     // run once for provenance; empty = skip
  std::vector<ScriptRun> runs;
};

// When a launch finds the job's allocation gone (BatchScriptSpec::job_gone_markers) the script
// prints kJobGoneMessage, waits up to job_gone_wait_s for Slurm to end the job (so that it ends
// TIMEOUT or NODE_FAIL, as it really did, rather than FAILED), then exits kJobGoneExit.
inline constexpr int kJobGoneExit = 3;
inline constexpr std::string_view kJobGoneMessage = "lost the job's allocation";

// The default template. Placeholders, each exactly once: {{directives}} (the #SBATCH lines;
// only comments and blank lines may precede it), {{prologue}} (variables, environment, the
// colltune_run function), {{runs}} (one colltune_run line per run). An admin's template may add
// site lines (module load ...) between them.
std::string_view default_batch_template();

// Renders the script; throws std::invalid_argument naming the bad field or template problem.
std::string render_batch_script(const BatchScriptSpec& spec,
                                std::string_view template_text = default_batch_template());

// Checks a template (placeholders, shebang); throws std::invalid_argument.
void validate_batch_template(std::string_view template_text);

// A time limit that no well-behaved batch reaches: every attempt of every run may use its whole
// timeout plus the kill grace, plus a fixed allowance for the job's start, then `margin`
// (0.1 = 10 %) on top; rounded up to whole minutes, at least 1.
int time_limit_minutes_for(const std::vector<ScriptRun>& runs, int attempts, int kill_after_s,
                           double margin = 0.1, double fixed_allowance_s = 60);

// A time limit as sbatch's -t/--time reads it, in whole minutes (seconds round up): "M",
// "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S". Throws std::invalid_argument naming the text
// when it is none of these or is not positive ("UNLIMITED" is refused: a run must end).
int parse_time_limit_minutes(std::string_view text);

}  // namespace colltune::slurm
