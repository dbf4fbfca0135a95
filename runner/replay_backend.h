// A backend that answers from a recorded landscape: a CSV of measured OSU latencies per
// (collective, comm size, configuration, message size). It never invents a number: a run whose
// configuration (or some of its sizes) was not recorded is `unavailable`.
//
// CSV: a header row, then one row per measurement. Columns (others are ignored):
//   collective  name ("bcast") or Open MPI id (7)       aliases: coll
//   comm_size   ranks                                   aliases: nranks, np, ranks
//   algorithm   coll_tuned id, 0 = default decision     aliases: alg_id, alg
//   segsize     bytes, optional (0)                     aliases: segment_size
//   fanout      chain fan-out, optional (0)             aliases: chain_fanout
//   msg_size    OSU size in bytes (empty for barrier)   aliases: msg_size_bytes, size
//   latency_us  OSU Avg Latency                         aliases: avg_latency_us, avg_us
//   nodes       optional; when present it must match the request's node count  (alias: nnodes)
//   min_latency_us, max_latency_us, iterations          optional (-f columns)
// Repeated rows of one cell are repeats. Knobs an algorithm does not read are ignored when
// matching (binomial seg 0 fan-out 3 == binomial seg 0). The ORNL landscape
// (landscape_long.csv of the Summit/Peak sweeps, tests/data/ornl) loads as is with a `where` filter
// on its `dataset` column.
//
// Repeat r of a configuration reads recorded repeat perm[r mod n] of each cell, perm being a
// permutation of the n recorded repeats drawn from (seed, tag, configuration): repeatable, and
// different repeats read different recordings while there are enough.
//
// Cost accounting: provenance times are on a virtual clock advanced by what the run would have
// taken: launch_overhead_s + sum over sizes of (iterations + warmup) x recorded latency; a run
// past run_timeout_s is a timeout keeping the sizes finished before it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runner/backend.h"

namespace colltune {

struct ReplayValue {
  double avg_us = 0;
  std::optional<double> min_us;
  std::optional<double> max_us;
  std::optional<std::int64_t> iterations;
};

class ReplayDataset {
 public:
  // Keep only rows whose column equals the value (e.g. {"dataset", "peak-2020-05"}).
  using Filter = std::map<std::string, std::string>;

  // Throws std::invalid_argument naming the file, line and column of any problem.
  static ReplayDataset load_csv(const std::filesystem::path& path, const Filter& where = {});
  static ReplayDataset parse_csv(std::string_view text, const Filter& where = {},
                                 std::string source = "<text>");

  // Recorded repeats of one cell in file order; nullptr when none. `nodes` is only compared
  // when the dataset has a nodes column.
  const std::vector<ReplayValue>* find(Collective collective, int comm_size, int nodes,
                                       const TuningConfig& config, std::int64_t msg_size) const;

  // The configuration as recorded: knobs the algorithm ignores set to 0.
  static TuningConfig canonical(Collective collective, const TuningConfig& config);

  // Every recorded cell (one per collective, comm size, nodes, configuration, size).
  struct Cell {
    Collective collective;
    int comm_size;
    int nodes;  // -1 when the dataset has no nodes column
    TuningConfig config;
    std::int64_t msg_size;
    const std::vector<ReplayValue>* values;
  };
  std::vector<Cell> cells() const;

  std::size_t rows() const { return rows_; }
  const std::string& source() const { return source_; }
  bool has_nodes() const { return has_nodes_; }
  // Recorded (comm_size, nodes) pairs and configurations of a collective (for messages).
  std::set<std::pair<int, int>> placements(Collective collective) const;
  std::set<TuningConfig> configs(Collective collective, int comm_size) const;

 private:
  struct Key {
    int collective;
    int comm_size;
    int nodes;  // -1 when the dataset has no nodes column
    int algorithm, segsize, fanout;
    std::int64_t msg_size;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, std::vector<ReplayValue>> cells_;
  std::size_t rows_ = 0;
  std::string source_;
  bool has_nodes_ = false;
};

struct ReplayBackendOptions {
  std::uint64_t seed = 1;          // draws among recorded repeats
  double launch_overhead_s = 1.0;  // stated per-run launch cost for the accounting
  bool virtual_clock = true;       // false: provenance times are wall-clock
  std::string ompi_version;        // of the recorded machine, if known
  std::string osu_version = "5.6.2";
};

class ReplayBackend : public Backend {
 public:
  ReplayBackend(ReplayDataset dataset, ReplayBackendOptions options = {});

  std::string name() const override { return "replay"; }
  BackendInfo describe() override;
  void run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) override;
  double launch_overhead_s() const override { return options_.launch_overhead_s; }

  const ReplayDataset& dataset() const { return dataset_; }

 private:
  ReplayDataset dataset_;
  ReplayBackendOptions options_;
  double clock_ = 0;
};

}  // namespace colltune
