// The run loop shared by backends that answer without running a job (sim, replay): every
// (config_index, repeat) of run_order() is reported once, with the provenance a real run would
// have (argv, MCA, host, times on a virtual clock), honouring cancel; the backend only says
// what OSU would have printed for each run. A run's benchmark time is launch overhead +
// (iterations + warmup) x Avg latency per size; past run_timeout_s it is a timeout that keeps
// the sizes finished in time. The OSU text goes through classify_osu_run like a real run's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "osu/osu_output.h"
#include "runner/backend.h"

namespace colltune::sim {

// What a virtual backend answers for one run.
struct VirtualAnswer {
  // Set: reported as is (unavailable, failed) with `error`; `rows` are kept in the result.
  std::optional<RunOutcome> outcome;
  std::string error;
  // Otherwise: the rows OSU would print for every size, in order...
  std::vector<OsuRow> rows;
  bool full = true;  // rows carry Min/Max/iterations (OSU -f)
  // ... or a job that aborted after its header (exit_code != 0, rows empty, stderr_text).
  int exit_code = 0;
  std::string stderr_text;
  std::string trace;  // appended to the provenance's stderr_excerpt
  // Optional, one per row: the coll/base functions that ran; the finished sizes are summarised
  // into the provenance ("colltune-sim: sizes 4-1024: bcast_intra_binomial ...").
  std::vector<std::string> row_traces;
};

struct VirtualBatchInfo {
  std::string backend;  // provenance backend, e.g. "sim"
  std::string host;     // provenance host, e.g. "sim:pise"
  std::string ompi_version;
  std::string osu_version = "5.6.2";
  double launch_overhead_s = 0;
  bool virtual_clock = true;  // false: wall-clock provenance times
  double pace = 0;            // sleep pace x benchmark time per run (demos)
};

// Runs the batch. `clock` is the backend's virtual clock (seconds since the epoch; 0 = start
// it at the wall clock) and advances by each run's benchmark time. `answer` is called for
// runs that are neither cancelled nor refused up front (`refuse_all`: every run unavailable
// with that error).
void run_virtual_batch(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel,
                       const VirtualBatchInfo& info, double& clock, const std::string& refuse_all,
                       const std::function<VirtualAnswer(std::size_t index, int repeat)>& answer);

}  // namespace colltune::sim
