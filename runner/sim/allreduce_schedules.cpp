// Allreduce algorithms of Open MPI 4.1.x (ompi/mca/coll/base/coll_base_allreduce.c), rank by
// rank, for a commutative operator (MPI_SUM).
#include <array>
#include <stdexcept>
#include <vector>

#include "core/fixed_decision.h"
#include "runner/sim/algorithms.h"
#include "runner/sim/collective_schedules.h"

namespace colltune::sim::algo {

BlockCount compute_blockcount(std::int64_t count, std::int64_t blocks) {
  BlockCount b;
  b.early = b.late = count / blocks;
  b.split = count % blocks;
  if (b.split != 0) ++b.early;
  return b;
}

void allreduce_basic_linear(Context& c, std::int64_t count) {
  c.trace("allreduce_intra_basic_linear");
  reduce_basic_linear(c, count);
  bcast_basic_linear(c, count);
}

void allreduce_nonoverlapping(Context& c, std::int64_t count) {
  // The inner calls go through the communicator's tuned reduce and bcast, i.e. the fixed
  // decision when only allreduce is forced.
  c.trace("allreduce_intra_nonoverlapping");
  const std::int64_t bytes = count * c.type_size;
  reduce_by_id(c, *fixed_decision_4_1(Collective::reduce, c.comm_size, bytes), count, 0, 0);
  bcast_by_id(c, *fixed_decision_4_1(Collective::bcast, c.comm_size, bytes), count, 0, 0);
}

void allreduce_recursive_doubling(Context& c, std::int64_t count) {
  c.trace("allreduce_intra_recursivedoubling");
  const int p = c.comm_size;
  const std::int64_t bytes = count * c.type_size;
  const int adjsize = floor_power_of_two(p);
  const int extra = p - adjsize;
  for (int r = 0; r < p; ++r) {
    RankProgram& prog = c.rank(r);
    int newrank;
    if (r < 2 * extra) {
      if (r % 2 == 0) {
        prog.send(r + 1, bytes);
        newrank = -1;
      } else {
        prog.recv(r - 1, bytes);
        prog.reduce(bytes);
        newrank = r >> 1;
      }
    } else {
      newrank = r - extra;
    }
    for (int distance = 1; distance < adjsize && newrank >= 0; distance <<= 1) {
      const int newremote = newrank ^ distance;
      const int remote = newremote < extra ? newremote * 2 + 1 : newremote + extra;
      prog.sendrecv(remote, bytes, remote, bytes);
      prog.reduce(bytes);
    }
    if (r < 2 * extra) {
      if (r % 2 == 0) {
        prog.recv(r + 1, bytes);
      } else {
        prog.send(r - 1, bytes);
      }
    }
  }
}

namespace {

// Ring allgather of the reduced blocks (the distribution loop shared by ring and segmented ring).
void ring_distribution(Context& c, int r, const BlockCount& blocks) {
  const int p = c.comm_size;
  RankProgram& prog = c.rank(r);
  const int send_to = (r + 1) % p, recv_from = (r + p - 1) % p;
  for (int k = 0; k < p - 1; ++k) {
    const int send_data_from = (r + 1 + p - k) % p;
    prog.sendrecv(send_to, blocks.of(send_data_from) * c.type_size, recv_from,
                  blocks.early * c.type_size);
  }
}

}  // namespace

void allreduce_ring(Context& c, std::int64_t count) {
  c.trace("allreduce_intra_ring");
  const int p = c.comm_size;
  if (count < p) {
    allreduce_recursive_doubling(c, count);
    return;
  }
  const BlockCount blocks = compute_blockcount(count, p);
  const std::int64_t type = c.type_size;
  // Every rank sends p - 1 blocks reducing and p - 1 distributing.
  c.schedule.expect_sends(2 * std::int64_t{p} * (p - 1));
  for (int r = 0; r < p; ++r) {
    RankProgram& prog = c.rank(r);
    const int send_to = (r + 1) % p, recv_from = (r + p - 1) % p;
    std::array<RequestId, 2> reqs{kNoRequest, kNoRequest};
    int inbi = 0;
    reqs[inbi] = prog.irecv(recv_from, blocks.early * type);
    prog.send(send_to, blocks.of(r) * type);
    for (int k = 2; k < p; ++k) {
      const int prevblock = (r + p - k + 1) % p;
      inbi ^= 1;
      reqs[inbi] = prog.irecv(recv_from, blocks.early * type);
      prog.wait(reqs[inbi ^ 1]);
      prog.reduce(blocks.of(prevblock) * type);
      prog.send(send_to, blocks.of(prevblock) * type);
    }
    prog.wait(reqs[inbi]);
    prog.reduce(blocks.of((r + 1) % p) * type);
    ring_distribution(c, r, blocks);
  }
}

void allreduce_ring_segmented(Context& c, std::int64_t count, int segsize) {
  c.trace("allreduce_intra_ring_segmented segsize=" + std::to_string(segsize));
  const int p = c.comm_size;
  const std::int64_t type = c.type_size;
  const std::int64_t segcount = computed_segcount(segsize, type, count);
  if (count < p * segcount) {
    allreduce_ring(c, count);
    return;
  }
  std::int64_t num_phases = count / (p * segcount);
  const std::int64_t rest = count % (p * segcount);
  if (rest >= p && rest > (p * segcount) / 2) ++num_phases;
  const BlockCount blocks = compute_blockcount(count, p);
  const std::int64_t max_segcount = compute_blockcount(blocks.early, num_phases).early;
  auto phase_count = [&](int block, std::int64_t phase) {
    return compute_blockcount(blocks.of(block), num_phases).of(phase);
  };
  // Every rank sends p - 1 blocks per phase reducing and p - 1 distributing.
  c.schedule.expect_sends((num_phases + 1) * std::int64_t{p} * (p - 1));
  for (int r = 0; r < p; ++r) {
    RankProgram& prog = c.rank(r);
    const int send_to = (r + 1) % p, recv_from = (r + p - 1) % p;
    for (std::int64_t phase = 0; phase < num_phases; ++phase) {
      std::array<RequestId, 2> reqs{kNoRequest, kNoRequest};
      int inbi = 0;
      reqs[inbi] = prog.irecv(recv_from, max_segcount * type);
      prog.send(send_to, phase_count(r, phase) * type);
      for (int k = 2; k < p; ++k) {
        const int prevblock = (r + p - k + 1) % p;
        inbi ^= 1;
        reqs[inbi] = prog.irecv(recv_from, max_segcount * type);
        prog.wait(reqs[inbi ^ 1]);
        prog.reduce(phase_count(prevblock, phase) * type);
        prog.send(send_to, phase_count(prevblock, phase) * type);
      }
      prog.wait(reqs[inbi]);
      prog.reduce(phase_count((r + 1) % p, phase) * type);
    }
    ring_distribution(c, r, blocks);
  }
}

void allreduce_redscat_allgather(Context& c, std::int64_t count) {
  c.trace("allreduce_intra_redscat_allgather");
  const int p = c.comm_size;
  const RabenseifnerHalving h = rabenseifner_halving(p);
  if (count < h.pof2) {
    allreduce_basic_linear(c, count);
    return;
  }
  const std::int64_t type = c.type_size;
  for (int r = 0; r < p; ++r) {
    // Steps 1-2: the fold and the reduce-scatter.
    const HalvingCounts halved = fold_and_halve(c, h, r, count);
    RankProgram& prog = c.rank(r);
    if (halved.vrank != -1) {
      // Step 3: allgather by recursive doubling, in reverse order of the halving.
      int step = h.nsteps - 1;
      for (int mask = h.pof2 >> 1; mask > 0; mask >>= 1) {
        const int dest = h.real_rank(halved.vrank ^ mask);
        prog.sendrecv(dest, halved.rcount[step] * type, dest, halved.scount[step] * type);
        --step;
      }
    }
    // Step 4: the folded-out odd ranks get the whole result.
    if (r < 2 * h.rem) {
      if (r % 2 != 0) {
        prog.recv(r - 1, count * type);
      } else {
        prog.send(r + 1, count * type);
      }
    }
  }
}

void allreduce_by_id(Context& c, int id, std::int64_t count, int segsize) {
  switch (id) {
    case 1:
      return allreduce_basic_linear(c, count);
    case 2:
      return allreduce_nonoverlapping(c, count);
    case 3:
      return allreduce_recursive_doubling(c, count);
    case 4:
      return allreduce_ring(c, count);
    case 5:
      return allreduce_ring_segmented(c, count, segsize);
    case 6:
      return allreduce_redscat_allgather(c, count);
    default:
      throw AlgorithmOutOfRange("allreduce algorithm " + std::to_string(id) +
                                " does not exist in Open MPI 4.1 (1-6)");
  }
}

}  // namespace colltune::sim::algo
