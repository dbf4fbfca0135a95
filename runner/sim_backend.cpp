#include "runner/sim_backend.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "runner/local_backend.h"
#include "runner/mca.h"
#include "runner/process.h"
#include "runner/sim/collective_schedules.h"
#include "runner/sim/noise.h"
#include "runner/sim/osu_text.h"

namespace colltune {

namespace {

double wall_clock_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Sizes that ran the same coll/base functions, for a compact trace in the provenance.
std::string trace_summary(const std::vector<std::pair<std::int64_t, std::string>>& traces) {
  std::string out;
  for (std::size_t i = 0; i < traces.size();) {
    std::size_t j = i;
    while (j + 1 < traces.size() && traces[j + 1].second == traces[i].second) ++j;
    out += "colltune-sim: sizes " + std::to_string(traces[i].first) + "-" +
           std::to_string(traces[j].first) + ": " + traces[i].second + "\n";
    i = j + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

SimBackend::SimBackend(SimBackendOptions options)
    : SimBackend(sim::load_profile(options.profile, options.profile_dirs), options) {}

SimBackend::SimBackend(sim::ClusterProfile profile, SimBackendOptions options)
    : options_(std::move(options)) {
  if (options_.pace < 0) throw std::invalid_argument("sim pace must be >= 0");
  noise_ = options_.noise.value_or(profile.noise);
  model_ = std::make_unique<sim::SimModel>(std::move(profile), options_.max_messages_per_call);
}

double SimBackend::launch_overhead_s() const { return model_->profile().launch_overhead_s; }

BackendInfo SimBackend::describe() {
  const auto& profile = model_->profile();
  BackendInfo info;
  info.backend = "sim";
  info.host = "sim:" + profile.name;
  info.ompi_version = profile.ompi_version;
  info.cores = profile.cores_per_node;
  info.benchmark = "simulated OSU " + profile.osu_version;
  info.extra = {{"profile", profile.to_json()},
                {"nodes", profile.nodes},
                {"seed", options_.seed},
                {"noise", noise_.to_json()},
                {"virtual_clock", options_.virtual_clock},
                {"modelled_collectives", {"bcast", "reduce", "allreduce", "gather"}}};
  return info;
}

void SimBackend::run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) {
  validate_request(request);
  const auto& profile = model_->profile();
  const sim::Placement placement = profile.placement(request.comm_size, request.nodes, request.ppn);
  const auto sizes = sim::osu_message_sizes(request.collective, request.min_size, request.max_size);

  // Reasons every run of the batch is unavailable.
  std::string unavailable;
  if (!sim::sim_models(request.collective))
    unavailable = "the simulator models bcast, reduce, allreduce and gather, not " +
                  std::string(colltune::name(request.collective));
  for (const auto& [key, value] : request.extra_mca) {
    // Parameters that would change which collective code runs (a rules file, another forced
    // algorithm, another component list) cannot be simulated; repeating the forcing ones can.
    const auto base = base_mca();
    const auto same = base.find(key);
    if ((key == "coll" || key.rfind("coll_tuned_", 0) == 0) &&
        (same == base.end() || same->second != value))
      unavailable = "the simulator cannot apply MCA parameter " + key + "=" + value +
                    " (it models one forced configuration or the fixed decision)";
  }

  if (clock_ == 0) clock_ = wall_clock_now();
  const std::string host = "sim:" + profile.name;
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
    prov.backend = "sim";
    prov.argv = sim::osu_job_argv(request, mca);
    prov.mca = mca;
    prov.env = request.extra_env;
    prov.host = host;
    prov.ompi_version = profile.ompi_version;
    const double start = options_.virtual_clock ? clock_ : wall_clock_now();
    prov.start_time = prov.end_time = start;

    if (cancel.cancelled()) {
      result.outcome = RunOutcome::cancelled;
      result.error = "cancelled before it started";
      sink.on_result(result);
      continue;
    }
    if (!unavailable.empty()) {
      result.outcome = RunOutcome::unavailable;
      result.error = unavailable;
      sink.on_result(result);
      continue;
    }

    ProcessResult process;
    std::vector<OsuRow> rows;
    std::vector<std::pair<std::int64_t, std::string>> traces;
    double seconds = profile.launch_overhead_s;
    sim::RunNoise noise(
        noise_, sim::mix_seed(sim::mix_seed(sim::mix_seed(options_.seed, request.tag), index),
                              static_cast<std::uint64_t>(repeat)));
    try {
      for (std::int64_t size : sizes) {
        const sim::Measurement m = model_->measure(request.collective, placement, config, size);
        const double f = noise.factor(size);
        OsuRow row;
        row.size = size;
        row.avg_us = m.avg_us * f;
        row.min_us = m.min_us * f;
        row.max_us = m.max_us * f;
        row.iterations = request.iterations;
        const double cost = (request.iterations + request.warmup) * row.avg_us * 1e-6;
        if (seconds + cost > request.run_timeout_s) {
          process.timed_out = true;
          break;
        }
        seconds += cost;
        rows.push_back(row);
        traces.emplace_back(size, join(m.trace, " -> "));
      }
      process.stdout_text =
          sim::format_osu_output(request.collective, rows, true, profile.osu_version);
      if (process.timed_out) {
        process.signal = 9;
        seconds = request.run_timeout_s;
      } else {
        process.exit_code = 0;
      }
    } catch (const sim::AlgorithmOutOfRange& e) {
      // Open MPI returns MPI_ERR_ARG at the first call; the job aborts after the header.
      process.stdout_text =
          sim::format_osu_output(request.collective, {}, true, profile.osu_version);
      process.stderr_text = sim::mpi_abort_banner(request.collective, "MPI_ERR_ARG",
                                                  "invalid argument of some other kind", host);
      process.exit_code = 13;
      traces.emplace_back(sizes.front(), e.what());
    } catch (const sim::ScheduleTooLarge& e) {
      result.outcome = RunOutcome::unavailable;
      result.error = std::string(e.what()) + " (more than " +
                     std::to_string(options_.max_messages_per_call) + " messages per call)";
      sink.on_result(result);
      continue;
    } catch (const std::invalid_argument& e) {
      result.outcome = RunOutcome::unavailable;
      result.error = e.what();
      sink.on_result(result);
      continue;
    } catch (const std::exception& e) {
      // A schedule that cannot complete is a simulator defect; report it, keep the batch going.
      result.outcome = RunOutcome::failed;
      result.error = std::string("simulation failed: ") + e.what();
      sink.on_result(result);
      continue;
    }
    process.elapsed_s = seconds;

    if (options_.pace > 0) {
      // Demo mode: take (a fraction of) the time the run would take; stop promptly on cancel.
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.pace * seconds);
      while (std::chrono::steady_clock::now() < until && !cancel.cancelled())
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (cancel.cancelled()) process.stopped = true;
    }

    classify_osu_run(process, result);
    const std::string trace = trace_summary(traces);
    prov.stderr_excerpt += (prov.stderr_excerpt.empty() ? "" : "\n") + trace;
    if (options_.virtual_clock) {
      clock_ += seconds;
      prov.end_time = clock_;
    } else {
      prov.end_time = wall_clock_now();
    }
    sink.on_result(result);
  }
}

}  // namespace colltune
