// Open MPI 4.1.x's compiled-in ("fixed") algorithm choice, transcribed from
// ompi/mca/coll/tuned/coll_tuned_decision_fixed.c (docs/reference/open-mpi-rules.md §3; 5.0.x is
// identical).
// This is what runs when no rule applies or a rule says algorithm 0. The fixed decision always
// passes segment size 0 and fan-out 0.
#pragma once

#include <cstdint>
#include <optional>

#include "core/collective.h"

namespace colltune {

// Algorithm id the fixed decision picks for collective `c` on `comm_size` ranks, for a call
// of OSU size `osu_size` (bcast/allreduce/reduce: type size x count; gather/scatter/allgather/
// alltoall: per-rank block; reduce_scatter: total; allgatherv: per-rank average; barrier and
// alltoallv: ignored). `commutative` is the reduction op's commutativity (OSU uses MPI_SUM).
// nullopt for a collective without a transcribed table (reduce_scatter_block).
std::optional<int> fixed_decision_4_1(Collective c, int comm_size, std::int64_t osu_size,
                                      bool commutative = true);

}  // namespace colltune
