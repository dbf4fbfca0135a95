// The communication trees of Open MPI's coll/base (ompi/mca/coll/base/coll_base_topo.c), built
// for every rank at once. Children are listed in the order the algorithms visit them.
#pragma once

#include <vector>

namespace colltune::sim {

struct Tree {
  int root = 0;
  std::vector<int> parent;                 // -1 for the root
  std::vector<std::vector<int>> children;  // per rank, in tree_next[] order

  int size() const { return static_cast<int>(parent.size()); }
};

// ompi_coll_base_topo_build_tree: a `fanout`-ary tree laid out level by level (bintree: 2).
Tree build_tree(int fanout, int size, int root);
// ompi_coll_base_topo_build_in_order_bintree: binary tree rooted at size-1 for non-commutative
// reductions.
Tree build_in_order_bintree(int size);
// ompi_coll_base_topo_build_bmtree: binomial tree (bcast), children by increasing mask.
Tree build_bmtree(int size, int root);
// ompi_coll_base_topo_build_in_order_bmtree: binomial tree whose subtrees hold consecutive
// ranks (gather, reduce binomial).
Tree build_in_order_bmtree(int size, int root);
// ompi_coll_base_topo_build_kmtree: k-nomial tree of the given radix.
Tree build_kmtree(int size, int root, int radix);
// ompi_coll_base_topo_build_chain: `fanout` chains hanging off the root (fanout < 1 becomes 1,
// above 32 (MAXTREEFANOUT) becomes 32, above size-1 becomes size-1).
Tree build_chain(int fanout, int size, int root);

inline constexpr int kMaxTreeFanout = 32;  // MAXTREEFANOUT

}  // namespace colltune::sim
