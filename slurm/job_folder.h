// The folder one batch's Slurm job works in, shared between the submitting host and the compute
// nodes. The generated script writes, and the backend reads:
//
//   <job_dir>/job-<k>.sh            the k-th submitted script (k = 1, 2, ... on resubmission)
//   <job_dir>/job-<k>.id            the Slurm job id sbatch gave it (written by the backend)
//   <job_dir>/slurm-<jobid>.out     the job's own stdout/stderr (Slurm's --output)
//   <job_dir>/node.info             key=value facts of the batch host: job_id, host, cores,
//                                   yield_when_idle, ompi, nodelist (the job's nodes, as
//                                   Slurm's host list; written once per job)
//   <job_dir>/runs/<id>.a<n>.start  "<epoch seconds> <host>" when attempt n of run <id> starts
//   <job_dir>/runs/<id>.a<n>.out    its stdout / .err its stderr
//   <job_dir>/runs/<id>.a<n>.end    "<exit status> <epoch seconds>" when it ends
//   <job_dir>/runs/<id>.done        "<attempts>", renamed into place after the last attempt
//
// A run counts as finished only once <id>.done exists, so a reader never sees half a result.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace colltune::slurm {

inline constexpr std::string_view kRunsSubdir = "runs";
inline constexpr std::string_view kNodeInfoFile = "node.info";

struct AttemptRecord {
  int attempt = 1;
  bool finished = false;  // the .end file exists
  int exit_status = -1;   // shell status: exit code, 124 = timed out, 128+N = signal N
  double start_time = 0;  // seconds since the epoch; 0 when unknown
  double end_time = 0;
  std::string host;
  std::string stdout_text;
  std::string stderr_text;
  bool output_truncated = false;
};

struct RunRecord {
  std::string id;
  bool done = false;                    // <id>.done exists
  std::vector<AttemptRecord> attempts;  // attempts whose .start exists, in order
  bool started() const { return !attempts.empty(); }
};

// Reads what is on disk for run `id`. When done, exactly the attempts named by <id>.done are
// read; otherwise every started attempt (a crash or cancel may leave one without .end).
RunRecord read_run(const std::filesystem::path& job_dir, std::string_view id,
                   std::size_t max_output_bytes = 16 << 20);

// True when <id>.done exists (cheap check for polling).
bool run_is_done(const std::filesystem::path& job_dir, std::string_view id);

struct NodeFacts {
  std::string job_id;
  std::string host;
  int cores = 0;
  bool yield_when_idle = false;
  std::string ompi;       // first line of `ompi_info --version`, e.g. "Open MPI v4.1.4"
  std::string node_list;  // $SLURM_JOB_NODELIST, e.g. "ct-n[1-2]"; empty when unknown
};
// node.info, or nullopt when it is absent (the job has not started yet).
std::optional<NodeFacts> read_node_facts(const std::filesystem::path& job_dir);

// The folder of a recorded batch (BenchmarkRequest::recorded_at > 0):
// <root>/<tag, sanitized>-<recorded_at as UTC YYYYmmdd-HHMMSS-mmm>. The same for every call
// about the same recorded batch, so a resumed call finds what an earlier process left, and
// distinct for two stores that happen to use the same tag.
std::filesystem::path recorded_job_folder(const std::filesystem::path& root, std::string_view tag,
                                          double recorded_at);

// Submission numbers k of the job-<k>.sh scripts in the folder, ascending (empty when none or
// no folder).
std::vector<int> submitted_scripts(const std::filesystem::path& job_dir);

// The job id written to job-<k>.id, when present and all digits.
std::optional<std::string> read_submitted_job_id(const std::filesystem::path& job_dir,
                                                 int submission);
std::filesystem::path job_id_path(const std::filesystem::path& job_dir, int submission);

// The file name of the k-th script and of a job's Slurm output.
std::filesystem::path script_path(const std::filesystem::path& job_dir, int submission);
std::filesystem::path slurm_output_path(const std::filesystem::path& job_dir,
                                        std::string_view job_id);

// Seconds since the epoch as the script writes them ("1700000000.123456", also with a ','
// decimal separator, as bash's EPOCHREALTIME prints it in some locales). nullopt when not a
// number.
std::optional<double> parse_epoch_seconds(std::string_view text);

}  // namespace colltune::slurm
