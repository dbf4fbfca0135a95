// Transcribed rank by rank from Open MPI's coll_base_topo.c (same arithmetic, same child order),
// so that the simulated schedules send exactly the messages the real trees send.
#include "runner/sim/topology.h"

#include <stdexcept>

namespace colltune::sim {

namespace {

Tree empty_tree(int size, int root) {
  if (size < 1) throw std::invalid_argument("tree size must be >= 1");
  if (root < 0 || root >= size) throw std::invalid_argument("tree root out of range");
  Tree t;
  t.root = root;
  t.parent.assign(size, -1);
  t.children.assign(size, {});
  return t;
}

int pown(int fanout, int num) {
  if (num < 0) return 0;
  if (num == 1) return fanout;
  if (fanout == 2) return 1 << num;
  int p = 1;
  for (int j = 0; j < num; ++j) p *= fanout;
  return p;
}

int calculate_level(int fanout, int rank) {
  if (rank < 0) return -1;
  int level = 0;
  for (int num = 0; num <= rank; ++level) num += pown(fanout, level);
  return level - 1;
}

int calculate_num_nodes_up_to_level(int fanout, int level) {
  if (fanout == 1) return level;
  return (pown(fanout, level) - 1) / (fanout - 1);
}

// opal_next_poweroftwo: the smallest power of two strictly greater than value (1 for 0).
int next_power_of_two(int value) {
  int p = 1;
  while (p <= value) p <<= 1;
  return p;
}

}  // namespace

Tree build_tree(int fanout, int size, int root) {
  if (fanout < 1 || fanout > kMaxTreeFanout)
    throw std::invalid_argument("tree fanout out of range");
  Tree t = empty_tree(size, root);
  if (size < 2) return t;
  for (int rank = 0; rank < size; ++rank) {
    int shifted = rank - root;
    if (shifted < 0) shifted += size;
    const int level = calculate_level(fanout, shifted);
    const int delta = pown(fanout, level);
    for (int i = 0; i < fanout; ++i) {
      const int schild = shifted + delta * (i + 1);
      if (schild >= size) break;
      t.children[rank].push_back((schild + root) % size);
    }
    if (rank == root) continue;
    const int slimit = calculate_num_nodes_up_to_level(fanout, level);
    int sparent = shifted;
    if (sparent < fanout) {
      sparent = 0;
    } else {
      while (sparent >= slimit) sparent -= delta / fanout;
    }
    t.parent[rank] = (sparent + root) % size;
  }
  return t;
}

Tree build_in_order_bintree(int comm_size) {
  Tree t = empty_tree(comm_size, comm_size - 1);
  for (int rank = 0; rank < comm_size; ++rank) {
    int myrank = rank, size = comm_size, parent = comm_size - 1, delta = 0;
    while (true) {
      const int rightsize = size >> 1;
      int lchild = -1, rchild = -1;
      if (size - 1 > 0) {
        lchild = parent - 1;
        if (lchild > 0) rchild = rightsize - 1;
      }
      if (myrank == parent) {
        if (lchild >= 0) t.children[rank].push_back(lchild + delta);
        if (rchild >= 0) t.children[rank].push_back(rchild + delta);
        break;
      }
      if (myrank > rchild) {
        if (myrank == lchild) t.parent[rank] = parent + delta;
        size = size - rightsize - 1;
        delta = delta + rightsize;
        myrank = myrank - rightsize;
        parent = size - 1;
      } else {
        if (myrank == rchild) t.parent[rank] = parent + delta;
        size = rightsize;
        parent = rchild;
      }
    }
  }
  return t;
}

Tree build_bmtree(int size, int root) {
  Tree t = empty_tree(size, root);
  for (int rank = 0; rank < size; ++rank) {
    int index = rank - root;
    if (index < 0) index += size;
    int mask = next_power_of_two(index);
    if (rank != root) {
      int remote = (index ^ (mask >> 1)) + root;
      if (remote >= size) remote -= size;
      t.parent[rank] = remote;
    }
    while (mask < size) {
      int remote = index ^ mask;
      if (remote >= size) break;
      remote += root;
      if (remote >= size) remote -= size;
      t.children[rank].push_back(remote);
      mask <<= 1;
    }
  }
  return t;
}

Tree build_in_order_bmtree(int size, int root) {
  Tree t = empty_tree(size, root);
  for (int rank = 0; rank < size; ++rank) {
    const int vrank = (rank - root + size) % size;
    for (int mask = 1; mask < size; mask <<= 1) {
      const int remote = vrank ^ mask;
      if (remote < vrank) {
        t.parent[rank] = (remote + root) % size;
        break;
      }
      if (remote < size) t.children[rank].push_back((remote + root) % size);
    }
  }
  return t;
}

Tree build_kmtree(int size, int root, int radix) {
  if (radix < 2) throw std::invalid_argument("k-nomial radix must be >= 2");
  Tree t = empty_tree(size, root);
  for (int rank = 0; rank < size; ++rank) {
    const int vrank = (rank - root + size) % size;
    long long mask = 1;
    while (mask < size) {
      if (vrank % (radix * mask)) {
        const long long vparent = vrank / (radix * mask) * (radix * mask);
        t.parent[rank] = static_cast<int>((vparent + root) % size);
        break;
      }
      mask *= radix;
    }
    mask /= radix;
    while (mask > 0) {
      for (int r = 1; r < radix; ++r) {
        const long long child = vrank + mask * r;
        if (child < size) t.children[rank].push_back(static_cast<int>((child + root) % size));
      }
      mask /= radix;
    }
  }
  return t;
}

Tree build_chain(int fanout, int size, int root) {
  Tree t = empty_tree(size, root);
  if (fanout < 1) fanout = 1;
  if (fanout > kMaxTreeFanout) fanout = kMaxTreeFanout;
  if (size - 1 < fanout) fanout = size - 1;
  if (size < 2) return t;
  if (fanout == 1) {
    for (int rank = 0; rank < size; ++rank) {
      const int srank = (rank - root + size) % size;
      if (srank != 0) t.parent[rank] = (srank - 1 + root) % size;
      if (srank + 1 < size) t.children[rank].push_back((srank + 1 + root) % size);
    }
    return t;
  }
  int maxchainlen = (size - 1) / fanout;
  int mark;
  if ((size - 1) % fanout != 0) {
    ++maxchainlen;
    mark = (size - 1) % fanout;
  } else {
    mark = fanout + 1;
  }
  for (int rank = 0; rank < size; ++rank) {
    const int srank = (rank - root + size) % size;
    if (srank == 0) {
      int next = (root + 1) % size;
      t.children[rank].push_back(next);
      for (int i = 1; i < fanout; ++i) {
        next = next + maxchainlen;
        if (i > mark) --next;
        next %= size;
        t.children[rank].push_back(next);
      }
      continue;
    }
    int head, len;
    if (srank - 1 < mark * maxchainlen) {
      const int column = (srank - 1) / maxchainlen;
      head = 1 + column * maxchainlen;
      len = maxchainlen;
    } else {
      const int column = mark + (srank - 1 - mark * maxchainlen) / (maxchainlen - 1);
      head = mark * maxchainlen + 1 + (column - mark) * (maxchainlen - 1);
      len = maxchainlen - 1;
    }
    const int sprev = srank == head ? 0 : srank - 1;
    t.parent[rank] = (sprev + root) % size;
    if (srank != head + len - 1 && srank + 1 < size)
      t.children[rank].push_back((srank + 1 + root) % size);
  }
  return t;
}

}  // namespace colltune::sim
