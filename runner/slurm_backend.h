// Runs a batch on a Slurm cluster: the whole batch becomes ONE sbatch job whose script runs every
// (configuration, repeat) back to back (a job costs 0.5-0.7 s on top of its runs here,
// bench/README.md "Slurm"; docs/reference/slurm-single-node.md §3.7). Each run writes its own files
// in a job folder on a filesystem shared with the compute nodes (slurm/job_folder.h); the backend
// polls squeue (with back-off, falling back to sacct / `sacct -c` once squeue forgets the job) and
// the folder, and reports each run as soon as its files are complete.
//
// Faults: a run that exits non-zero is tried again inside the job (BatchScriptSpec::attempts);
// failing twice the same way it is reported failed with that reason. A job that dies through no
// fault of its runs (NODE_FAIL, PREEMPTED, BOOT_FAIL) or hits its time limit is resubmitted with
// only the runs that did not finish (up to max_resubmits); the run that was going when the time
// limit struck is reported as a timeout; a run whose launcher reports that the job itself is
// gone (srun's "Node failure on ...") stops the script and is resubmitted, not blamed. A job
// cancelled outside colltune reports its unfinished runs as cancelled; CancelFlag scancels the
// job. An unreachable controller (slurmctld restart) is waited out for controller_timeout_s
// while results keep arriving through the folder; srun steps that a restarted controller keeps
// waiting are relaunched (srun --immediate + relaunch, see srun_step_wait_s).
//
// Every Slurm command runs through run_process with an argv vector and a timeout; every value in
// the script is quoted or validated (slurm/batch_script.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/backend.h"
#include "runner/osu_probe.h"
#include "slurm/batch_script.h"
#include "slurm/slurm_client.h"

namespace colltune {

enum class SlurmLauncher {
  srun,    // srun --mpi=<srun_mpi> (pmix: Debian's Open MPI has no PMI1/PMI2 support)
  mpirun,  // mpirun inside the allocation (reads the Slurm allocation itself)
};
std::string_view to_string(SlurmLauncher launcher);
std::optional<SlurmLauncher> parse_slurm_launcher(std::string_view text);  // "srun" | "mpirun"

struct SlurmBackendOptions {
  // OMB install or build folder holding osu_<collective>, visible from the compute nodes;
  // empty = the bundled benchmark.
  std::filesystem::path osu_dir;
  slurm::SlurmCommands commands;  // paths of sbatch, squeue, sacct, scancel, sinfo, scontrol, srun
  SlurmLauncher launcher = SlurmLauncher::srun;
  std::string srun_mpi = "pmix";
  // srun --immediate: a step that cannot start within this many seconds fails with "Requested
  // nodes are busy" and is launched again (within the run's timeout) instead of waiting for
  // srun's own retry timer, which after a slurmctld restart can be a minute or more. 0 = off.
  int srun_step_wait_s = 10;
  std::string mpirun = "mpirun";
  std::vector<std::string> launcher_extra_args;  // verbatim, e.g. {"--cpu-bind=cores"}
  std::string ompi_info = "ompi_info";

  std::string partition;  // [A-Za-z0-9_.-]+; empty = the cluster's default
  std::string account;
  std::string qos;
  bool exclusive = true;
  std::vector<std::string> sbatch_extra_args;  // site options, e.g. {"--constraint=ib"}

  // Parent of the per-batch job folders; must be shared with the compute nodes and contain only
  // directive-safe characters. Empty = $COLLTUNE_SLURM_JOB_ROOT, else ~/.colltune/slurm-jobs.
  std::filesystem::path job_root;
  bool keep_job_dirs = false;  // false: a folder whose runs all succeeded is removed
  // Admin's batch template (slurm/batch_script.h); empty = the built-in one.
  std::filesystem::path script_template;

  int attempts = 2;       // tries of a run that exits non-zero
  int kill_after_s = 10;  // SIGKILL grace after a run's timeout
  slurm::YieldPolicy yield = slurm::YieldPolicy::automatic;

  int time_limit_minutes = 0;      // > 0: use this instead of the computed limit
  int max_time_limit_minutes = 0;  // > 0: clamp the computed limit (a partition's MaxTime)
  double time_limit_margin = 0.1;
  double time_limit_allowance_s = 60;

  int max_resubmits = 2;  // resubmissions of unfinished runs after NODE_FAIL/PREEMPTED/TIMEOUT
  double poll_initial_s = 0.1;
  double poll_max_s = 2.0;
  double command_timeout_s = 30;      // each Slurm client command
  double controller_timeout_s = 600;  // give up when slurmctld stays unreachable this long
  double pending_timeout_s = 0;       // > 0: scancel a job still pending after this long
  double cancel_wait_s = 30;          // after scancel, wait this long for the job to end
};

class SlurmBackend : public Backend {
 public:
  // Throws std::invalid_argument for bad options (names, job root, template).
  explicit SlurmBackend(SlurmBackendOptions options);

  std::string name() const override { return "slurm"; }
  BackendInfo describe() override;
  void run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) override;
  double launch_overhead_s() const override { return 0.5; }
  // `ompi_info --param coll tuned --level 9 --parsable` run on the submitting host, which on a
  // cluster loads the same Open MPI as the compute nodes (same modules); empty on failure.
  std::string ompi_info_parsable() override;
  bool runs_real_open_mpi() const override { return true; }
  // The benchmark binary exists and, run alone on this (submitting) host, takes the arguments
  // every run will give it. A binary that cannot start here (another architecture) is not
  // refused: only an explicit rejection by the benchmark is.
  std::string preflight(const BenchmarkRequest& request) override;
  // The benchmark binary of the collective exists.
  std::string admit(const BenchmarkRequest& request) override;

  // True when `scontrol ping` says the controller is up (detail: the line it printed).
  bool controller_up(std::string* detail = nullptr);

  // The job folder of the most recent run() (for tests and diagnostics).
  const std::filesystem::path& last_job_dir() const { return last_job_dir_; }

  const SlurmBackendOptions& options() const { return options_; }

 private:
  std::string local_ompi_version();

  SlurmBackendOptions options_;
  OsuProbe osu_probe_;
  std::string template_text_;
  slurm::SlurmClient client_;
  // Distinct nodes of the partition (sinfo), asked once by admit(); nullopt until asked or when
  // sinfo failed (admit then leaves the check to the scheduler).
  std::optional<std::size_t> partition_nodes_;
  bool partition_nodes_asked_ = false;
  std::string host_;
  std::optional<std::string> ompi_version_;
  std::filesystem::path last_job_dir_;
};

// Options from JSON settings (the daemon's and the CLI's --backend-config), keys as the field
// names above: osu_dir, launcher ("srun"|"mpirun"), srun_mpi, srun_step_wait_s, mpirun,
// launcher_args [..], ompi_info, partition, account, qos, exclusive, sbatch_args [..], job_root,
// keep_job_dirs, script_template, attempts, kill_after_s, yield ("auto"|"always"|"never"),
// time_limit_minutes, max_time_limit_minutes, time_limit_margin, time_limit_allowance_s,
// max_resubmits, poll_initial_s, poll_max_s, command_timeout_s, controller_timeout_s,
// pending_timeout_s, cancel_wait_s, and "commands": {sbatch, squeue, sacct, scancel, sinfo,
// scontrol, srun} (paths of the Slurm binaries) or "slurm_bin_dir" (folder holding all of them).
// Throws std::invalid_argument for an unknown key or a value of the wrong type.
SlurmBackendOptions slurm_backend_options_from_json(const nlohmann::json& settings);

// The CommandRunner that runs Slurm commands with run_process.
slurm::CommandRunner process_command_runner();

}  // namespace colltune
