// Broadcast algorithms of Open MPI 4.1.x (ompi/mca/coll/base/coll_base_bcast.c), rank by rank.
#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "runner/sim/algorithms.h"
#include "runner/sim/collective_schedules.h"

namespace colltune::sim::algo {

namespace {

std::int64_t rectify_diff(std::int64_t a, std::int64_t b) { return a > b ? a - b : 0; }

// Binomial-tree scatter shared by both scatter_allgather variants. Returns, per rank, the
// number of elements it holds afterwards (curr_count).
std::vector<std::int64_t> binomial_scatter(Context& c, std::int64_t count,
                                           std::int64_t scatter_count) {
  const int p = c.comm_size;
  std::vector<std::int64_t> curr(p, 0), incoming(p, 0);
  curr[0] = count;
  for (int v = 0; v < p; ++v) {  // parents have smaller vranks, so their sends come first
    RankProgram& prog = c.rank(v);
    int mask = 1;
    while (mask < p) {
      if (v & mask) {
        const int parent = v - mask;
        const std::int64_t recv_count = rectify_diff(count, v * scatter_count);
        if (recv_count == 0) {
          curr[v] = 0;
        } else {
          prog.recv(parent, recv_count * c.type_size);
          curr[v] = incoming[v];
        }
        break;
      }
      mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
      if (v + mask < p) {
        const std::int64_t send_count = rectify_diff(curr[v], scatter_count * mask);
        if (send_count > 0) {
          prog.send(v + mask, send_count * c.type_size);
          incoming[v + mask] = send_count;
          curr[v] -= send_count;
        }
      }
      mask >>= 1;
    }
  }
  return curr;
}

}  // namespace

void bcast_generic(Context& c, const Tree& tree, std::int64_t count, std::int64_t segcount) {
  const std::int64_t num_segments = (count + segcount - 1) / segcount;
  auto seg_bytes = [&](std::int64_t seg) {
    return (seg == num_segments - 1 ? count - seg * segcount : segcount) * c.type_size;
  };
  std::int64_t edges = 0;  // every segment goes down every edge once
  for (int r = 0; r < c.comm_size; ++r) edges += static_cast<std::int64_t>(tree.children[r].size());
  c.schedule.expect_sends(edges * num_segments);
  std::vector<RequestId> sends;
  for (int r = 0; r < c.comm_size; ++r) {
    RankProgram& prog = c.rank(r);
    const auto& kids = tree.children[r];
    auto send_to_children = [&](std::int64_t bytes) {
      sends.clear();
      for (int kid : kids) sends.push_back(prog.isend(kid, bytes));
      prog.wait_all(sends);
    };
    if (r == tree.root) {
      for (std::int64_t seg = 0; seg < num_segments; ++seg) send_to_children(seg_bytes(seg));
    } else if (!kids.empty()) {
      // Two receives in flight: post the next segment, then forward the previous one.
      RequestId previous = prog.irecv(tree.parent[r], segcount * c.type_size);
      for (std::int64_t seg = 1; seg < num_segments; ++seg) {
        const RequestId next = prog.irecv(tree.parent[r], segcount * c.type_size);
        prog.wait(previous);
        send_to_children(segcount * c.type_size);
        previous = next;
      }
      prog.wait(previous);
      send_to_children(seg_bytes(num_segments - 1));
    } else {
      RequestId previous = prog.irecv(tree.parent[r], segcount * c.type_size);
      for (std::int64_t seg = 1; seg < num_segments; ++seg) {
        const RequestId next = prog.irecv(tree.parent[r], segcount * c.type_size);
        prog.wait(previous);
        previous = next;
      }
      prog.wait(previous);
    }
  }
}

void bcast_basic_linear(Context& c, std::int64_t count) {
  c.trace("bcast_intra_basic_linear");
  const std::int64_t bytes = count * c.type_size;
  std::vector<RequestId> sends;
  for (int i = 1; i < c.comm_size; ++i) sends.push_back(c.rank(0).isend(i, bytes));
  c.rank(0).wait_all(sends);
  for (int i = 1; i < c.comm_size; ++i) c.rank(i).recv(0, bytes);
}

void bcast_chain(Context& c, std::int64_t count, int segsize, int chains) {
  c.trace(seg_trace("bcast_intra_chain", segsize) + " fanout=" + std::to_string(chains));
  bcast_generic(c, build_chain(chains, c.comm_size, 0), count,
                computed_segcount(segsize, c.type_size, count));
}

void bcast_pipeline(Context& c, std::int64_t count, int segsize) {
  c.trace(seg_trace("bcast_intra_pipeline", segsize));
  bcast_generic(c, build_chain(1, c.comm_size, 0), count,
                computed_segcount(segsize, c.type_size, count));
}

void bcast_bintree(Context& c, std::int64_t count, int segsize) {
  c.trace(seg_trace("bcast_intra_bintree", segsize));
  bcast_generic(c, build_tree(2, c.comm_size, 0), count,
                computed_segcount(segsize, c.type_size, count));
}

void bcast_binomial(Context& c, std::int64_t count, int segsize) {
  c.trace(seg_trace("bcast_intra_binomial", segsize));
  bcast_generic(c, build_bmtree(c.comm_size, 0), count,
                computed_segcount(segsize, c.type_size, count));
}

void bcast_knomial(Context& c, std::int64_t count, int segsize, int radix) {
  c.trace(seg_trace("bcast_intra_knomial", segsize) + " radix=" + std::to_string(radix));
  bcast_generic(c, build_kmtree(c.comm_size, 0, radix), count,
                computed_segcount(segsize, c.type_size, count));
}

void bcast_split_bintree(Context& c, std::int64_t count, int segsize_in) {
  c.trace(seg_trace("bcast_intra_split_bintree", segsize_in));
  const int p = c.comm_size;
  std::int64_t segsize = segsize_in;
  const std::int64_t type = c.type_size;
  std::array<std::int64_t, 2> counts{(count + 1) / 2, 0};
  counts[1] = count - counts[0];
  std::array<std::int64_t, 2> segcount{counts[0], counts[1]};
  std::array<std::int64_t, 2> num_segments{1, 1};
  if (segsize > 0) {
    if (segsize < type) segsize = type;
    segcount[0] = segcount[1] = segsize / type;
    for (int i = 0; i < 2; ++i) num_segments[i] = (counts[i] + segcount[i] - 1) / segcount[i];
  }
  if (counts[0] == 0 || counts[1] == 0 || segsize > counts[0] * type ||
      segsize > counts[1] * type) {
    bcast_chain(c, count, static_cast<int>(segsize), 1);  // "call linear version here!"
    return;
  }
  const Tree tree = build_tree(2, p, 0);
  auto last_count = [&](int half) {
    return counts[half] - (num_segments[half] - 1) * segcount[half];
  };
  // Step 1: each half goes down one subtree (left = odd shifted ranks, right = even).
  for (int r = 0; r < p; ++r) {
    RankProgram& prog = c.rank(r);
    const auto& kids = tree.children[r];
    const int lr = (r % p + 1) % 2;
    if (r == 0) {
      for (std::int64_t seg = 0; seg < num_segments[0]; ++seg)
        for (int i = 0; i < static_cast<int>(kids.size()) && i < 2; ++i) {
          if (seg >= num_segments[i]) continue;
          const std::int64_t n = seg == num_segments[i] - 1 ? last_count(i) : segcount[i];
          prog.send(kids[i], n * type);
        }
    } else if (!kids.empty()) {
      RequestId base = prog.irecv(tree.parent[r], segcount[lr] * type);
      for (std::int64_t seg = 1; seg < num_segments[lr]; ++seg) {
        const RequestId next = prog.irecv(tree.parent[r], segcount[lr] * type);
        prog.wait(base);
        for (int kid : kids) prog.send(kid, segcount[lr] * type);
        base = next;
      }
      prog.wait(base);
      const std::int64_t last = num_segments[lr] > 1 ? last_count(lr) : segcount[lr];
      for (int kid : kids) prog.send(kid, last * type);
    } else {
      for (std::int64_t seg = 0; seg < num_segments[lr]; ++seg)
        prog.recv(tree.parent[r],
                  (seg == num_segments[lr] - 1 ? last_count(lr) : segcount[lr]) * type);
    }
  }
  // Step 2: exchange halves with the twin in the other subtree.
  for (int r = 0; r < p; ++r) {
    RankProgram& prog = c.rank(r);
    const int lr = (r % p + 1) % 2;
    const int pair = lr == 0 ? (r + 1) % p : (r + p - 1) % p;
    if (p % 2 != 0) {
      if (r != 0) prog.sendrecv(pair, counts[lr] * type, pair, counts[(lr + 1) % 2] * type);
    } else if (r == 0) {
      prog.send(p - 1, counts[1] * type);
    } else if (r == p - 1) {
      prog.recv(0, counts[1] * type);
    } else {
      prog.sendrecv(pair, counts[lr] * type, pair, counts[(lr + 1) % 2] * type);
    }
  }
}

void bcast_scatter_allgather(Context& c, std::int64_t count) {
  c.trace("bcast_intra_scatter_allgather");
  const int p = c.comm_size;
  if (count < p) {
    bcast_basic_linear(c, count);
    return;
  }
  const std::int64_t scatter_count = (count + p - 1) / p;
  std::vector<std::int64_t> curr = binomial_scatter(c, count, scatter_count);
  // Allgather by recursive doubling; each rank restarts from its own block.
  for (int v = 0; v < p; ++v)
    curr[v] = std::min(scatter_count, rectify_diff(count, v * scatter_count));
  std::vector<std::int64_t> recv_count(p, 0);
  for (int mask = 1; mask < p; mask <<= 1) {
    const std::vector<std::int64_t> before = curr;
    for (int v = 0; v < p; ++v) {
      const int vremote = v ^ mask;
      if (vremote >= p) continue;
      const int vremote_tree_root = vremote / mask * mask;
      const std::int64_t upper = rectify_diff(count, vremote_tree_root * scatter_count);
      c.rank(v).sendrecv(vremote, before[v] * c.type_size, vremote, upper * c.type_size);
      recv_count[v] = before[vremote];
      curr[v] += recv_count[v];
    }
    // Non-power-of-two: ranks whose partner did not exist get the data by recursive halving.
    for (int rh = mask >> 1; rh > 0; rh >>= 1) {
      std::vector<std::pair<int, std::int64_t>> delivered;  // (receiver, elements)
      for (int v = 0; v < p; ++v) {
        const int vrank_tree_root = v / mask * mask;
        const int vremote_tree_root = (v ^ mask) / mask * mask;
        if (vremote_tree_root + mask <= p) continue;
        const int nprocs_alldata = p - vrank_tree_root - mask;
        const int vremote = v ^ rh;
        const int tree_root = v / (rh << 1) * (rh << 1);
        if (vremote > v && v < tree_root + nprocs_alldata &&
            vremote >= tree_root + nprocs_alldata) {
          c.rank(v).send(vremote, recv_count[v] * c.type_size);
          delivered.emplace_back(vremote, recv_count[v]);
        } else if (vremote < v && vremote < tree_root + nprocs_alldata &&
                   v >= tree_root + nprocs_alldata) {
          c.rank(v).recv(vremote, count * c.type_size);
        }
      }
      for (const auto& [receiver, n] : delivered) {
        recv_count[receiver] = n;
        curr[receiver] += n;
      }
    }
  }
}

void bcast_scatter_allgather_ring(Context& c, std::int64_t count) {
  c.trace("bcast_intra_scatter_allgather_ring");
  const int p = c.comm_size;
  if (count < p) {
    bcast_basic_linear(c, count);
    return;
  }
  const std::int64_t scatter_count = (count + p - 1) / p;
  binomial_scatter(c, count, scatter_count);
  auto block_count = [&](int block) {
    return std::min(scatter_count, rectify_diff(count, block * scatter_count));
  };
  for (int v = 0; v < p; ++v) {
    const int left = (v - 1 + p) % p, right = (v + 1) % p;
    int send_block = v, recv_block = (v - 1 + p) % p;
    for (int i = 1; i < p; ++i) {
      c.rank(v).sendrecv(right, block_count(send_block) * c.type_size, left,
                         block_count(recv_block) * c.type_size);
      send_block = recv_block;
      recv_block = (recv_block + p - 1) % p;
    }
  }
}

void bcast_by_id(Context& c, int id, std::int64_t count, int segsize, int fanout) {
  switch (id) {
    case 1:
      return bcast_basic_linear(c, count);
    case 2:
      return bcast_chain(c, count, segsize, fanout);
    case 3:
      return bcast_pipeline(c, count, segsize);
    case 4:
      return bcast_split_bintree(c, count, segsize);
    case 5:
      return bcast_bintree(c, count, segsize);
    case 6:
      return bcast_binomial(c, count, segsize);
    case 7:
      return bcast_knomial(c, count, segsize, c.knomial_radix);
    case 8:
      return bcast_scatter_allgather(c, count);
    case 9:
      return bcast_scatter_allgather_ring(c, count);
    default:
      throw AlgorithmOutOfRange("bcast algorithm " + std::to_string(id) +
                                " does not exist in Open MPI 4.1 (1-9)");
  }
}

}  // namespace colltune::sim::algo
