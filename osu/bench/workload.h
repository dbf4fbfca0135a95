// The MPI call each OSU collective latency test times, with OMB's buffers and arguments
// (docs/reference/osu-benchmarks.md §2 "The workload each benchmark runs"):
//   bcast                      root 0, count elements (MPI_CHAR x size by default)
//   gather/scatter             root 0, count per rank; root buffer size*P
//   allgather/alltoall         count per rank; buffers size*P
//   reduce/allreduce           MPI_SUM over count elements (MPI_FLOAT x size/4 by default), root 0
//   reduce_scatter             MPI_SUM, count elements split over ranks as OMB 5.x: portion
//                              count/P, +1 for ranks below the remainder; 1 each for the first
//                              count ranks when count < P
//   barrier                    MPI_Barrier
// Buffers are page-aligned and allocated once for the largest size, like OMB.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "osu/bench/bench_options.h"

namespace colltune::osu_bench {

class Workload {
 public:
  virtual ~Workload() = default;

  // Selects the element count for the next calls.
  virtual void set_count(std::int64_t count) = 0;

  // One collective call (the timed region).
  virtual void run() = 0;

  // Validation (-c): fill the inputs with rank-dependent data, then after one run() check what
  // this rank received. Ranks that receive nothing (non-roots of gather/reduce) return true.
  virtual void fill_for_validation() = 0;
  virtual bool check_validation() const = 0;
};

// Workload for options.collective on `comm` with buffers for `max_count` elements per rank.
// Throws std::bad_alloc when a buffer cannot be allocated (main prints OMB's message, aborts).
std::unique_ptr<Workload> make_workload(const BenchOptions& options, MPI_Comm comm,
                                        std::int64_t max_count);

}  // namespace colltune::osu_bench
