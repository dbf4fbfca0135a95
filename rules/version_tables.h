// Algorithm tables per Open MPI release family, for checking rules written for a release
// without access to its ompi_info (prefer AlgorithmTable::from_ompi_info of the real target).
#pragma once

#include "core/algorithm_table.h"
#include "core/ompi_version.h"

namespace colltune {

// 4.1.x: AlgorithmTable::builtin_4_1(). 5.0.x adds allgather 7 sparbit and allgatherv 6
// sparbit. main/6.0 further adds allreduce 7 allgather_reduce, reduce 8 knomial and allgather
// 8 direct-messaging (docs/reference/open-mpi-rules.md §2.9). Ids of 4.1 algorithms are unchanged
// everywhere.
const AlgorithmTable& algorithm_table_for(const OmpiVersion& version);

const AlgorithmTable& algorithm_table_5_0();
const AlgorithmTable& algorithm_table_main();

}  // namespace colltune
