// The simulated-cluster cost model as a library: what OSU would report for one collective call
// under one coll_tuned configuration on a profile's cluster. Used by the sim backend and by
// optimizer benchmarks (colltune-bench-optimizer --sim PROFILE) that need many evaluations
// without running jobs.
//
//   auto model = colltune::sim::SimModel::load("pise");
//   double us = model.latency_us(Collective::bcast, 576, {6, 8192, 0}, 1 << 20);  // noise-free
//   colltune::sim::NoisySampler sampler(model, /*seed=*/7);
//   double noisy = sampler.sample_us(Collective::bcast, 576, {6, 8192, 0}, 1 << 20);
//
// Thread-safe: results are cached per (collective, placement, configuration, size), at most
// `max_cache_entries` of them (the oldest go first): a daemon's sim backend lives as long as the
// daemon, and every campaign adds entries (about 250 bytes each).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/collective.h"
#include "core/tuning_config.h"
#include "osu/osu_output.h"
#include "runner/sim/cluster_profile.h"
#include "runner/sim/simulator.h"

namespace colltune::sim {

// What one OSU size reports, noise-free.
struct Measurement {
  double avg_us = 0;               // OSU "Avg Latency(us)": mean over ranks of the per-rank time
  double min_us = 0;               // OSU "Min Latency(us)": fastest rank
  double max_us = 0;               // OSU "Max Latency(us)": slowest rank
  std::vector<std::string> trace;  // coll/base functions that ran (fallbacks included)
};

class SimModel {
 public:
  static constexpr std::size_t kDefaultMaxCacheEntries = 100'000;  // about 25 MiB
  explicit SimModel(ClusterProfile profile, std::int64_t max_messages_per_call = 4'000'000,
                    std::size_t max_cache_entries = kDefaultMaxCacheEntries);
  // load_profile(name_or_path) (a profile name like "pise", or a JSON file).
  static SimModel load(std::string_view name_or_path);

  const ClusterProfile& profile() const { return profile_; }
  // bcast, reduce, allreduce and gather.
  static bool models(Collective collective);

  // Placement of comm_size ranks under the profile's policy (packed: full nodes).
  Placement placement(int comm_size) const { return profile_.default_placement(comm_size); }

  // Noise-free OSU Avg Latency in microseconds for one OSU message size (bytes as OSU prints
  // them). Throws std::invalid_argument for collectives not modelled, bad sizes or placements,
  // AlgorithmOutOfRange for unknown ids (Open MPI: MPI_ERR_ARG) and ScheduleTooLarge when the
  // call needs more messages than allowed.
  double latency_us(Collective collective, int comm_size, const TuningConfig& config,
                    std::int64_t msg_size) const;
  double latency_us(Collective collective, const Placement& placement, const TuningConfig& config,
                    std::int64_t msg_size) const;

  // Avg, Min and Max together (cached).
  Measurement measure(Collective collective, const Placement& placement, const TuningConfig& config,
                      std::int64_t msg_size) const;

  // Full detail (per-rank times, traffic per level), not cached.
  SimResult simulate(Collective collective, const Placement& placement, const TuningConfig& config,
                     std::int64_t msg_size) const;

  std::size_t cache_size() const;
  void clear_cache();

 private:
  using Key = std::tuple<int, int, int, int, int, int, int, int, std::int64_t>;
  Key key(Collective c, const Placement& p, const TuningConfig& config, std::int64_t size) const;

  ClusterProfile profile_;
  std::int64_t max_messages_;
  std::size_t max_cache_entries_;
  mutable std::mutex mutex_;
  mutable std::map<Key, Measurement> cache_;
  mutable std::deque<Key> cache_order_;  // insertion order, for eviction
};

// One OSU row from a noise-free measurement and a run's noise factor (the same factor for Avg,
// Min and Max).
OsuRow noisy_row(const Measurement& m, std::int64_t msg_size, double factor, int iterations);

// Noisy OSU measurements from a SimModel: the profile's noise model (or another), seeded.
// sample_us() advances the sampler's own stream: use one sampler per thread; sample_run() is
// const and repeatable.
class NoisySampler {
 public:
  NoisySampler(const SimModel& model, std::uint64_t seed,
               std::optional<NoiseModel> noise = std::nullopt);

  // One OSU run's Avg Latency for one size; every call is a new run (its own run factor).
  double sample_us(Collective collective, int comm_size, const TuningConfig& config,
                   std::int64_t msg_size);

  // One OSU run over `sizes`: rows with Avg/Min/Max (same factor for the three) and
  // `iterations`. The run's noise comes from `run_seed` alone, so a given run is repeatable
  // regardless of what was sampled before.
  std::vector<OsuRow> sample_run(Collective collective, const Placement& placement,
                                 const TuningConfig& config, const std::vector<std::int64_t>& sizes,
                                 int iterations, std::uint64_t run_seed) const;

 private:
  const SimModel& model_;
  NoiseModel noise_;
  std::uint64_t seed_;
  std::uint64_t draws_ = 0;
};

}  // namespace colltune::sim
