// Ground-truth landscapes from the simulated cluster (runner/sim/): every configuration of the
// search space (optimizer/search_space.h, default options) x every OSU size of min..max, for
// one profile and comm size. The truth of a point is the model's noise-free latency, so the
// exhaustive optimum is known exactly; the repeats runs draw from are noisy OSU runs of the
// profile's noise model (a repeat is one run: one run factor for all its sizes), seeded, so a
// landscape is the same on every machine and in every process.
//
// Configurations the model cannot simulate (calls above SimModel's message limit) have no
// points; configurations Open MPI rejects do not occur (the space holds valid ids only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/optimizer/landscape.h"
#include "core/algorithm_table.h"
#include "core/collective.h"

namespace colltune::bench {

struct SimLandscapeOptions {
  std::string profile = "pise";         // profile name or JSON file (runner/sim/profiles)
  int comm_size = 0;                    // 0: the profile's full size (nodes x cores_per_node)
  std::vector<Collective> collectives;  // empty: bcast, reduce, allreduce, gather
  int repeats = 10;                     // noisy runs per configuration
  std::uint64_t seed = 1;               // noise seed
  std::int64_t min_size = 4, max_size = 1 << 20;  // OSU -m (19 sizes by default)
  int threads = 1;                                // simulation threads (the model is thread-safe)
  // Optional CSV of noise-free latencies: read when it exists and matches the profile (same
  // JSON), else written after computing. Noise is always redrawn from `seed`.
  std::string cache_path;
  bool verbose = false;  // progress and timing on stderr
};

// One landscape per collective, in the order given. Throws std::invalid_argument for unknown
// profiles, collectives the model does not cover, or a comm size below 2.
std::vector<Landscape> sim_landscapes(const SimLandscapeOptions& options,
                                      const AlgorithmTable& table);

}  // namespace colltune::bench
