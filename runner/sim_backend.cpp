#include "runner/sim_backend.h"

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "runner/mca.h"
#include "runner/sim/collective_schedules.h"
#include "runner/sim/noise.h"
#include "runner/sim/osu_text.h"
#include "runner/sim/virtual_runs.h"

namespace colltune {

namespace {

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

double sim_memory_estimate_mb(int comm_size) {
  // Measured (tune, bcast, 4:1M, 2 threads): 166 MiB at 10^3 ranks, 935 MiB at 10^4, i.e.
  // about 85 KiB per rank over a fixed ~80 MiB; rounded up to keep the estimate conservative.
  constexpr double kFixedMb = 100;
  constexpr double kPerRankMb = 90.0 / 1024;
  return kFixedMb + kPerRankMb * comm_size;
}

std::string SimBackend::admit(const BenchmarkRequest& request) {
  if (!sim::sim_models(request.collective))
    return "the simulator models bcast, reduce, allreduce and gather, not " +
           std::string(colltune::name(request.collective));
  const double estimate = sim_memory_estimate_mb(request.comm_size);
  if (estimate > options_.max_memory_mb)
    return "simulating " + std::to_string(request.comm_size) + " ranks needs about " +
           std::to_string(static_cast<long long>(estimate)) + " MiB, more than the sim backend's " +
           std::to_string(static_cast<long long>(options_.max_memory_mb)) +
           " MiB cap (setting max_memory_mb)";
  return {};
}

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

void SimBackend::prefetch(const BenchmarkRequest& request, const sim::Placement& placement,
                          const std::vector<std::int64_t>& sizes) const {
  int threads = options_.threads > 0
                    ? options_.threads
                    : std::min(8, static_cast<int>(std::thread::hardware_concurrency()));
  if (threads < 2) return;
  std::vector<std::pair<TuningConfig, std::int64_t>> cells;
  for (const auto& config : request.configs)
    for (std::int64_t size : sizes) cells.emplace_back(config, size);
  if (cells.size() < 2) return;
  threads = std::min<int>(threads, static_cast<int>(cells.size()));
  // The largest sizes cost the most: hand them out first.
  std::stable_sort(cells.begin(), cells.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next++) < cells.size();) {
      try {
        model_->measure(request.collective, placement, cells[i].first, cells[i].second);
      } catch (const std::exception&) {
        // Reported (and classified) by the run itself.
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
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

  if (unavailable.empty() && !cancel.cancelled()) prefetch(request, placement, sizes);
  sim::VirtualBatchInfo info;
  info.backend = "sim";
  info.host = "sim:" + profile.name;
  info.ompi_version = profile.ompi_version;
  info.osu_version = profile.osu_version;
  info.launch_overhead_s = profile.launch_overhead_s;
  info.virtual_clock = options_.virtual_clock;
  info.pace = options_.pace;
  sim::run_virtual_batch(
      request, sink, cancel, info, clock_, unavailable, [&](std::size_t index, int repeat) {
        const TuningConfig& config = request.configs[index];
        sim::VirtualAnswer a;
        sim::RunNoise noise(
            noise_, sim::mix_seed(sim::mix_seed(sim::mix_seed(options_.seed, request.tag), index),
                                  static_cast<std::uint64_t>(repeat)));
        try {
          for (std::int64_t size : sizes) {
            const sim::Measurement m = model_->measure(request.collective, placement, config, size);
            a.rows.push_back(sim::noisy_row(m, size, noise.factor(size), request.iterations));
            a.row_traces.push_back(join(m.trace, " -> "));
          }
        } catch (const sim::AlgorithmOutOfRange& e) {
          // Open MPI returns MPI_ERR_ARG at the first call; the job aborts after the header.
          a = {};
          a.exit_code = 13;
          a.stderr_text = sim::mpi_abort_banner(request.collective, "MPI_ERR_ARG",
                                                "invalid argument of some other kind", info.host);
          a.trace = "colltune-sim: sizes " + std::to_string(sizes.front()) + "-" +
                    std::to_string(sizes.front()) + ": " + e.what() + "\n";
        } catch (const sim::ScheduleTooLarge& e) {
          a = {};
          a.outcome = RunOutcome::unavailable;
          a.error = std::string(e.what()) + " (more than " +
                    std::to_string(options_.max_messages_per_call) + " messages per call)";
        } catch (const std::invalid_argument& e) {
          a = {};
          a.outcome = RunOutcome::unavailable;
          a.error = e.what();
        } catch (const std::exception& e) {
          // A schedule that cannot complete is a simulator defect; report it, keep the batch going.
          a = {};
          a.outcome = RunOutcome::failed;
          a.error = std::string("simulation failed: ") + e.what();
        }
        return a;
      });
}

}  // namespace colltune
