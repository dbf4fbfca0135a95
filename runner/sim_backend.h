// A backend that runs nothing: a cost model of a simulated cluster (runner/sim/) says what each
// OSU run would print. Every run still goes through OSU's output format and the parser the real
// backends use, so campaigns, stores and reports cannot tell it from a cluster.
//
// Per run: the model's noise-free Avg/Min/Max per size (runner/sim/sim_model.h), times a noise
// factor drawn from (seed, tag, config_index, repeat) — independent of run order, so a campaign
// replays identically — formatted as OSU 5.6.2 `-f` output and parsed. A run whose benchmark
// time (launch overhead + (iterations + warmup) x latency per size) passes run_timeout_s is a
// timeout that keeps the sizes finished before the limit. Provenance times are on a virtual
// clock that advances by each run's benchmark time (virtual_clock), so end - start is the time
// the run would have taken.
//
// Outcomes: unknown algorithm id -> failed (MPI_ERR_ARG abort, as Open MPI); collectives other
// than bcast/reduce/allreduce/gather, extra coll_tuned MCA parameters (e.g. a rules file) and
// calls too large to simulate -> unavailable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/backend.h"
#include "runner/sim/cluster_profile.h"
#include "runner/sim/sim_model.h"

namespace colltune {

struct SimBackendOptions {
  std::string profile = std::string(sim::kDefaultProfile);  // a profile name or a JSON file
  std::vector<std::filesystem::path> profile_dirs;          // searched before the built-in one
  std::uint64_t seed = 1;                                   // noise seed
  std::optional<sim::NoiseModel> noise;  // replaces the profile's noise (NoiseModel::none())
  bool virtual_clock = true;             // false: provenance times are wall-clock (runs take ~0 s)
  double pace = 0;                       // sleep pace x benchmark time per run (demos); 0 = instant
  std::int64_t max_messages_per_call = 4'000'000;  // larger calls are unavailable
  // Threads that simulate a batch's (configuration, size) cells before it is reported; 0 = the
  // machine's cores (at most 8). Results do not depend on it.
  int threads = 0;
  // Campaigns whose estimated peak memory (sim_memory_estimate_mb) passes this are refused at
  // creation, before the model allocates it.
  double max_memory_mb = 2048;
};

// A conservative estimate of the simulator's peak resident memory for one context, in MiB:
// a fixed part plus a part per rank, measured on campaigns of 10^3 and 10^4 ranks over
// 4:1M (docs/reliability/audit-runner.md, item 9).
double sim_memory_estimate_mb(int comm_size);

class SimBackend : public Backend {
 public:
  // Loads options.profile; throws std::invalid_argument when it cannot.
  explicit SimBackend(SimBackendOptions options = {});
  SimBackend(sim::ClusterProfile profile, SimBackendOptions options);

  std::string name() const override { return "sim"; }
  BackendInfo describe() override;
  void run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) override;
  double launch_overhead_s() const override;
  // The collective is modelled and the memory estimate stays under max_memory_mb.
  std::string admit(const BenchmarkRequest& request) override;

  const sim::SimModel& model() const { return *model_; }

 private:
  SimBackendOptions options_;
  std::unique_ptr<sim::SimModel> model_;
  sim::NoiseModel noise_;
  double clock_ = 0;  // virtual clock, seconds since the epoch

  // Computes the batch's cells not yet in the model's cache on options_.threads threads.
  void prefetch(const BenchmarkRequest& request, const sim::Placement& placement,
                const std::vector<std::int64_t>& sizes) const;
};

}  // namespace colltune
