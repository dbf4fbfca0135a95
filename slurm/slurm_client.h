// The Slurm client commands colltune uses (sbatch, squeue, sacct, scancel, sinfo, scontrol), run
// as argv vectors through a caller-supplied command runner, with their output parsed.
//
// Dependency direction: colltune_slurm knows nothing about how processes are started. The
// runner library (which owns run_process) depends on colltune_slurm and hands a CommandRunner
// to the client; colltune_slurm never links colltune_runner.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/job_state.h"
#include "slurm/slurm_output.h"

namespace colltune::slurm {

// Paths (or PATH names) of the Slurm binaries; configurable for sites with odd installs.
struct SlurmCommands {
  std::string sbatch = "sbatch";
  std::string squeue = "squeue";
  std::string sacct = "sacct";
  std::string scancel = "scancel";
  std::string sinfo = "sinfo";
  std::string scontrol = "scontrol";
  std::string srun = "srun";
};

struct CommandOutput {
  int exit_code = -1;  // -1 when killed or not started
  std::string stdout_text;
  std::string stderr_text;
  bool timed_out = false;
  std::string spawn_error;  // the program could not be started
  bool ok() const { return spawn_error.empty() && !timed_out && exit_code == 0; }
  // One line saying why it failed: spawn error, timeout, or the end of stderr.
  std::string failure() const;
};

// Runs argv (never through a shell), giving up after timeout_s.
using CommandRunner =
    std::function<CommandOutput(const std::vector<std::string>& argv, double timeout_s)>;

struct SubmitResult {
  std::string job_id;  // empty on failure
  std::string error;
  bool transient = false;  // the controller was unreachable or busy: worth trying again
  std::vector<std::string> argv;
  bool ok() const { return !job_id.empty(); }
};

struct JobStatus {
  std::string job_id;
  JobState state = JobState::pending;
  std::string reason;
  std::optional<JobExitCode> exit_code;  // known for ended jobs
  enum class Source { queue, accounting } source = Source::queue;
};

struct StatusQuery {
  std::optional<JobStatus> status;      // nullopt: see the two fields below
  bool controller_unreachable = false;  // squeue could not reach slurmctld (try again later)
  std::string error;                    // why there is no status
};

class SlurmClient {
 public:
  SlurmClient(SlurmCommands commands, CommandRunner runner, double command_timeout_s = 30);

  // sbatch --parsable [extra_args...] SCRIPT. The script carries its own #SBATCH directives;
  // extra_args are site options passed verbatim as separate argv items.
  SubmitResult submit(const std::filesystem::path& script,
                      const std::vector<std::string>& extra_args = {});

  // The job's state from squeue; once squeue has forgotten it (MinJobAge), from accounting
  // (sacct, or `sacct -c` when there is no slurmdbd). For an ended job still in squeue, the exit
  // code comes from `scontrol show job`.
  StatusQuery status(std::string_view job_id);

  // The job's accounting record: sacct, falling back to the job completion log (sacct -c) when
  // accounting storage is disabled. nullopt when neither knows the job.
  std::optional<AccountingRecord> accounting(std::string_view job_id, std::string* error = nullptr);

  // Jobs named `name` that squeue (every state) or accounting (sacct --name, or the job
  // completion log filtered here) knows, each once (squeue's view wins: it is current), in
  // ascending job id order. nullopt (with the reason) when neither could be asked.
  std::optional<std::vector<NamedJob>> find_jobs_by_name(std::string_view name,
                                                         std::string* error = nullptr);

  // `scontrol show job -o ID` as key/value pairs; nullopt when unknown or unreachable.
  std::optional<std::map<std::string, std::string>> show_job(std::string_view job_id);

  // scancel ID. False (with the reason) when scancel failed.
  bool cancel(std::string_view job_id, std::string* error = nullptr);

  // `scontrol ping` says the controller is UP.
  bool ping(std::string* detail = nullptr);

  // Nodes of a partition (all when empty); nullopt when sinfo failed.
  std::optional<std::vector<NodeInfo>> nodes(std::string_view partition = {},
                                             std::string* error = nullptr);

  const SlurmCommands& commands() const { return commands_; }

 private:
  CommandOutput run(const std::vector<std::string>& argv) const;

  SlurmCommands commands_;
  CommandRunner runner_;
  double timeout_s_;
  enum class AccountingMode {
    unknown,
    database,
    completion_log
  } accounting_mode_ = AccountingMode::unknown;
};

}  // namespace colltune::slurm
