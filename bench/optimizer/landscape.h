// A recorded landscape: latencies of configurations x message sizes, with repeats, for one
// (collective, comm size). Loaded from a CSV with named columns
//   collective, comm_size, algorithm, segsize, fanout, msg_size, latency_us
// (other columns ignored, any order). Several rows for one point are repeats. Configurations
// are canonicalised (SearchSpace::canonical), so equivalent ones share their repeats. So do,
// per message size, the default (algorithm 0) and the configuration Open MPI's fixed decision
// runs at that size (core/fixed_decision.h: that algorithm, segment size 0, fan-out 0; only
// for algorithms without a fan-out, since fan-out 0 is not a point of the space): they are the
// same code path, so their measured difference is noise, not regret.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/algorithm_table.h"
#include "core/collective.h"
#include "core/rng.h"
#include "core/tuning_config.h"

namespace colltune::bench {

struct LandscapePoint {
  std::vector<double> repeats;  // latency_us, file order
  std::vector<double> drawn;    // the repeats runs are drawn from (all, or the held-in half)
  double truth = 0;             // median of the repeats (or of the held-out half)
  double noise_sd = 0;          // sample standard deviation of the repeats (0 for one)
};

struct Landscape {
  Collective collective = Collective::bcast;
  int comm_size = 0;
  std::vector<std::int64_t> msg_sizes;  // ascending
  std::map<TuningConfig, std::map<std::int64_t, LandscapePoint>> points;

  std::vector<TuningConfig> configs() const;
  const LandscapePoint* find(const TuningConfig& config, std::int64_t msg_size) const;
  // Lowest truth at a size over every configuration; NaN when nothing measured it.
  double optimum(std::int64_t msg_size) const;
  // The configuration of that lowest truth (the first in configuration order on a tie); none
  // when nothing measured the size.
  std::optional<TuningConfig> optimal_config(std::int64_t msg_size) const;
  // One run of a configuration: an independent random repeat per size (NaN where missing).
  std::vector<double> draw(const TuningConfig& config, const std::vector<std::int64_t>& sizes,
                           Rng& rng) const;
};

// Every (collective, comm size) group of the file, ordered by collective then comm size.
// With `holdout_truth`, a point's repeats are split (file order: even positions are drawn by
// runs, odd positions make the truth), so that a strategy cannot score by re-drawing the very
// samples the truth is the median of; points with one repeat use it for both.
// Throws std::runtime_error naming the file and line on malformed input.
// `pool_default_alias` false keeps the default and its alias apart (session 2's scoring).
std::vector<Landscape> load_landscapes(const std::string& path, const AlgorithmTable& table,
                                       bool holdout_truth = false, bool pool_default_alias = true);

}  // namespace colltune::bench
