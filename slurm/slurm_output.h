// Parsers of what the Slurm client commands print, in the machine-readable forms colltune asks
// for (fixed '|'-separated formats, not the human tables). Pure functions: no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/job_state.h"

namespace colltune::slurm {

// `sbatch --parsable` prints "<id>" or "<id>;<cluster>". nullopt unless the id is all digits.
std::optional<std::string> parse_sbatch_parsable(std::string_view stdout_text);

// One line of `squeue -h -t all -j ID -o '%i|%T|%r'`.
struct QueueEntry {
  std::string job_id;
  JobState state = JobState::pending;
  std::string reason;  // "None", "Priority", "Resources", "NonZeroExitCode", ...
};
inline constexpr std::string_view kSqueueFormat = "%i|%T|%r";
// The entry of `job_id` in squeue's output; nullopt when absent or unparseable.
std::optional<QueueEntry> parse_squeue(std::string_view stdout_text, std::string_view job_id);

// One record of `sacct [-c] -X -n -P -o <kSacctFields> -j ID`.
struct AccountingRecord {
  std::string job_id;
  std::string job_name;
  JobState state = JobState::pending;
  std::string state_text;  // as printed, e.g. "CANCELLED by 0"
  std::optional<JobExitCode> exit_code;
  std::string start;  // ISO time or "Unknown"/"None"
  std::string end;
  std::string elapsed;
  std::string node_list;
};
inline constexpr std::string_view kSacctFields =
    "jobid,jobname,state,exitcode,start,end,elapsed,nodelist";
// The last record of exactly `job_id` (job steps like "12.batch" are skipped; a requeued job
// can appear more than once in the job completion log). nullopt when absent.
std::optional<AccountingRecord> parse_sacct(std::string_view stdout_text, std::string_view job_id);

// A job found by name (a resumed batch looking for what an earlier process submitted): one line
// of `squeue -h -t all --name NAME -o kSqueueNamedFormat` or of
// `sacct [-c] -X -n -P -o kSacctNamedFields --name NAME`. `sacct -c` (the job completion log)
// ignores --name and prints every job, so the parsers keep only lines whose name is `name`.
struct NamedJob {
  std::string job_id;
  std::string name;
  JobState state = JobState::pending;
  std::string reason;                    // squeue's reason, sacct's state text
  std::optional<JobExitCode> exit_code;  // sacct only
  std::string work_dir;                  // the job's --chdir: colltune's job folder
};
inline constexpr std::string_view kSqueueNamedFormat = "%i|%j|%T|%r|%Z";
inline constexpr std::string_view kSacctNamedFields = "jobid,jobname,state,exitcode,workdir";
std::vector<NamedJob> parse_squeue_named(std::string_view stdout_text, std::string_view name);
std::vector<NamedJob> parse_sacct_named(std::string_view stdout_text, std::string_view name);

// `scontrol show job -o ID`: one line of Key=Value pairs. A value with spaces (Command=, Reason=)
// keeps the words up to the next Key= token.
std::map<std::string, std::string> parse_scontrol_record(std::string_view line);

// `scontrol ping`: true when a controller line says "is UP".
bool ping_says_up(std::string_view stdout_text);

// One node of `sinfo -h -N -o '%N|%T|%c|%E'`.
struct NodeInfo {
  std::string name;
  std::string state;  // "idle", "allocated", "drained", "draining", "down*", ...
  int cpus = 0;
  std::string reason;  // "none" when none
};
inline constexpr std::string_view kSinfoNodeFormat = "%N|%T|%c|%E";
std::vector<NodeInfo> parse_sinfo_nodes(std::string_view stdout_text);

// A Slurm host list ("ct-n[1-3,5]", "a,b", "node[01-02],gpu7") expanded to host names in
// order, zero padding kept ("node[01-02]" -> node01, node02). Empty for an empty text; nullopt
// when malformed (unbalanced brackets, a bad or reversed range, more than `max_hosts` names).
std::optional<std::vector<std::string>> expand_hostlist(std::string_view text,
                                                        std::size_t max_hosts = 65536);

// True when a client command's stderr says the job id is unknown to the controller (squeue or
// scontrol after MinJobAge purged it), as opposed to the controller being unreachable.
bool says_invalid_job_id(std::string_view stderr_text);

// True when sacct's stderr says there is no accounting database ("accounting storage is
// disabled"): the job completion log (`sacct -c`) is the only record.
bool says_accounting_disabled(std::string_view stderr_text);

// True for sbatch/squeue errors worth retrying: controller unreachable, timeouts, busy.
bool is_transient_slurm_error(std::string_view stderr_text);

}  // namespace colltune::slurm
