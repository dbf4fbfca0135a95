// A simulated cluster: nodes, cores, where ranks go, and the point-to-point cost of a message at
// each level of the machine (shared memory inside a node, the network between nodes). Profiles
// are JSON files (runner/sim/profiles/*.json, format in runner/sim/README.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runner/sim/noise.h"

namespace colltune::sim {

enum class Protocol {
  eager,       // the sender injects at once; the receiver may post later (unexpected message)
  rendezvous,  // data moves only after the receive is posted (request-to-send, clear-to-send)
};

// Cost of one message whose size falls in this piece (protocol breakpoints: eager/rendezvous,
// short/bcopy/zcopy...). Times in microseconds; bandwidth in GB/s (1e3 bytes per us).
struct LinkPiece {
  std::int64_t up_to_bytes = -1;  // inclusive upper bound of this piece; -1 = unbounded (last)
  double latency_us = 1;          // wire/handshake latency of one message (L)
  double overhead_us = 0;         // CPU time to post a send and to complete a receive (o)
  double bandwidth_gbps = 10;     // per-transfer bandwidth (1/G)
  Protocol protocol = Protocol::eager;

  double wire_time_us(std::int64_t bytes) const {
    return static_cast<double>(bytes) / (bandwidth_gbps * 1e3);
  }
};

struct LinkLevel {
  std::vector<LinkPiece> pieces;  // ascending up_to_bytes; the last one is unbounded
  // Fraction of a transfer's wire time during which it holds the level's shared resource (the
  // node's memory system for shared memory, the node's NIC per direction for the network).
  // 0 = concurrent transfers never slow each other; 1 = they go one after another.
  double contention = 0;

  const LinkPiece& piece_for(std::int64_t bytes) const;
};

enum class PlacementPolicy {
  packed,  // cores_per_node ranks per node, as few nodes as possible (--map-by core / ppr)
  spread,  // as many nodes as possible, the same number of ranks on each
};
enum class RankMapping {
  block,   // consecutive ranks on the same node (rank / ppn)
  cyclic,  // round robin over nodes (rank % nodes), --map-by node
};

// Where the ranks of one job are: `nodes` nodes with at most `ppn` ranks each.
struct Placement {
  int comm_size = 2;
  int nodes = 1;
  int ppn = 2;  // ranks per node (the last node may hold fewer with block mapping)
  RankMapping mapping = RankMapping::block;

  int node_of(int rank) const;
  auto operator<=>(const Placement&) const = default;
};

struct ClusterProfile {
  std::string name;
  std::string description;
  int nodes = 1;
  int cores_per_node = 2;
  PlacementPolicy placement_policy = PlacementPolicy::packed;
  RankMapping mapping = RankMapping::block;
  // Cost of the reduction operator (MPI_SUM on MPI_FLOAT), per byte combined.
  double reduce_ns_per_byte = 0.25;
  // With more ranks than cores on a node, CPU costs (overheads, reductions) and shared-memory
  // latency are multiplied by 1 + penalty * (ranks_per_node / cores - 1).
  double oversubscription_penalty = 1.0;
  LinkLevel intra_node;
  LinkLevel inter_node;
  NoiseModel noise;
  std::string ompi_version = "4.1.4";  // the coll_tuned behaviour modelled
  std::string osu_version = "5.6.2";   // the OSU output format produced
  int knomial_radix = 4;               // coll_tuned_bcast_algorithm_knomial_radix default
  int forced_chain_fanout = 4;         // coll_tuned_<coll>_algorithm_chain_fanout default
  double launch_overhead_s = 1.0;      // mpirun/srun start + MPI_Init + finalize per OSU run

  // Parses and validates; throws std::invalid_argument naming the bad field.
  static ClusterProfile from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;

  // The placement of `comm_size` ranks under the profile's policy and mapping.
  Placement default_placement(int comm_size) const;
  // Placement with an explicit node count and ranks per node (0 = comm_size / nodes, rounded
  // up). Throws std::invalid_argument when the profile has fewer nodes or the numbers disagree.
  Placement placement(int comm_size, int nodes, int ppn) const;
};

// Folder of the profiles shipped with colltune: install_layout::sim_profile_dir() (installed:
// <datadir>/colltune/sim-profiles; build tree: a link to runner/sim/profiles).
std::filesystem::path builtin_profile_dir();

// Loads a profile from a path (anything naming an existing file, or ending in .json) or by name,
// looked up as <dir>/<name>.json in `search_dirs`, then the environment variable
// COLLTUNE_SIM_PROFILE_DIR, then builtin_profile_dir(). Throws std::invalid_argument with the
// places searched when not found, or the parse error.
ClusterProfile load_profile(std::string_view name_or_path,
                            const std::vector<std::filesystem::path>& search_dirs = {});

// Names of the profiles found in the same places, sorted, without duplicates.
std::vector<std::string> available_profiles(
    const std::vector<std::filesystem::path>& search_dirs = {});

// The profile used when none is given.
inline constexpr std::string_view kDefaultProfile = "pise";

}  // namespace colltune::sim
