// The one interface between colltune and the world that runs benchmarks (cf. LevelDB's Env).
// A backend runs the batch of benchmark configurations it is given — it never chooses them —
// and reports every run, with its provenance, as soon as it finishes. Implementations: local
// (mpirun on this machine), slurm (sbatch on a cluster), sim (a cost model), replay (recorded
// landscapes). The campaign engine never knows which one it drives.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/tuning_config.h"
#include "osu/osu_output.h"

namespace colltune {

// A batch: every configuration x repeat of one (collective, placement, size range).
struct BenchmarkRequest {
  std::string tag;  // unique, caller-chosen id of this batch (campaign/batch), kept in provenance
  Collective collective = Collective::bcast;
  int comm_size = 4;  // total ranks
  int nodes = 1;
  int ppn = 0;  // ranks per node; 0 = comm_size / nodes
  std::int64_t min_size = 4;
  std::int64_t max_size = 1 << 20;
  int iterations = 100;               // OSU -i
  int warmup = 10;                    // OSU -x
  std::vector<TuningConfig> configs;  // algorithm 0 = Open MPI's default decision
  int repeats = 1;                    // runs of each configuration
  std::uint64_t order_seed = 0;       // runs are made in an order shuffled with this seed
  // Instead of shuffling: round r runs configs 0..n-1 when r is even and n-1..0 when odd
  // (A B / B A / A B ...), so that each configuration of round r runs next to configuration 0
  // of round r (the paired final choice puts the default there; optimizer/paired_test.h).
  bool alternating = false;
  double run_timeout_s = 120;  // a run still going after this is killed (outcome timeout)
  // Extra MCA parameters for every run of the batch, on top of the forcing ones (e.g.
  // coll_tuned_dynamic_rules_filename to run with a rules file loaded: use configs = {default}).
  std::map<std::string, std::string> extra_mca;
  // Extra environment for every rank (e.g. LD_PRELOAD of the algorithm tracer).
  std::map<std::string, std::string> extra_env;
  // When not empty, only these (config_index, repeat) runs are made (a job resumed after an
  // interruption); every run keeps its identity, so results and seeded noise are the same as
  // in an uninterrupted job.
  std::vector<std::pair<std::size_t, int>> only_runs;

  // Identity and resumption of a batch whose backend jobs outlive the caller (Slurm). Runtime
  // only: not part of the request's JSON. Backends whose runs end with the caller (local, sim,
  // replay) ignore these fields.
  //
  // `recorded_at`: when the caller recorded this batch (seconds since the epoch; 0 = not
  // recorded). With the tag it names the batch's state outside the caller (the Slurm job
  // folder), so that a later call for the same recorded batch finds what an earlier one left.
  double recorded_at = 0;
  // `resume`: an earlier call for this same (tag, recorded_at) may have submitted work that is
  // still queued, running, or finished with results not reported to this caller (the caller
  // was killed, or paused it). The backend must then submit nothing twice: it first looks for
  // that work (the backend job `resume_job_id` when the caller stored one, else by tag), reports
  // the requested runs that already finished from it, re-attaches to a job still pending or
  // running (reporting it through on_job_submitted and its runs as they finish), and submits
  // only runs that neither finished nor belong to a live job. Only the runs of only_runs (or all)
  // are reported, each exactly once, as for any run() call. Needs recorded_at.
  bool resume = false;
  std::string resume_job_id;
};

enum class RunOutcome {
  ok,           // parsed cleanly; every size measured
  failed,       // non-zero exit, MPI abort, or benchmark error
  timeout,      // killed after run_timeout_s (or the job's time limit)
  parse_error,  // exited 0 but the output could not be parsed
  cancelled,    // cancelled before or while running
  unavailable,  // the backend cannot run this configuration (e.g. not in a replay dataset)
};
inline constexpr RunOutcome kRunOutcomes[] = {RunOutcome::ok,        RunOutcome::failed,
                                              RunOutcome::timeout,   RunOutcome::parse_error,
                                              RunOutcome::cancelled, RunOutcome::unavailable};
std::string_view to_string(RunOutcome outcome);
std::optional<RunOutcome> parse_run_outcome(std::string_view text);

// Where a number came from: enough to rerun it by hand.
struct Provenance {
  std::string backend;                     // "local", "slurm", "sim", "replay"
  std::vector<std::string> argv;           // exact command line of the run
  std::map<std::string, std::string> mca;  // MCA parameters set for the run
  std::map<std::string, std::string> env;  // extra environment set for the run
  std::string host;                        // where the run was launched (a Slurm job's batch host)
  std::vector<std::string> hosts;  // every host the run's ranks were placed on (Slurm: the job's
                                   // nodes; every step spans them all); empty = just `host`
  std::string ompi_version;
  std::string benchmark;  // OSU header line, e.g. "OSU MPI Broadcast Latency Test v5.6.2"
  std::string job_id;     // backend job id (Slurm job id), empty when none
  double start_time = 0;  // seconds since the epoch
  double end_time = 0;
  // The benchmark's own time when the backend knows it better than the wall clock between
  // start_time and end_time: the sim and replay backends' modelled OSU time (launch + every
  // call of every size), whatever clock they stamp start/end with. 0 = not reported (local and
  // Slurm runs, older stores): the run took end_time - start_time.
  double benchmark_seconds = 0;
  int exit_status = 0;         // exit code, or 128+signal
  std::string stderr_excerpt;  // last lines of stderr (bounded)
};

// What a run cost in benchmark seconds (not multiplied by nodes): benchmark_seconds when
// reported, else end_time - start_time, 0 when neither is known.
double observed_seconds(const Provenance& provenance);

struct RunResult {
  std::string tag;               // the batch's tag
  std::size_t config_index = 0;  // index into BenchmarkRequest::configs
  TuningConfig config;
  int repeat = 0;  // 0-based
  RunOutcome outcome = RunOutcome::ok;
  std::string error;         // clear reason when outcome != ok
  std::vector<OsuRow> rows;  // measured sizes (a failed run may keep its earlier sizes)
  Provenance provenance;
};

// Receives results as they happen. Called from the thread that called Backend::run.
class RunSink {
 public:
  virtual ~RunSink() = default;
  // A backend job (e.g. a Slurm job) was submitted for the batch, or a resumed batch re-attached
  // to a job submitted earlier (BenchmarkRequest::resume); called before its results.
  virtual void on_job_submitted(const std::string& tag, const std::string& job_id) {
    (void)tag;
    (void)job_id;
  }
  // A backend job ended before all its runs did, through no fault of theirs (a node failed, the
  // job was preempted or hit its time limit), and its unfinished runs were submitted again:
  // `why` says how it ended. Called before on_job_submitted of the new job.
  virtual void on_job_resubmitted(const std::string& tag, const std::string& ended_job_id,
                                  const std::string& why) {
    (void)tag;
    (void)ended_job_id;
    (void)why;
  }
  // One run finished (in any outcome). Every (config_index, repeat) of the request is reported
  // exactly once unless run() throws.
  virtual void on_result(const RunResult& result) = 0;
};

// Cooperative cancellation shared between the caller and a running backend.
struct CancelFlag {
  std::atomic<bool> requested{false};
  bool cancelled() const { return requested.load(std::memory_order_relaxed); }
  void cancel() { requested.store(true, std::memory_order_relaxed); }
};

// Facts about the machine or cluster a backend runs on.
struct BackendInfo {
  std::string backend;
  std::string host;
  std::string ompi_version;  // empty when unknown
  int cores = 0;             // per node
  std::string benchmark;     // "bundled colltune-osu-bench" or the OMB path
  nlohmann::json extra = nlohmann::json::object();
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "local", "slurm", "sim", "replay".
  virtual std::string name() const = 0;

  // Describes the target. May run cheap commands (ompi_info); never runs a benchmark.
  virtual BackendInfo describe() = 0;

  // Runs every configuration x repeat of `request` and reports each run to `sink` exactly
  // once, in the order they finish. Returns when all runs are reported. When `cancel` is set,
  // runs not yet started are reported as cancelled and a running one is stopped (and reported
  // cancelled) promptly. Throws std::invalid_argument for a request it cannot accept at all
  // (bad sizes, comm size < 2); a failure of one run is a result, never an exception.
  virtual void run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) = 0;

  // Checks, without running a benchmark, that the backend can run `request` at all (e.g. the
  // benchmark binary exists). Empty when fine, else a clear reason. Campaigns call it for every
  // context before the first job, so a missing piece fails in seconds, not hours in.
  virtual std::string preflight(const BenchmarkRequest& request) {
    (void)request;
    return {};
  }

  // Checks, running nothing, that this backend can benchmark `request`'s collective at its
  // scale at all and sanely (the simulator models four collectives and bounds its memory; the
  // local backend runs at most a configured number of ranks per core). Empty when fine, else
  // the reason. Called for every context when a campaign is created (CLI and daemon), before
  // anything is stored, and again before a campaign runs.
  virtual std::string admit(const BenchmarkRequest& request) {
    (void)request;
    return {};
  }

  // The target's `ompi_info --param coll tuned --level 9 --parsable` output (to build its
  // AlgorithmTable); empty when the backend cannot tell (the caller then uses the built-in table).
  virtual std::string ompi_info_parsable() { return {}; }

  // True when runs execute the real Open MPI library, so that a rules file can be verified by
  // tracing which algorithm ran (local, slurm); false for models (sim, replay).
  virtual bool runs_real_open_mpi() const { return false; }

  // Measurements made per second of benchmark time cost this much extra per run (launch,
  // MPI_Init): used for cost accounting. Seconds.
  virtual double launch_overhead_s() const { return 0.4; }
};

// The runs of a request, (config_index, repeat) pairs, in the order a backend should make them:
// shuffled with request.order_seed so that drift does not favour one configuration, or
// alternating (request.alternating: A B / B A rounds for paired comparisons). With only_runs set,
// the same order restricted to those runs.
std::vector<std::pair<std::size_t, int>> run_order(const BenchmarkRequest& request);

// Checks a request; throws std::invalid_argument with a clear message.
void validate_request(const BenchmarkRequest& request);
// The same check for a preflight: validate_request's message, or empty when the request is fine.
std::string request_problem(const BenchmarkRequest& request);

void to_json(nlohmann::json& j, const Provenance& p);
void to_json(nlohmann::json& j, const BenchmarkRequest& r);
void from_json(const nlohmann::json& j, BenchmarkRequest& r);
void from_json(const nlohmann::json& j, Provenance& p);

}  // namespace colltune
