#include "runner/sim/virtual_runs.h"

#include <chrono>
#include <thread>

#include "core/iso_time.h"
#include "runner/local_backend.h"
#include "runner/mca.h"
#include "runner/process.h"
#include "runner/sim/osu_text.h"

namespace colltune::sim {
namespace {

// Sizes that ran the same coll/base functions, for a compact trace in the provenance.
std::string trace_summary(const std::vector<OsuRow>& rows, const std::vector<std::string>& traces,
                          std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count;) {
    std::size_t j = i;
    while (j + 1 < count && traces[j + 1] == traces[i]) ++j;
    out += "colltune-sim: sizes " + std::to_string(rows[i].size) + "-" +
           std::to_string(rows[j].size) + ": " + traces[i] + "\n";
    i = j + 1;
  }
  return out;
}

}  // namespace

void run_virtual_batch(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel,
                       const VirtualBatchInfo& info, double& clock, const std::string& refuse_all,
                       const std::function<VirtualAnswer(std::size_t, int)>& answer) {
  if (clock == 0) clock = unix_time_now();
  for (const auto& [index, repeat] : run_order(request)) {
    const TuningConfig& config = request.configs[index];
    RunResult result;
    result.tag = request.tag;
    result.config_index = index;
    result.config = config;
    result.repeat = repeat;
    auto mca = mca_for_config(request.collective, config);
    for (const auto& [key, value] : request.extra_mca) mca[key] = value;
    Provenance& prov = result.provenance;
    prov.backend = info.backend;
    prov.argv = osu_job_argv(request, mca);
    prov.mca = mca;
    prov.env = request.extra_env;
    prov.host = info.host;
    prov.ompi_version = info.ompi_version;
    prov.start_time = prov.end_time = info.virtual_clock ? clock : unix_time_now();

    if (cancel.cancelled()) {
      result.outcome = RunOutcome::cancelled;
      result.error = "cancelled before it started";
      sink.on_result(result);
      continue;
    }
    if (!refuse_all.empty()) {
      result.outcome = RunOutcome::unavailable;
      result.error = refuse_all;
      sink.on_result(result);
      continue;
    }
    VirtualAnswer a = answer(index, repeat);
    if (a.outcome) {
      result.outcome = *a.outcome;
      result.error = a.error;
      result.rows = a.rows;
      sink.on_result(result);
      continue;
    }

    // The sizes that finish within the time limit.
    ProcessResult process;
    double seconds = info.launch_overhead_s;
    std::size_t finished = 0;
    for (; finished < a.rows.size(); ++finished) {
      const double cost = (request.iterations + request.warmup) * a.rows[finished].avg_us * 1e-6;
      if (seconds + cost > request.run_timeout_s) break;
      seconds += cost;
    }
    std::string trace = a.trace;
    if (a.row_traces.size() == a.rows.size())
      trace += trace_summary(a.rows, a.row_traces, finished);
    if (finished < a.rows.size()) {
      a.rows.resize(finished);
      process.timed_out = true;
      process.signal = 9;
      seconds = request.run_timeout_s;
    } else {
      process.exit_code = a.exit_code;
    }
    process.stdout_text = format_osu_output(request.collective, a.rows, a.full, info.osu_version);
    process.stderr_text = a.stderr_text;
    process.elapsed_s = seconds;

    if (info.pace > 0) {
      // Demo mode: take (a fraction of) the time the run would take; stop promptly on cancel.
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::duration<double>(info.pace * seconds);
      while (std::chrono::steady_clock::now() < until && !cancel.cancelled())
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (cancel.cancelled()) process.stopped = true;
    }

    classify_osu_run(process, result);
    if (!trace.empty()) prov.stderr_excerpt += (prov.stderr_excerpt.empty() ? "" : "\n") + trace;
    prov.benchmark_seconds = seconds;
    if (info.virtual_clock) {
      clock += seconds;
      prov.end_time = clock;
    } else {
      prov.end_time = unix_time_now();
    }
    sink.on_result(result);
  }
}

}  // namespace colltune::sim
