// COLL_BASE_COMPUTED_SEGCOUNT of Open MPI's coll/base (docs/reference/open-mpi-rules.md §2):
// the elements per segment of a segmented collective, shared by the simulator's schedules and
// the optimizer's analytic cost model so that both segment a message alike.
#pragma once

#include <cstdint>

namespace colltune {

// Elements per segment for a segment size in bytes (rounded to the nearest element); `count`
// when segsize is 0, below one element, or not below the message (type_size x count).
inline std::int64_t coll_segment_count(std::int64_t segsize, std::int64_t type_size,
                                       std::int64_t count) {
  std::int64_t segcount = count;
  if (segsize >= type_size && segsize < type_size * segcount) {
    segcount = segsize / type_size;
    const std::int64_t residual = segsize - segcount * type_size;
    if (residual > (type_size >> 1)) ++segcount;
  }
  return segcount;
}

}  // namespace colltune
