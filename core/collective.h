// The MPI collectives colltune knows, with Open MPI coll_tuned's numeric ids (COLLTYPE_T,
// identical in 4.1.x and main) and the per-collective facts that tuning depends on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace colltune {

enum class Collective : int {
  allgather = 0,
  allgatherv = 1,
  allreduce = 2,
  alltoall = 3,
  alltoallv = 4,
  barrier = 6,
  bcast = 7,
  gather = 9,
  reduce = 11,
  reduce_scatter = 12,
  reduce_scatter_block = 13,
  scatter = 15,
};

// Number of collective ids in Open MPI's COLLTYPE_T (COLLCOUNT); ids must be below it.
inline constexpr int kOmpiCollCount = 22;

// Open MPI's id of the collective, as written in a rules file.
constexpr int ompi_id(Collective c) { return static_cast<int>(c); }

// Lower-case name as in `coll_tuned_<name>_algorithm` and `osu_<name>`.
std::string_view name(Collective c);

// Parses a name ("bcast", "allreduce", ...); nullopt for an unknown name.
std::optional<Collective> parse_collective(std::string_view text);

// Collective for an Open MPI id; nullopt for ids colltune does not model (e.g. alltoallw).
std::optional<Collective> collective_from_ompi_id(int id);

// Every collective colltune models, in Open MPI id order.
const std::vector<Collective>& all_collectives();

// Parses a comma-separated list; throws std::invalid_argument naming the bad item.
std::vector<Collective> parse_collective_list(std::string_view text);

// True when OSU prints no size column (barrier).
bool has_message_size(Collective c);

// The message-size key Open MPI 4.1.4's dynamic rules lookup uses for an OSU size S at
// communicator size P (docs/reference/open-mpi-rules.md §1.5): S*P for allgather, alltoall, gather,
// scatter and reduce_scatter_block; 0 for barrier and alltoallv; S otherwise.
std::int64_t rules_key_for_osu_size(Collective c, std::int64_t osu_size, int comm_size);

// The OSU size whose rules key is `key` (inverse of rules_key_for_osu_size, rounding down).
std::int64_t osu_size_for_rules_key(Collective c, std::int64_t key, int comm_size);

// True for collectives where OSU reduces floats and the smallest size is 4 bytes.
bool is_reduction(Collective c);

}  // namespace colltune
