// Internal to the simulator: one function per Open MPI coll/base algorithm, each appending that
// algorithm's per-rank operations to a Schedule (root is always rank 0, as in OSU). Counts are
// in elements of `type_size` bytes, as in the C code they transcribe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/sim/schedule.h"
#include "runner/sim/topology.h"

namespace colltune::sim::algo {

// The trace line of a segmented algorithm: "<name> segsize=<bytes>".
inline std::string seg_trace(const char* name, int segsize) {
  return std::string(name) + " segsize=" + std::to_string(segsize);
}

struct Context {
  Schedule& schedule;
  int comm_size;
  std::int64_t type_size;  // 1 (MPI_CHAR) or 4 (MPI_FLOAT)
  int knomial_radix = 4;

  RankProgram& rank(int r) { return schedule.rank(r); }
  void trace(std::string entry) { schedule.trace.push_back(std::move(entry)); }
};

// COLL_BASE_COMPUTE_BLOCKCOUNT: `count` split into `blocks`; the first `split` are `early`
// elements long, the rest `late` (early = late + 1 when the division has a remainder).
struct BlockCount {
  std::int64_t early = 0;
  std::int64_t late = 0;
  std::int64_t split = 0;
  std::int64_t of(std::int64_t block) const { return block < split ? early : late; }
};
BlockCount compute_blockcount(std::int64_t count, std::int64_t blocks);

// Largest power of two <= n (n >= 1).
int floor_power_of_two(int n);

// The first half of Rabenseifner's algorithm, shared by reduce_redscat_gather and
// allreduce_redscat_allgather (coll_base_reduce.c / coll_base_allreduce.c run the same code):
// the first 2 * rem ranks fold pairwise so that `pof2` = floor_power_of_two(comm_size) ranks
// remain, which then reduce-scatter by recursive halving (rabenseifner_halving gives the
// shape for a communicator size). fold_and_halve needs `count` >= pof2.
struct RabenseifnerHalving {
  int pof2 = 1;
  int nsteps = 0;
  int rem = 0;  // comm_size - pof2
  // The real rank of virtual rank `vrank` among the remaining pof2 ranks.
  int real_rank(int vrank) const { return vrank < rem ? vrank * 2 : vrank + rem; }
};
RabenseifnerHalving rabenseifner_halving(int comm_size);

// What rank `r` did in the fold and the halving: its virtual rank (-1: folded out, it takes no
// further part) and, per step, the element counts it received (and kept) and sent.
struct HalvingCounts {
  int vrank = -1;
  std::vector<std::int64_t> rcount, scount;
};
// Appends rank `r`'s fold and recursive-halving operations to its program.
HalvingCounts fold_and_halve(Context& c, const RabenseifnerHalving& h, int r, std::int64_t count);

// --- bcast (coll_base_bcast.c) ---
void bcast_generic(Context& c, const Tree& tree, std::int64_t count, std::int64_t segcount);
void bcast_basic_linear(Context& c, std::int64_t count);
void bcast_chain(Context& c, std::int64_t count, int segsize, int chains);
void bcast_pipeline(Context& c, std::int64_t count, int segsize);
void bcast_split_bintree(Context& c, std::int64_t count, int segsize);
void bcast_bintree(Context& c, std::int64_t count, int segsize);
void bcast_binomial(Context& c, std::int64_t count, int segsize);
void bcast_knomial(Context& c, std::int64_t count, int segsize, int radix);
void bcast_scatter_allgather(Context& c, std::int64_t count);
void bcast_scatter_allgather_ring(Context& c, std::int64_t count);
// Runs bcast algorithm `id` with the given knobs (ids 1..9).
void bcast_by_id(Context& c, int id, std::int64_t count, int segsize, int fanout);

// --- reduce (coll_base_reduce.c), commutative operator ---
void reduce_generic(Context& c, const Tree& tree, std::int64_t count, std::int64_t segcount);
void reduce_basic_linear(Context& c, std::int64_t count);
void reduce_chain(Context& c, std::int64_t count, int segsize, int fanout);
void reduce_pipeline(Context& c, std::int64_t count, int segsize);
void reduce_binary(Context& c, std::int64_t count, int segsize);
void reduce_binomial(Context& c, std::int64_t count, int segsize);
void reduce_in_order_binary(Context& c, std::int64_t count, int segsize);
void reduce_redscat_gather(Context& c, std::int64_t count);
void reduce_by_id(Context& c, int id, std::int64_t count, int segsize, int fanout);

// --- allreduce (coll_base_allreduce.c), commutative operator ---
void allreduce_basic_linear(Context& c, std::int64_t count);
void allreduce_nonoverlapping(Context& c, std::int64_t count);
void allreduce_recursive_doubling(Context& c, std::int64_t count);
void allreduce_ring(Context& c, std::int64_t count);
void allreduce_ring_segmented(Context& c, std::int64_t count, int segsize);
void allreduce_redscat_allgather(Context& c, std::int64_t count);
void allreduce_by_id(Context& c, int id, std::int64_t count, int segsize);

// --- gather (coll_base_gather.c); count = elements per rank ---
void gather_basic_linear(Context& c, std::int64_t count);
void gather_binomial(Context& c, std::int64_t count);
void gather_linear_sync(Context& c, std::int64_t count, int first_segment_size);
void gather_by_id(Context& c, int id, std::int64_t count, int segsize);

}  // namespace colltune::sim::algo
