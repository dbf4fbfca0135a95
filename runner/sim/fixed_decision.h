// Open MPI 4.1.x's fixed ("default") algorithm decision for bcast, reduce, allreduce and gather
// (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, tables in coll-tuned.md §3; identical in
// 5.0.x). The fixed path always runs the chosen algorithm unsegmented, chain fan-out 0 (= 1).
#pragma once

#include <cstdint>
#include <optional>

#include "core/collective.h"

namespace colltune::sim {

// `message_bytes` = datatype size x count (the whole buffer).
int fixed_bcast_algorithm(int comm_size, std::int64_t message_bytes);
int fixed_reduce_algorithm(int comm_size, std::int64_t message_bytes, bool commutative = true);
int fixed_allreduce_algorithm(int comm_size, std::int64_t message_bytes, bool commutative = true);
// `block_bytes` = the per-rank block (rcount x type at the root).
int fixed_gather_algorithm(int comm_size, std::int64_t block_bytes);

// The algorithm the fixed decision picks for an OSU size S (MPI_CHAR for bcast/gather,
// MPI_FLOAT/MPI_SUM for reduce/allreduce); nullopt for collectives not covered here.
std::optional<int> fixed_decision(Collective collective, int comm_size, std::int64_t osu_size);

}  // namespace colltune::sim
