// Reduce algorithms of Open MPI 4.1.x (ompi/mca/coll/base/coll_base_reduce.c), rank by rank,
// for a commutative operator (MPI_SUM) and max_outstanding_reqs = 0 (a 4.1.4 rules file cannot
// set it and the MCA default is 0).
#include <array>
#include <stdexcept>
#include <vector>

#include "runner/sim/algorithms.h"
#include "runner/sim/collective_schedules.h"

namespace colltune::sim::algo {

int floor_power_of_two(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

RabenseifnerHalving rabenseifner_halving(int comm_size) {
  RabenseifnerHalving h;
  h.pof2 = floor_power_of_two(comm_size);
  while ((1 << h.nsteps) < h.pof2) ++h.nsteps;
  h.rem = comm_size - h.pof2;
  return h;
}

HalvingCounts fold_and_halve(Context& c, const RabenseifnerHalving& h, int r, std::int64_t count) {
  const std::int64_t type = c.type_size;
  RankProgram& prog = c.rank(r);
  HalvingCounts out;
  // Step 1: fold the first 2*rem ranks pairwise so that a power of two remains.
  if (r < 2 * h.rem) {
    const std::int64_t lhalf = count / 2, rhalf = count - lhalf;
    if (r % 2 != 0) {
      prog.sendrecv(r - 1, lhalf * type, r - 1, rhalf * type);
      prog.reduce(rhalf * type);
      prog.send(r - 1, rhalf * type);
      return out;  // vrank -1
    }
    prog.sendrecv(r + 1, rhalf * type, r + 1, lhalf * type);
    prog.reduce(lhalf * type);
    prog.recv(r + 1, rhalf * type);
    out.vrank = r / 2;
  } else {
    out.vrank = r - h.rem;
  }
  // Step 2: reduce-scatter by recursive halving. (Open MPI also tracks where each piece lies
  // in the buffer; a schedule needs only the counts.)
  out.rcount.assign(h.nsteps, 0);
  out.scount.assign(h.nsteps, 0);
  auto& rcount = out.rcount;
  auto& scount = out.scount;
  int step = 0;
  std::int64_t wsize = count;
  for (int mask = 1; mask < h.pof2; mask <<= 1) {
    const int dest = h.real_rank(out.vrank ^ mask);
    if (r < dest) {
      rcount[step] = wsize / 2;
      scount[step] = wsize - rcount[step];
    } else {
      scount[step] = wsize / 2;
      rcount[step] = wsize - scount[step];
    }
    prog.sendrecv(dest, scount[step] * type, dest, rcount[step] * type);
    prog.reduce(rcount[step] * type);
    if (step + 1 < h.nsteps) {
      wsize = rcount[step];
      ++step;
    }
  }
  return out;
}

void reduce_generic(Context& c, const Tree& tree, std::int64_t count, std::int64_t segcount) {
  const std::int64_t type = c.type_size;
  const std::int64_t num_segments = (count + segcount - 1) / segcount;
  std::int64_t edges = 0;  // every rank but the root sends every segment up once
  for (int r = 0; r < c.comm_size; ++r) edges += static_cast<std::int64_t>(tree.children[r].size());
  c.schedule.expect_sends(edges * num_segments);
  for (int r = 0; r < c.comm_size; ++r) {
    RankProgram& prog = c.rank(r);
    const auto& kids = tree.children[r];
    if (!kids.empty()) {
      // Overlap: the receive for (segment, child i) is posted before waiting for the previous
      // one; each arrival is reduced; a finished segment goes up before the next is awaited.
      std::array<RequestId, 2> reqs{kNoRequest, kNoRequest};
      int inbi = 0;
      std::int64_t recvcount = 0;
      for (std::int64_t seg = 0; seg <= num_segments; ++seg) {
        const std::int64_t prevcount = recvcount;
        recvcount = seg == num_segments - 1 ? count - segcount * seg : segcount;
        bool done = false;
        for (std::size_t i = 0; i < kids.size(); ++i) {
          if (seg < num_segments) reqs[inbi] = prog.irecv(kids[i], recvcount * type);
          prog.wait(reqs[inbi ^ 1]);
          reqs[inbi ^ 1] = kNoRequest;
          if (i > 0) {
            prog.reduce(recvcount * type);
          } else if (seg > 0) {
            prog.reduce(prevcount * type);
            if (r != tree.root) prog.send(tree.parent[r], prevcount * type);
            if (seg == num_segments) {
              done = true;
              break;
            }
          }
          inbi ^= 1;
        }
        if (done) break;
      }
    } else {
      // Leaves: blocking sends, one per segment (no flow control with max_requests 0).
      for (std::int64_t left = count; left > 0;) {
        const std::int64_t n = left < segcount ? left : segcount;
        prog.send(tree.parent[r], n * type);
        left -= n;
      }
    }
  }
}

void reduce_basic_linear(Context& c, std::int64_t count) {
  c.trace("reduce_intra_basic_linear");
  const std::int64_t bytes = count * c.type_size;
  const int p = c.comm_size;
  RankProgram& root = c.rank(0);
  // The root starts from rank size-1's data, then folds in ranks size-2 .. 0.
  if (p - 1 != 0) root.recv(p - 1, bytes);
  for (int i = p - 2; i >= 0; --i) {
    if (i != 0) root.recv(i, bytes);
    root.reduce(bytes);
  }
  for (int i = 1; i < p; ++i) c.rank(i).send(0, bytes);
}

void reduce_chain(Context& c, std::int64_t count, int segsize, int fanout) {
  c.trace(seg_trace("reduce_intra_chain", segsize) + " fanout=" + std::to_string(fanout));
  reduce_generic(c, build_chain(fanout, c.comm_size, 0), count,
                 computed_segcount(segsize, c.type_size, count));
}

void reduce_pipeline(Context& c, std::int64_t count, int segsize) {
  c.trace(seg_trace("reduce_intra_pipeline", segsize));
  reduce_generic(c, build_chain(1, c.comm_size, 0), count,
                 computed_segcount(segsize, c.type_size, count));
}

void reduce_binary(Context& c, std::int64_t count, int segsize) {
  c.trace(seg_trace("reduce_intra_binary", segsize));
  reduce_generic(c, build_tree(2, c.comm_size, 0), count,
                 computed_segcount(segsize, c.type_size, count));
}

void reduce_binomial(Context& c, std::int64_t count, int segsize) {
  c.trace(seg_trace("reduce_intra_binomial", segsize));
  reduce_generic(c, build_in_order_bmtree(c.comm_size, 0), count,
                 computed_segcount(segsize, c.type_size, count));
}

void reduce_in_order_binary(Context& c, std::int64_t count, int segsize) {
  c.trace(seg_trace("reduce_intra_in_order_binary", segsize));
  const int p = c.comm_size;
  reduce_generic(c, build_in_order_bintree(p), count,
                 computed_segcount(segsize, c.type_size, count));
  // The in-order tree is rooted at size-1; its result then goes to the real root.
  if (p - 1 != 0) {
    c.rank(0).recv(p - 1, count * c.type_size);
    c.rank(p - 1).send(0, count * c.type_size);
  }
}

void reduce_redscat_gather(Context& c, std::int64_t count) {
  c.trace("reduce_intra_redscat_gather");
  const RabenseifnerHalving h = rabenseifner_halving(c.comm_size);
  if (h.pof2 < 2 || count < h.pof2) {
    reduce_basic_linear(c, count);
    return;
  }
  const std::int64_t type = c.type_size;
  const int vroot = 0;  // root 0 is even (or rem == 0): vroot = 0
  for (int r = 0; r < c.comm_size; ++r) {
    // Steps 1-2: the fold and the reduce-scatter.
    const HalvingCounts halved = fold_and_halve(c, h, r, count);
    if (halved.vrank == -1) continue;
    RankProgram& prog = c.rank(r);
    // Step 3: binomial gather of the pieces to the root.
    int step = h.nsteps - 1;
    for (int mask = h.pof2 >> 1; mask > 0; mask >>= 1) {
      const int vdest = halved.vrank ^ mask;
      const int dest = h.real_rank(vdest);
      const int vdest_tree = (vdest >> step) << step;
      const int vroot_tree = (vroot >> step) << step;
      if (vdest_tree == vroot_tree) {
        prog.send(dest, halved.rcount[step] * type);
        break;
      }
      prog.recv(dest, halved.scount[step] * type);
      --step;
    }
  }
}

void reduce_by_id(Context& c, int id, std::int64_t count, int segsize, int fanout) {
  switch (id) {
    case 1:
      return reduce_basic_linear(c, count);
    case 2:
      return reduce_chain(c, count, segsize, fanout);
    case 3:
      return reduce_pipeline(c, count, segsize);
    case 4:
      return reduce_binary(c, count, segsize);
    case 5:
      return reduce_binomial(c, count, segsize);
    case 6:
      return reduce_in_order_binary(c, count, segsize);
    case 7:
      return reduce_redscat_gather(c, count);
    default:
      throw AlgorithmOutOfRange("reduce algorithm " + std::to_string(id) +
                                " does not exist in Open MPI 4.1 (1-7)");
  }
}

}  // namespace colltune::sim::algo
