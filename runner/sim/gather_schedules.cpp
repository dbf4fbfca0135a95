// Gather algorithms of Open MPI 4.1.x (ompi/mca/coll/base/coll_base_gather.c), rank by rank.
#include <stdexcept>
#include <vector>

#include "runner/sim/algorithms.h"
#include "runner/sim/collective_schedules.h"

namespace colltune::sim::algo {

void gather_basic_linear(Context& c, std::int64_t count) {
  c.trace("gather_intra_basic_linear");
  const std::int64_t bytes = count * c.type_size;
  for (int i = 1; i < c.comm_size; ++i) {
    c.rank(i).send(0, bytes);
    c.rank(0).recv(i, bytes);  // the root receives in rank order, one at a time
  }
}

void gather_binomial(Context& c, std::int64_t count) {
  c.trace("gather_intra_binomial");
  const int p = c.comm_size;
  const Tree tree = build_in_order_bmtree(p, 0);
  for (int v = 0; v < p; ++v) {
    RankProgram& prog = c.rank(v);
    std::int64_t total = count;
    if (v % 2 == 0) {
      for (int kid : tree.children[v]) {
        std::int64_t blocks = kid - v;
        if (blocks > p - kid) blocks = p - kid;
        prog.recv(kid, (static_cast<std::int64_t>(p) * count - total) * c.type_size);
        total += blocks * count;
      }
    }
    if (v != 0) prog.send(tree.parent[v], total * c.type_size);
  }
}

void gather_linear_sync(Context& c, std::int64_t count, int first_segment_size) {
  c.trace("gather_intra_linear_sync segsize=" + std::to_string(first_segment_size));
  const std::int64_t type = c.type_size;
  const std::int64_t first = computed_segcount(first_segment_size, type, count);
  RankProgram& root = c.rank(0);
  std::vector<RequestId> second(static_cast<std::size_t>(c.comm_size), kNoRequest);
  for (int i = 1; i < c.comm_size; ++i) {
    // Root: one peer at a time, a zero-byte "go", then the first segment; second segments
    // overlap and are awaited at the end.
    const RequestId first_req = root.irecv(i, first * type);
    root.send(i, 0);
    second[i] = root.irecv(i, (count - first) * type);
    root.wait(first_req);
    RankProgram& peer = c.rank(i);
    peer.recv(0, 0);
    peer.send(0, first * type);
    peer.send(0, (count - first) * type);
  }
  root.wait_all(second);
}

void gather_by_id(Context& c, int id, std::int64_t count, int segsize) {
  switch (id) {
    case 1:
      return gather_basic_linear(c, count);
    case 2:
      return gather_binomial(c, count);
    case 3:
      return gather_linear_sync(c, count, segsize);
    default:
      throw AlgorithmOutOfRange("gather algorithm " + std::to_string(id) +
                                " does not exist in Open MPI 4.1 (1-3)");
  }
}

}  // namespace colltune::sim::algo
