// Trees of Open MPI's coll_base_topo.c, checked against hand-derived shapes (the figures in the
// Open MPI source comments) and for consistency at many sizes and roots.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "runner/sim/topology.h"

namespace colltune::sim {
namespace {

using Kids = std::vector<int>;

// Every rank but the root has one parent listing it as a child, and all are reachable.
void expect_consistent(const Tree& t, const std::string& what) {
  SCOPED_TRACE(what);
  const int n = t.size();
  EXPECT_EQ(t.parent[t.root], -1);
  std::set<int> seen{t.root};
  std::function<void(int)> walk = [&](int r) {
    for (int kid : t.children[r]) {
      ASSERT_GE(kid, 0);
      ASSERT_LT(kid, n);
      EXPECT_EQ(t.parent[kid], r) << "child " << kid << " of " << r;
      EXPECT_TRUE(seen.insert(kid).second) << "rank " << kid << " reached twice";
      walk(kid);
    }
  };
  walk(t.root);
  EXPECT_EQ(static_cast<int>(seen.size()), n);
}

TEST(Topology, BinomialTreeOfEight) {
  const Tree t = build_bmtree(8, 0);
  EXPECT_EQ(t.children[0], (Kids{1, 2, 4}));
  EXPECT_EQ(t.children[1], (Kids{3, 5}));
  EXPECT_EQ(t.children[2], (Kids{6}));
  EXPECT_EQ(t.children[3], (Kids{7}));
  EXPECT_TRUE(t.children[4].empty());
  EXPECT_EQ(t.parent[7], 3);
  EXPECT_EQ(t.parent[6], 2);
}

TEST(Topology, InOrderBinomialTreeHoldsContiguousSubtrees) {
  const Tree t = build_in_order_bmtree(8, 0);
  EXPECT_EQ(t.children[0], (Kids{1, 2, 4}));
  EXPECT_TRUE(t.children[1].empty());
  EXPECT_EQ(t.children[2], (Kids{3}));
  EXPECT_EQ(t.children[4], (Kids{5, 6}));
  EXPECT_EQ(t.children[6], (Kids{7}));
}

TEST(Topology, BinaryTreeOfSeven) {
  // coll_base_topo.c: fanout 2, size 7: 0 -> 1 2; 1 -> 3 5; 2 -> 4 6.
  const Tree t = build_tree(2, 7, 0);
  EXPECT_EQ(t.children[0], (Kids{1, 2}));
  EXPECT_EQ(t.children[1], (Kids{3, 5}));
  EXPECT_EQ(t.children[2], (Kids{4, 6}));
  EXPECT_EQ(t.parent[5], 1);
  EXPECT_EQ(t.parent[6], 2);
}

TEST(Topology, InOrderBinaryTreeIsRootedAtLastRank) {
  // coll_base_topo.c figure, size 9: 8 -> 7 3; 7 -> 6 5; 3 -> 2 1; 5 -> 4; 1 -> 0.
  const Tree t = build_in_order_bintree(9);
  EXPECT_EQ(t.root, 8);
  EXPECT_EQ(t.children[8], (Kids{7, 3}));
  EXPECT_EQ(t.children[7], (Kids{6, 5}));
  EXPECT_EQ(t.children[3], (Kids{2, 1}));
  EXPECT_EQ(t.children[5], (Kids{4}));
  EXPECT_TRUE(t.children[6].empty());
  EXPECT_EQ(t.children[1], (Kids{0}));
  // size 4: 3 -> 2 1; 1 -> 0.
  const Tree four = build_in_order_bintree(4);
  EXPECT_EQ(four.children[3], (Kids{2, 1}));
  EXPECT_EQ(four.children[1], (Kids{0}));
}

TEST(Topology, KnomialTreesMatchTheOpenMpiFigure) {
  // comm_size 10: radix 4: 0 -> 4 8 1 2 3; 4 -> 5 6 7; 8 -> 9.
  const Tree r4 = build_kmtree(10, 0, 4);
  EXPECT_EQ(r4.children[0], (Kids{4, 8, 1, 2, 3}));
  EXPECT_EQ(r4.children[4], (Kids{5, 6, 7}));
  EXPECT_EQ(r4.children[8], (Kids{9}));
  // radix 2: 0 -> 8 4 2 1; 8 -> 9; 4 -> 6 5; 6 -> 7; 2 -> 3.
  const Tree r2 = build_kmtree(10, 0, 2);
  EXPECT_EQ(r2.children[0], (Kids{8, 4, 2, 1}));
  EXPECT_EQ(r2.children[4], (Kids{6, 5}));
  EXPECT_EQ(r2.children[6], (Kids{7}));
  // radix 3: 0 -> 9 3 6 1 2; 3 -> 4 5; 6 -> 7 8.
  const Tree r3 = build_kmtree(10, 0, 3);
  EXPECT_EQ(r3.children[0], (Kids{9, 3, 6, 1, 2}));
  EXPECT_EQ(r3.children[3], (Kids{4, 5}));
  EXPECT_EQ(r3.children[6], (Kids{7, 8}));
}

TEST(Topology, ChainsSplitTheRanksIntoFanoutColumns) {
  // 9 ranks after the root, 3 chains of 3.
  const Tree even = build_chain(3, 10, 0);
  EXPECT_EQ(even.children[0], (Kids{1, 4, 7}));
  EXPECT_EQ(even.children[1], (Kids{2}));
  EXPECT_EQ(even.children[3], Kids{});
  EXPECT_EQ(even.parent[4], 0);
  EXPECT_EQ(even.parent[9], 8);
  // 11 ranks after the root, 5 chains: the first (11 % 5 = 1) is one longer.
  const Tree uneven = build_chain(5, 12, 0);
  EXPECT_EQ(uneven.children[0], (Kids{1, 4, 6, 8, 10}));
  EXPECT_EQ(uneven.children[2], (Kids{3}));
  EXPECT_TRUE(uneven.children[3].empty());
  EXPECT_EQ(uneven.children[4], (Kids{5}));
  EXPECT_EQ(uneven.parent[11], 10);
}

TEST(Topology, ChainFanoutIsClampedLikeOpenMpi) {
  // fanout < 1 -> 1 (a pipeline); > 32 -> 32; > size-1 -> size-1.
  const Tree zero = build_chain(0, 5, 0);
  EXPECT_EQ(zero.children[0], (Kids{1}));
  EXPECT_EQ(zero.children[3], (Kids{4}));
  const Tree wide = build_chain(40, 40, 0);
  EXPECT_EQ(wide.children[0].size(), 32u);
  const Tree small = build_chain(8, 4, 0);
  EXPECT_EQ(small.children[0], (Kids{1, 2, 3}));
}

TEST(Topology, AllTreesAreConsistentForManySizesAndRoots) {
  for (int size = 1; size <= 40; ++size) {
    for (int root : {0, size / 2, size - 1}) {
      const std::string at = " size " + std::to_string(size) + " root " + std::to_string(root);
      expect_consistent(build_tree(2, size, root), "bintree" + at);
      expect_consistent(build_tree(3, size, root), "tree3" + at);
      expect_consistent(build_bmtree(size, root), "bmtree" + at);
      expect_consistent(build_in_order_bmtree(size, root), "in-order bmtree" + at);
      for (int radix : {2, 3, 4, 7})
        expect_consistent(build_kmtree(size, root, radix), "kmtree" + at);
      for (int fanout : {1, 2, 3, 5, 32})
        expect_consistent(build_chain(fanout, size, root), "chain" + at);
    }
    expect_consistent(build_in_order_bintree(size),
                      "in-order bintree size " + std::to_string(size));
  }
}

TEST(Topology, RejectsBadArguments) {
  EXPECT_THROW(build_tree(0, 4, 0), std::invalid_argument);
  EXPECT_THROW(build_bmtree(4, 4), std::invalid_argument);
  EXPECT_THROW(build_kmtree(4, 0, 1), std::invalid_argument);
  EXPECT_THROW(build_chain(1, 0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace colltune::sim
