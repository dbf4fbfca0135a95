#include "optimizer/algorithm_cost_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "core/fixed_decision.h"
#include "core/segment_count.h"
#include "core/stats.h"
#include "optimizer/hyperparameter_fit.h"

namespace colltune {
namespace {

constexpr int kMaxChainFanout = 32;  // build_chain clamps the fan-out to [1, 32]
constexpr int kKnomialRadix = 4;     // coll_tuned_bcast_algorithm_knomial_radix's default

int ceil_log2(int p) {
  int l = 0;
  while ((1LL << l) < p) ++l;
  return l;
}

int floor_log2(int p) {
  int l = 0;
  while ((2LL << l) <= p) ++l;
  return l;
}

// Trees as coll_base_topo.c builds them: its rank labels (root 0 unless said otherwise) and each
// rank's children in the order it serves them (sends to them in a bcast, posts their receives
// in a reduce). The one-level terms need each tree's shape and that order; where its subtrees
// sit (neighbouring ranks or strided ones) decides, at the node level, what crosses nodes.
enum class Labelling {
  chain,              // build_chain: chains of neighbouring ranks, the longest first
  level_binary,       // build_tree(2): rank v at level L has children v + 2^L and v + 2^(L+1)
  binomial,           // build_bmtree: v + 2^j for every 2^j > v (strided subtrees, largest first)
  in_order_binomial,  // build_in_order_bmtree: v + 2^j below v's lowest set bit, smallest first
  knomial,            // build_kmtree (radix 4): v + d 4^j below v's lowest radix power, largest
                      // first
  in_order_binary,    // build_in_order_bintree: root P - 1, subtrees of neighbouring ranks
};

struct LabelledTree {
  int root = 0;
  std::vector<std::vector<int>> kids;  // in the order a rank serves them
};

LabelledTree build_labelled(Labelling t, int param, int p) {
  LabelledTree tree;
  tree.kids.resize(p);
  auto& kids = tree.kids;
  switch (t) {
    case Labelling::chain: {  // `param` chains of nearly equal length
      const int f = std::min(std::clamp(param, 1, kMaxChainFanout), p - 1);
      const int base = (p - 1) / f, extra = (p - 1) % f;
      int next = 1;
      for (int c = 0; c < f; ++c) {
        int prev = 0;
        for (int i = 0; i < base + (c < extra ? 1 : 0); ++i)
          kids[prev].push_back(next), prev = next++;
      }
      break;
    }
    case Labelling::binomial:
      for (int v = 0; v < p; ++v)
        for (long long mask = 1; v + mask < p; mask <<= 1)
          if (mask > v) kids[v].push_back(static_cast<int>(v + mask));
      break;
    case Labelling::level_binary: {
      int level_start = 0;  // first rank of v's level; 2^L ranks per level
      for (long long width = 1; level_start < p; level_start += width, width *= 2)
        for (long long v = level_start; v < std::min<long long>(p, level_start + width); ++v)
          for (long long c = v + width; c <= v + 2 * width && c < p; c += width)
            kids[v].push_back(static_cast<int>(c));
      break;
    }
    case Labelling::in_order_binomial:
      for (int v = 0; v < p; ++v)
        for (long long mask = 1; v + mask < p && (v == 0 || mask < (v & -v)); mask <<= 1)
          kids[v].push_back(static_cast<int>(v + mask));
      break;
    case Labelling::knomial: {
      for (int v = 0; v < p; ++v) {
        long long top = 1;  // the first power of the radix past v's: its subtree is [v, v + top)
        while (top < p && v % (top * param) == 0) top *= param;
        for (long long step = top / param; step >= 1; step /= param)
          for (int d = 1; d < param && v + d * step < p; ++d)
            kids[v].push_back(static_cast<int>(v + d * step));
      }
      break;
    }
    case Labelling::in_order_binary: {
      // A range [lo, lo + n) is rooted at its last rank; its right subtree is the first n / 2
      // ranks, its left subtree the rest but the root (ompi's left child is served first).
      tree.root = p - 1;
      std::vector<std::pair<int, int>> ranges{{0, p}};
      while (!ranges.empty()) {
        const auto [lo, n] = ranges.back();
        ranges.pop_back();
        const int root = lo + n - 1, right = n / 2, left = n - 1 - right;
        if (left > 0)
          kids[root].push_back(lo + right + left - 1), ranges.push_back({lo + right, left});
        if (right > 0) kids[root].push_back(lo + right - 1), ranges.push_back({lo, right});
      }
      break;
    }
  }
  return tree;
}

// A tree of coll_base_topo.c, summarised by means over its ranks of what each rank's time in the
// call counts (OSU reports the mean over ranks), in units of one segment:
struct TreeMeans {
  // Down the tree (bcast): rounds until a rank has its first segment; the sends ahead of it
  // along its path: counted to its own in each parent's order (`path_sends`: the parent posts
  // every child's send at once and a small one leaves in turn) and all of them (`path_bytes`:
  // large ones are under way together and share the parent's bandwidth); the busiest of its
  // ancestors and itself (the pipeline's period); its own children.
  double depth = 0, path_sends = 0, path_bytes = 0, period = 0, children = 0;
  double internal = 0;  // share of ranks with children
  // Up the tree (reduce): levels below a rank; the receives on its critical path below (it
  // posts its children's receives one at a time, in order, and takes each once that child has
  // taken its own); the busiest rank of its subtree (max(1, ..) counting its own sends, and
  // without).
  double height = 0, below = 0, sub_period = 0, sub_children = 0;
  double non_root = 0;  // (P - 1) / P
  // Binomial gather: blocks a rank receives (its subtree but itself) and sends (its subtree).
  double gathered = 0, sent = 0;
  // The root's own (the critical path of a reduce, which every rank of an allreduce awaits).
  double root_height = 0, root_below = 0, root_sub_period = 0;
};

TreeMeans summarise(const LabelledTree& tree) {
  const auto& kids = tree.kids;
  const int p = static_cast<int>(kids.size());
  std::vector<int> order{tree.root};  // breadth first from the root
  for (std::size_t i = 0; i < order.size(); ++i)
    for (int c : kids[order[i]]) order.push_back(c);
  std::vector<double> depth(p, 0), sends(p, 0), bytes(p, 0), period(p, 0), height(p, 0),
      below(p, 0), sub_period(p, 0), sub_children(p, 0), size(p, 1);
  period[tree.root] = static_cast<double>(kids[tree.root].size());
  for (int v : order) {
    const double k = static_cast<double>(kids[v].size());
    double ahead = 0;  // v's sends up to and including c's
    for (int c : kids[v]) {
      depth[c] = depth[v] + 1;
      sends[c] = sends[v] + ++ahead, bytes[c] = bytes[v] + k;
      period[c] = std::max(period[v], static_cast<double>(kids[c].size()));
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int v = *it;
    const double k = static_cast<double>(kids[v].size());
    double h = 0, b = 0, sp = 1, sc = k;
    for (int c : kids[v]) {
      h = std::max(h, height[c] + 1), b = std::max(b, below[c]) + 1;
      sp = std::max(sp, sub_period[c]), sc = std::max(sc, sub_children[c]);
      size[v] += size[c];
    }
    height[v] = h, below[v] = b, sub_period[v] = std::max(sp, k), sub_children[v] = sc;
  }
  TreeMeans m;
  for (int v = 0; v < p; ++v) {
    const double k = static_cast<double>(kids[v].size());
    m.depth += depth[v], m.path_sends += sends[v], m.path_bytes += bytes[v];
    m.period += period[v], m.children += k;
    m.internal += k > 0 ? 1 : 0;
    m.height += height[v], m.below += below[v], m.sub_period += sub_period[v];
    m.sub_children += sub_children[v];
    m.gathered += size[v] - 1;
    if (v != tree.root) m.sent += size[v];
  }
  for (double* x : {&m.depth, &m.path_sends, &m.path_bytes, &m.period, &m.children, &m.internal,
                    &m.height, &m.below, &m.sub_period, &m.sub_children, &m.gathered, &m.sent})
    *x /= p;
  m.non_root = (p - 1.0) / p;
  m.root_height = height[tree.root], m.root_below = below[tree.root];
  m.root_sub_period = sub_period[tree.root];
  return m;
}

// Cached per (labelling, parameter, P): building a tree of P ranks is O(P log P).
const TreeMeans& tree_means(Labelling t, int param, int p) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int>, TreeMeans> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(static_cast<int>(t), param, p);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, summarise(build_labelled(t, param, p))).first;
  return it->second;
}

// --- Node level: what crosses a node boundary (ranks_per_node Q; rank r on node r / Q) -------

// What crosses nodes in a labelled tree, as means over its ranks. An edge crosses when its two
// ranks are on different nodes; the edges of one tree level are under way together, so a
// crossing edge waits at the busier of its two NICs for the level's other crossing edges there:
// its load is the sum of `weight` over the level's crossing edges out of its sender's node, or
// into its receiver's, less its own (a weight of one segment, or of a subtree's blocks in a
// gather). Its own bytes are in the one-level terms already.
struct TreeCrossings {
  // Down (bcast): crossing edges on a rank's path from the root, the sum of their loads, the
  // largest of them (the pipeline's period through the busiest NIC on the path).
  double path_cross = 0, path_load = 0, path_peak = 0;
  // Up (reduce): the most crossing edges on a path below a rank plus its own send's, the
  // largest sum of loads likewise, and the largest load in its subtree and own send.
  double up_cross = 0, up_load = 0, up_peak = 0;
  double root_cross = 0, root_load = 0, root_peak = 0;  // the root's (what an allreduce awaits)
  // Gather (weights = subtree sizes): crossing receives and own send, and their loads in blocks.
  double gather_cross = 0, gather_load = 0;
};

// `within`: the same for the edges within a node instead (both ranks on one node), which wait
// for the level's other edges within that node (its memory system): the loads are then those of
// the node memory's shared_bytes, the counts of edges unused.
TreeCrossings summarise_crossings(const LabelledTree& tree, int q, bool subtree_weights,
                                  bool within) {
  const int p = static_cast<int>(tree.kids.size());
  const auto& kids = tree.kids;
  std::vector<int> order{tree.root}, depth(p, 0), parent(p, -1);
  for (std::size_t i = 0; i < order.size(); ++i)
    for (int c : kids[order[i]])
      order.push_back(c), depth[c] = depth[order[i]] + 1, parent[c] = order[i];
  std::vector<double> size(p, 1);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (parent[*it] >= 0) size[parent[*it]] += size[*it];
  auto crosses = [&](int c) { return parent[c] >= 0 && (parent[c] / q != c / q) != within; };
  auto weight = [&](int c) { return subtree_weights ? size[c] : 1.0; };
  // (level, node) -> the weights of the level's crossing edges leaving / entering the node.
  std::map<std::pair<int, int>, double> out, in;
  for (int c = 0; c < p; ++c)
    if (crosses(c)) out[{depth[c], parent[c] / q}] += weight(c), in[{depth[c], c / q}] += weight(c);
  std::vector<double> load(p, 0);  // of the edge into c, 0 if it does not cross
  for (int c = 0; c < p; ++c)
    if (crosses(c))
      load[c] = std::max(out[{depth[c], parent[c] / q}], in[{depth[c], c / q}]) - weight(c);
  std::vector<double> path_cross(p, 0), path_load(p, 0), path_peak(p, 0);
  for (int v : order)
    for (int c : kids[v]) {
      path_cross[c] = path_cross[v] + (crosses(c) ? 1 : 0);
      path_load[c] = path_load[v] + load[c];
      path_peak[c] = std::max(path_peak[v], load[c]);
    }
  std::vector<double> sub_cross(p, 0), sub_load(p, 0), sub_peak(p, 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (int c : kids[*it]) {
      const int v = *it;
      sub_cross[v] = std::max(sub_cross[v], sub_cross[c] + (crosses(c) ? 1 : 0));
      sub_load[v] = std::max(sub_load[v], sub_load[c] + load[c]);
      sub_peak[v] = std::max({sub_peak[v], sub_peak[c], load[c]});
    }
  TreeCrossings m;
  for (int v = 0; v < p; ++v) {
    const double own = crosses(v) ? 1 : 0;
    m.path_cross += path_cross[v], m.path_load += path_load[v], m.path_peak += path_peak[v];
    m.up_cross += sub_cross[v] + own, m.up_load += sub_load[v] + load[v];
    m.up_peak += std::max(sub_peak[v], load[v]);
    m.gather_cross += own, m.gather_load += load[v];
    for (int c : kids[v]) m.gather_cross += crosses(c) ? 1 : 0, m.gather_load += load[c];
  }
  for (double* x : {&m.path_cross, &m.path_load, &m.path_peak, &m.up_cross, &m.up_load, &m.up_peak,
                    &m.gather_cross, &m.gather_load})
    *x /= p;
  m.root_cross = sub_cross[tree.root], m.root_load = sub_load[tree.root];
  m.root_peak = sub_peak[tree.root];
  return m;
}

// Cached per (labelling, parameter, P, Q, weights, within).
const TreeCrossings& tree_crossings(Labelling t, int param, int p, int q, bool subtree_weights,
                                    bool within = false) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int, int, bool, bool>, TreeCrossings> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(static_cast<int>(t), param, p, q, subtree_weights, within);
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache
             .emplace(key,
                      summarise_crossings(build_labelled(t, param, p), q, subtree_weights, within))
             .first;
  return it->second;
}

// Terms of crossings only: `rounds` crossing messages one after the other, `bytes` waited behind
// at the NICs they share.
CostTerms crossing(double rounds, double bytes) {
  CostTerms t;
  t.inter_rounds = rounds;
  t.inter_bytes = bytes;
  return t;
}

// One step of a schedule whose ranks all end together: `sends` are its (from, to) pairs. The
// step waits for its slowest pair, so it counts one crossing round if any pair crosses, and the
// messages the last one through the busiest NIC waits behind (the most sent out of, or
// received into, one node, less one).
struct StepCrossing {
  double crosses = 0;  // 0 or 1
  double peak = 0;     // crossing messages through the busiest NIC
  double within = 0;   // messages within the busiest node (node memory)
  double queued() const { return std::max(0.0, peak - 1); }
  double shared() const { return std::max(0.0, within - 1); }  // ahead of the last of those
};

StepCrossing step_crossing(const std::vector<std::pair<int, int>>& sends, int q) {
  int nodes = 0;
  for (const auto& [from, to] : sends) nodes = std::max({nodes, from / q + 1, to / q + 1});
  std::vector<double> out(nodes, 0), in(nodes, 0), on(nodes, 0);
  StepCrossing s;
  for (const auto& [from, to] : sends)
    if (from / q != to / q) {
      s.crosses = 1;
      s.peak = std::max({s.peak, ++out[from / q], ++in[to / q]});
    } else {
      s.within = std::max(s.within, ++on[from / q]);
    }
  return s;
}

// Recursive doubling and halving over the largest power of two of ranks: the P - pof2 extra
// ranks first fold into a neighbour (fold_step: the pairs (2i, 2i + 1), i < P - pof2), the rest
// exchange with new rank nr ^ mask; new rank nr is the real rank nr < extra ? 2 nr + odd :
// nr + extra (odd = 1 where the odd rank of a pair stays, as in the recursive-doubling
// allreduce, 0 where the even one does, as in Rabenseifner's).
int real_rank(int p, int nr, int odd) {
  const int extra = p - (1 << floor_log2(p));
  return nr < extra ? 2 * nr + odd : nr + extra;
}

std::vector<std::pair<int, int>> exchange_step(int p, int mask, int odd) {
  std::vector<std::pair<int, int>> sends;
  for (int nr = 0; nr < (1 << floor_log2(p)); ++nr)
    sends.emplace_back(real_rank(p, nr, odd), real_rank(p, nr ^ mask, odd));
  return sends;
}

// The fold: into the rank that stays (`back`: the result out to the one that left).
std::vector<std::pair<int, int>> fold_step(int p, int odd, bool back = false) {
  const int extra = p - (1 << floor_log2(p));
  std::vector<std::pair<int, int>> sends;
  for (int i = 0; i < extra; ++i) {
    const int stays = 2 * i + odd, leaves = 2 * i + 1 - odd;
    sends.emplace_back(back ? stays : leaves, back ? leaves : stays);
  }
  return sends;
}

std::vector<std::pair<int, int>> ring_step(int p) {
  std::vector<std::pair<int, int>> sends;
  for (int r = 0; r < p; ++r) sends.emplace_back(r, (r + 1) % p);
  return sends;
}

// A schedule: its steps and the bytes one message of each step moves.
struct Schedule {
  std::vector<std::vector<std::pair<int, int>>> steps;
  std::vector<double> bytes;
  void add(std::vector<std::pair<int, int>> sends, double amount) {
    steps.push_back(std::move(sends)), bytes.push_back(amount);
  }
  // The crossing terms of its steps (`nodes`: more than one node), step i moving bytes[i] per
  // message, and the node memory's.
  CostTerms crossings(int q, bool nodes = true) const {
    CostTerms t;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const StepCrossing s = step_crossing(steps[i], q);
      if (nodes) t += crossing(s.crosses, s.queued() * bytes[i]);
      t.shared_bytes += s.shared() * bytes[i];
    }
    return t;
  }
};

// Recursive halving, a reduce-scatter of `bytes` (the step of distance mask moves
// bytes / (2 mask)), after the fold.
void add_halving(Schedule& s, int p, double bytes, int odd) {
  if (p > (1 << floor_log2(p))) s.add(fold_step(p, odd), bytes);
  for (int mask = 1; mask < (1 << floor_log2(p)); mask <<= 1)
    s.add(exchange_step(p, mask, odd), bytes / (2.0 * mask));
}

// Recursive doubling back, an allgather (the same amounts in reverse), and the fold out.
void add_doubling(Schedule& s, int p, double bytes, int odd) {
  for (int mask = (1 << floor_log2(p)) / 2; mask >= 1; mask >>= 1)
    s.add(exchange_step(p, mask, odd), bytes / (2.0 * mask));
  if (p > (1 << floor_log2(p))) s.add(fold_step(p, odd, true), bytes);
}

// A binomial gather of the scattered blocks to new rank 0: at distance mask, the new ranks
// nr = mask (mod 2 mask) send their mask blocks of bytes / pof2 to nr - mask.
void add_binomial_gather(Schedule& s, int p, double bytes, int odd) {
  const int pof2 = 1 << floor_log2(p);
  for (int mask = 1; mask < pof2; mask <<= 1) {
    std::vector<std::pair<int, int>> sends;
    for (int nr = mask; nr < pof2; nr += 2 * mask)
      sends.emplace_back(real_rank(p, nr, odd), real_rank(p, nr - mask, odd));
    s.add(std::move(sends), bytes * mask / pof2);
  }
}

// The binomial scatter of a bcast from rank 0 (P blocks of `block` bytes): at distance mask,
// from the largest down, rank r = 0 (mod 2 mask) sends the mask blocks of r + mask's subtree.
void add_binomial_scatter(Schedule& s, int p, double block) {
  for (long long mask = 1LL << (ceil_log2(p) - 1); mask >= 1; mask >>= 1) {
    std::vector<std::pair<int, int>> sends;
    for (long long r = 0; r + mask < p; r += 2 * mask)
      sends.emplace_back(static_cast<int>(r), static_cast<int>(r + mask));
    s.add(std::move(sends), static_cast<double>(mask) * block);
  }
}

// The recursive-doubling allgather of a scatter-allgather bcast: at distance mask, rank r and
// r ^ mask exchange the mask blocks each holds.
void add_block_doubling(Schedule& s, int p, double block) {
  for (long long mask = 1; mask < p; mask <<= 1) {
    std::vector<std::pair<int, int>> sends;
    for (long long r = 0; r < p; ++r)
      if ((r ^ mask) < p) sends.emplace_back(static_cast<int>(r), static_cast<int>(r ^ mask));
    s.add(std::move(sends), static_cast<double>(mask) * block);
  }
}

bool node_level(int p, int q) { return q > 0 && q < p; }

// The node memory's terms of a tree, from its crossings summarised `within` (their loads).
CostTerms shared(const CostTerms& within) {
  CostTerms t;
  t.shared_bytes = within.inter_bytes;
  return t;
}

// A linear algorithm at root 0 (one message from or to every other rank, one after the other
// through the root's port): the messages of ranks q.. cross. Rank i is done when the root has
// handled i of them, max(0, i - q + 1) crossing, the root when it handled all P - q: the mean
// over ranks. `blocking`: one crossing round each, else one for a rank that waits on any. No
// crossing bytes: the root's port already takes the messages one after the other.
CostTerms linear_crossings(int p, int q, bool blocking) {
  const double far = p - q, crossed = (far * (far + 1) / 2 + far) / p;
  return crossing(blocking ? crossed : (far + 1) / p, 0.0);
}

// A tree's crossing terms, down (a bcast's rank, pipelined in S segments) or up (a reduce's
// rank, or its root).
CostTerms crossings_down(const TreeCrossings& x, double segments, double segment_bytes) {
  return crossing(x.path_cross, (x.path_load + (segments - 1) * x.path_peak) * segment_bytes);
}

CostTerms crossings_up(const TreeCrossings& x, double segments, double segment_bytes,
                       bool at_root) {
  if (at_root)
    return crossing(x.root_cross, (x.root_load + (segments - 1) * x.root_peak) * segment_bytes);
  return crossing(x.up_cross, (x.up_load + (segments - 1) * x.up_peak) * segment_bytes);
}

struct Segments {
  double count = 1;  // S
  double bytes = 0;  // of one segment
};

Segments segments_of(std::int64_t count, std::int64_t type, int segsize) {
  const std::int64_t segcount = coll_segment_count(segsize, type, count);
  return {std::ceil(static_cast<double>(count) / segcount),
          static_cast<double>(std::min(segcount, count) * type)};
}

// coll_base's generic tree bcast, pipelined: a rank's time is its first segment's arrival
// (depth rounds; the sends ahead of it on its path: in turn for the per-message costs, all of
// them for the bytes), S - 1 periods of its busiest ancestor, and its own forwarding; the mean
// over ranks.
CostTerms tree_bcast(const TreeMeans& t, const Segments& seg) {
  const double rest = (seg.count - 1) * t.period + t.children;
  return {t.path_sends + rest, t.depth + (seg.count - 1) + t.internal,
          (t.path_bytes + rest) * seg.bytes, 0};
}

// coll_base's generic tree reduce, pipelined: a rank's time is its subtree's (height rounds,
// the receives on its critical path below), S - 1 periods of its subtree's busiest rank, and its
// own send; the mean over ranks, or the root's (`at_root`: what an allreduce waits for).
CostTerms tree_reduce(const TreeMeans& t, const Segments& seg, bool at_root) {
  const double s1 = seg.count - 1;
  if (at_root) {
    const double recv = t.root_below + s1 * t.root_sub_period;
    return {recv, t.root_height + s1, recv * seg.bytes, recv * seg.bytes};
  }
  const double msgs = t.below + s1 * t.sub_period + t.non_root;
  const double recv = t.below + s1 * t.sub_children;
  return {msgs, t.height + s1 + t.non_root, msgs * seg.bytes, recv * seg.bytes};
}

// P - 1 messages through the root one after the other: rank i's part is done when the root
// has taken its message (the i-th), the root when it took all: the mean over ranks of the
// number taken is (P - 1)(P + 2) / (2P). `blocking`: one latency each, else one for all. A
// reduction combines each message once taken: rank i waits for i - 1 of them, the root for
// all, (P - 1) / 2 on average.
CostTerms linear_fan(int p, double bytes, bool blocking, bool reduction) {
  const double handled = (p - 1.0) * (p + 2.0) / (2.0 * p);
  CostTerms t{handled, blocking ? handled : 1.0, handled * bytes, 0};
  if (reduction) t.reduced = (p - 1.0) / 2 * bytes;
  return t;
}

// `q`: ranks per node (node_level(p, q): the crossing terms too).
std::optional<CostTerms> bcast_terms(int id, const TuningConfig& c, int p, std::int64_t n, int q) {
  const double bytes = static_cast<double>(n);
  const double l = ceil_log2(p);
  const bool nodes = node_level(p, q);
  auto tree = [&](Labelling labels, int param, std::int64_t count) {
    const Segments seg = segments_of(count, 1, c.segsize);
    CostTerms terms = tree_bcast(tree_means(labels, param, p), seg);
    if (nodes)
      terms += crossings_down(tree_crossings(labels, param, p, q, false), seg.count, seg.bytes);
    if (q > 0)
      terms += shared(
          crossings_down(tree_crossings(labels, param, p, q, false, true), seg.count, seg.bytes));
    return terms;
  };
  auto linear = [&] {
    CostTerms t = linear_fan(p, bytes, false, false);
    if (nodes) t += linear_crossings(p, q, false);
    return t;
  };
  switch (id) {
    case 1:  // isends to every rank, then wait for all
      return linear();
    case 2:
      return tree(Labelling::chain, c.fanout, n);
    case 3:
      return tree(Labelling::chain, 1, n);
    case 4: {  // halves down the two subtrees of a binary tree, then exchanged between twins
      const std::int64_t half0 = (n + 1) / 2, half1 = n - half0;
      const std::int64_t seg = c.segsize > 0 ? std::max(c.segsize, 1) : 0;
      if (half0 == 0 || half1 == 0 || seg > half0 || seg > half1)
        return tree(Labelling::chain, 1, n);  // its fallback
      CostTerms t = tree(Labelling::level_binary, 2, half0);
      t += CostTerms{1, 1, static_cast<double>(half0), 0};
      if (nodes) {  // twins are neighbours (odd r, r + 1): the ranks whose twin is elsewhere
        double apart = 0;
        for (int r = 1; r + 1 < p; r += 2) apart += r / q != (r + 1) / q ? 2 : 0;
        t += crossing(apart / p, 0.0);  // one message per NIC: none waits
      }
      if (q > 0) {  // the twins of a node exchange at once
        std::vector<std::pair<int, int>> swaps;
        for (int r = 1; r + 1 < p; r += 2)
          swaps.emplace_back(r, r + 1), swaps.emplace_back(r + 1, r);
        t.shared_bytes += step_crossing(swaps, q).shared() * static_cast<double>(half0);
      }
      return t;
    }
    case 5:
      return tree(Labelling::level_binary, 2, n);
    case 6:
      return tree(Labelling::binomial, 2, n);
    case 7:
      return tree(Labelling::knomial, kKnomialRadix, n);
    case 8: {  // binomial scatter, recursive-doubling allgather; linear below one byte per rank
      if (n < p) return linear();
      CostTerms t{2 * l, 2 * l, 2 * bytes * (p - 1) / p, 0};
      if (q > 0) {
        Schedule s;
        add_binomial_scatter(s, p, bytes / p);
        add_block_doubling(s, p, bytes / p);
        t += s.crossings(q, nodes);
      }
      return t;
    }
    case 9: {  // binomial scatter, ring allgather
      if (n < p) return linear();
      CostTerms t{l + p - 1, l + p - 1, bytes * (p - 1) / p + (p - 1) * std::ceil(bytes / p), 0};
      if (q > 0) {
        Schedule s;
        add_binomial_scatter(s, p, bytes / p);
        t += s.crossings(q, nodes);
        const StepCrossing ring = step_crossing(ring_step(p), q);
        if (nodes)
          t += crossing((p - 1) * ring.crosses, (p - 1) * ring.queued() * std::ceil(bytes / p));
        t.shared_bytes += (p - 1) * ring.shared() * std::ceil(bytes / p);
      }
      return t;
    }
    default:
      return std::nullopt;
  }
}

// `at_root`: the root's time (the critical path), else the mean over ranks.
std::optional<CostTerms> reduce_terms(int id, const TuningConfig& c, int p, std::int64_t n, int q,
                                      bool at_root = false) {
  const std::int64_t count = std::max<std::int64_t>(1, n / 4);  // MPI_FLOAT
  const double bytes = static_cast<double>(count * 4);
  const bool nodes = node_level(p, q);
  auto tree = [&](Labelling labels, int param) {
    const Segments seg = segments_of(count, 4, c.segsize);
    CostTerms terms = tree_reduce(tree_means(labels, param, p), seg, at_root);
    if (nodes)
      terms +=
          crossings_up(tree_crossings(labels, param, p, q, false), seg.count, seg.bytes, at_root);
    if (q > 0)
      terms += shared(crossings_up(tree_crossings(labels, param, p, q, false, true), seg.count,
                                   seg.bytes, at_root));
    return terms;
  };
  auto linear = [&] {  // the root receives and reduces rank by rank, blocking
    if (at_root) {
      CostTerms t{p - 1.0, p - 1.0, (p - 1.0) * bytes, (p - 1.0) * bytes};
      if (nodes) t += crossing(p - q, 0.0);  // ranks q.. cross, one after the other
      return t;
    }
    CostTerms t = linear_fan(p, bytes, true, true);
    if (nodes) t += linear_crossings(p, q, true);
    return t;
  };
  switch (id) {
    case 1:
      return linear();
    case 2:
      return tree(Labelling::chain, c.fanout);
    case 3:
      return tree(Labelling::chain, 1);
    case 4:
      return tree(Labelling::level_binary, 2);
    case 5:
      return tree(Labelling::in_order_binomial, 2);
    case 6: {  // rooted at P - 1, whose result then goes to the root
      CostTerms t = tree(Labelling::in_order_binary, 2);
      t += at_root ? CostTerms{1, 1, bytes, 0} : CostTerms{2.0 / p, 2.0 / p, 2 * bytes / p, 0};
      if (nodes && (p - 1) / q != 0) {
        const double share = at_root ? 1.0 : 2.0 / p;
        t += crossing(share, 0.0);  // one message
      }
      return t;
    }
    case 7: {  // reduce-scatter by recursive halving, binomial gather; linear when too short
      const int pof2 = 1 << floor_log2(p);
      if (count < pof2) return linear();
      const double k = floor_log2(p), share = bytes * (1 - 1.0 / pof2);
      CostTerms t{2 * k, 2 * k, 2 * share, share};
      if (p > pof2) t += CostTerms{2, 2, bytes, bytes / 2};  // the extra ranks fold in first
      if (q > 0) {
        Schedule s;
        add_halving(s, p, bytes, 0);
        add_binomial_gather(s, p, bytes, 0);
        t += s.crossings(q, nodes);
      }
      return t;
    }
    default:
      return std::nullopt;
  }
}

std::optional<CostTerms> allreduce_terms(int id, const TuningConfig& c, int p, std::int64_t n,
                                         int q) {
  const std::int64_t count = std::max<std::int64_t>(1, n / 4);
  const double bytes = static_cast<double>(count * 4);
  const int pof2 = 1 << floor_log2(p);
  const double k = floor_log2(p);
  const bool nodes = node_level(p, q);
  // A ring's steps: every rank sends to the next; the nodes' last ranks cross, one per NIC (so
  // none waits at a NIC: crossing rounds only).
  auto ring_crossings = [&](double steps, double step_bytes) {
    const StepCrossing x = step_crossing(ring_step(p), q);
    CostTerms t =
        nodes ? crossing(steps * x.crosses, steps * x.queued() * step_bytes) : CostTerms{};
    t.shared_bytes = steps * x.shared() * step_bytes;
    return t;
  };
  auto recursive_doubling = [&] {
    CostTerms t{k, k, k * bytes, k * bytes};
    if (p > pof2) t += CostTerms{2, 2, 2 * bytes, bytes};
    if (q > 0) {
      Schedule s;  // every step the whole vector
      if (p > pof2) s.add(fold_step(p, 1), bytes);
      for (int mask = 1; mask < pof2; mask <<= 1) s.add(exchange_step(p, mask, 1), bytes);
      if (p > pof2) s.add(fold_step(p, 1, true), bytes);
      t += s.crossings(q, nodes);
    }
    return t;
  };
  auto ring = [&] {
    if (count < p) return recursive_doubling();
    const double block = std::ceil(static_cast<double>(count) / p) * 4;
    CostTerms t{2.0 * (p - 1), 2.0 * (p - 1), 2.0 * (p - 1) * block, (p - 1) * block};
    if (q > 0) t += ring_crossings(2.0 * (p - 1), block);
    return t;
  };
  // A reduce to the root (every rank waits for its end) and a bcast from it.
  auto reduce_then_bcast = [&](int reduce_id, int bcast_id) -> std::optional<CostTerms> {
    auto rt = reduce_terms(reduce_id, TuningConfig{reduce_id, 0, 0}, p, n, q, true);
    auto bt = bcast_terms(bcast_id, TuningConfig{bcast_id, 0, 0}, p, n, q);
    if (!rt || !bt) return std::nullopt;
    *rt += *bt;
    return rt;
  };
  switch (id) {
    case 1:
      return reduce_then_bcast(1, 1);
    case 2: {  // the tuned reduce and bcast, i.e. their fixed decisions
      const auto r = fixed_decision_4_1(Collective::reduce, p, n);
      const auto b = fixed_decision_4_1(Collective::bcast, p, n);
      if (!r || !b) return std::nullopt;
      return reduce_then_bcast(*r, *b);
    }
    case 3:
      return recursive_doubling();
    case 4:
      return ring();
    case 5: {  // the ring in phases of one segment per rank
      const std::int64_t segcount = coll_segment_count(c.segsize, 4, count);
      if (count < p * segcount) return ring();
      std::int64_t phases = count / (p * segcount);
      const std::int64_t rest = count % (p * segcount);
      if (rest >= p && rest > (p * segcount) / 2) ++phases;
      const double block = std::ceil(static_cast<double>(count) / p) * 4;
      const double steps = static_cast<double>(phases + 1) * (p - 1);
      CostTerms t{steps, steps, 2.0 * (p - 1) * block, (p - 1) * block};
      if (q > 0) {  // every step crosses; the bytes are those of the whole ring
        const StepCrossing x = step_crossing(ring_step(p), q);
        if (nodes) t += crossing(steps * x.crosses, 2.0 * (p - 1) * x.queued() * block);
        t.shared_bytes += 2.0 * (p - 1) * x.shared() * block;
      }
      return t;
    }
    case 6: {  // reduce-scatter by recursive halving, allgather by recursive doubling
      if (count < pof2) return reduce_then_bcast(1, 1);
      const double share = bytes * (1 - 1.0 / pof2);
      CostTerms t{2 * k, 2 * k, 2 * share, share};
      if (p > pof2) t += CostTerms{3, 3, 2 * bytes, bytes / 2};
      if (q > 0) {
        Schedule s;
        add_halving(s, p, bytes, 0);
        add_doubling(s, p, bytes, 0);
        t += s.crossings(q, nodes);
      }
      return t;
    }
    default:
      return std::nullopt;
  }
}

std::optional<CostTerms> gather_terms(int id, int p, std::int64_t n, int q) {
  const double bytes = static_cast<double>(n);  // per rank
  const bool nodes = node_level(p, q);
  switch (id) {
    case 1: {  // the root receives rank by rank, blocking
      CostTerms t = linear_fan(p, bytes, true, false);
      if (nodes) t += linear_crossings(p, q, true);
      return t;
    }
    case 2: {  // binomial: a rank receives its children's blocks one child after the other,
               // then sends its subtree's blocks up (the in-order tree: subtrees of neighbours)
      const TreeMeans& t = tree_means(Labelling::in_order_binomial, 2, p);
      const double steps = t.children + t.non_root;
      CostTerms terms{steps, steps, (t.gathered + t.sent) * bytes, 0};
      if (nodes) {
        const TreeCrossings& x = tree_crossings(Labelling::in_order_binomial, 2, p, q, true);
        terms += crossing(x.gather_cross, x.gather_load * bytes);
      }
      if (q > 0)
        terms.shared_bytes +=
            tree_crossings(Labelling::in_order_binomial, 2, p, q, true, true).gather_load * bytes;
      return terms;
    }
    case 3: {  // per rank in turn: a zero-byte go and the first segment (the rest overlaps, but
               // every byte still passes the root's port, whatever the segment size)
      CostTerms t = linear_fan(p, bytes, true, false);
      t.messages *= 3;
      t.rounds *= 2;
      if (nodes) {
        CostTerms x = linear_crossings(p, q, true);
        x.inter_rounds *= 2;
        t += x;
      }
      return t;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

bool cost_model_covers(Collective collective) {
  return collective == Collective::bcast || collective == Collective::reduce ||
         collective == Collective::allreduce || collective == Collective::gather;
}

std::optional<CostTerms> algorithm_cost_terms(Collective collective, const TuningConfig& config,
                                              int comm_size, std::int64_t osu_size,
                                              int ranks_per_node) {
  if (!cost_model_covers(collective) || comm_size < 2 || osu_size < 1) return std::nullopt;
  TuningConfig c = config;
  if (c.is_default()) {  // the fixed decision: unsegmented, no fan-out
    const auto id = fixed_decision_4_1(collective, comm_size, osu_size);
    if (!id) return std::nullopt;
    c = TuningConfig{*id, 0, 0};
  }
  switch (collective) {
    case Collective::bcast:
      return bcast_terms(c.algorithm, c, comm_size, osu_size, ranks_per_node);
    case Collective::reduce:
      return reduce_terms(c.algorithm, c, comm_size, osu_size, ranks_per_node);
    case Collective::allreduce:
      return allreduce_terms(c.algorithm, c, comm_size, osu_size, ranks_per_node);
    case Collective::gather:
      return gather_terms(c.algorithm, comm_size, osu_size, ranks_per_node);
    default:
      return std::nullopt;
  }
}

double modelled_latency_us(const CostTerms& t, const MachineCoefficients& m) {
  const double one_level = t.messages * m.per_message_us + t.rounds * m.per_round_us +
                           t.bytes * m.per_byte_us + t.reduced * m.per_reduced_byte_us;
  if (t.inter_rounds == 0 && t.inter_bytes == 0 && t.shared_bytes == 0) return one_level;
  return one_level + t.inter_rounds * m.per_inter_round_us + t.inter_bytes * m.per_inter_byte_us +
         t.shared_bytes * m.per_shared_byte_us;
}

MachineCoefficients typical_machine_coefficients() {
  MachineCoefficients m;
  m.per_message_us = 0.5;
  m.per_round_us = 1.5;
  m.per_byte_us = 1e-4;          // 10 GB/s
  m.per_reduced_byte_us = 2e-4;  // 5 GB/s of float sums
  m.per_inter_round_us = 1.0;    // a message between nodes: 1 µs more
  m.per_inter_byte_us = 1e-4;    // and 10 GB/s more
  m.per_shared_byte_us = 2e-5;   // a node's memory: 50 GB/s for all its cores' copies
  return m;
}

namespace {

using Term = double CostTerms::*;
using Coefficient = double MachineCoefficients::*;
constexpr std::array<std::pair<Term, Coefficient>, 7> kTerms{{
    {&CostTerms::messages, &MachineCoefficients::per_message_us},
    {&CostTerms::rounds, &MachineCoefficients::per_round_us},
    {&CostTerms::bytes, &MachineCoefficients::per_byte_us},
    {&CostTerms::reduced, &MachineCoefficients::per_reduced_byte_us},
    {&CostTerms::inter_rounds, &MachineCoefficients::per_inter_round_us},
    {&CostTerms::inter_bytes, &MachineCoefficients::per_inter_byte_us},
    {&CostTerms::shared_bytes, &MachineCoefficients::per_shared_byte_us},
}};

// The fit over the terms of kTerms listed in `active` (the others stay at the prior).
MachineCoefficients fit_terms(const std::vector<CostObservation>& observations,
                              const MachineCoefficients& prior, double prior_weight,
                              const std::vector<int>& active) {
  const int n = static_cast<int>(active.size());
  Eigen::VectorXd scale(n);
  for (int j = 0; j < n; ++j) scale[j] = prior.*kTerms[active[j]].second;
  if (!(scale.array() > 0).all()) return prior;  // the prior fixes the units; else no fit
  // Rows: the terms in units of the prior's coefficients; the unknowns are the log ratios
  // u_j = log(coefficient_j / prior_j), so every coefficient stays positive.
  std::vector<Eigen::VectorXd> x;
  std::vector<double> log_y;
  for (const auto& o : observations) {
    if (!(std::isfinite(o.latency_us) && o.latency_us > 0)) continue;
    Eigen::VectorXd row(n);
    for (int j = 0; j < n; ++j) row[j] = o.terms.*kTerms[active[j]].first * scale[j];
    if (!(row.sum() > 0)) continue;
    x.push_back(std::move(row));
    log_y.push_back(std::log(o.latency_us));
  }
  const double lambda = std::max(prior_weight, 0.0);
  // sum over cells of (log modelled - log observed)^2 + lambda |u|^2, with its gradient.
  auto objective = [&](const Eigen::VectorXd& u, Eigen::VectorXd& grad) -> double {
    const Eigen::VectorXd theta = u.array().exp();
    double f = lambda * u.squaredNorm();
    grad = 2 * lambda * u;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double pred = x[i].dot(theta);
      const double r = std::log(pred) - log_y[i];
      f += r * r;
      grad += (2 * r / pred) * x[i].cwiseProduct(theta);
    }
    return f;
  };
  Eigen::VectorXd u = Eigen::VectorXd::Zero(n);
  if (!x.empty()) {
    LbfgsbSettings settings;
    settings.max_iterations = 200;
    settings.epsilon = 1e-8;
    settings.epsilon_rel = 1e-8;
    settings.max_linesearch = 40;
    minimize_within_bounds(objective, u, Eigen::VectorXd::Constant(n, -25.0),
                           Eigen::VectorXd::Constant(n, 25.0), settings);
    if (!u.allFinite()) u.setZero();
  }
  MachineCoefficients m = prior;
  for (int j = 0; j < n; ++j) m.*kTerms[active[j]].second = std::exp(u[j]) * scale[j];
  return m;
}

}  // namespace

MachineCoefficients fit_machine_coefficients(const std::vector<CostObservation>& observations,
                                             const MachineCoefficients& prior,
                                             double prior_weight) {
  // The crossing coefficients only where an observation has their terms, the node memory's
  // likewise: without, this is the one-level fit, to the digit, and they stay at the prior.
  auto any = [&](auto has) { return std::any_of(observations.begin(), observations.end(), has); };
  std::vector<int> active{0, 1, 2, 3};
  if (any([](const auto& o) { return o.terms.inter_rounds > 0 || o.terms.inter_bytes > 0; }))
    active.insert(active.end(), {4, 5});
  if (any([](const auto& o) { return o.terms.shared_bytes > 0; })) active.push_back(6);
  return fit_terms(observations, prior, prior_weight, active);
}

AlgorithmCalibration::AlgorithmCalibration(const std::vector<Cell>& cells) {
  std::map<int, std::vector<double>> ratios;
  for (const auto& c : cells)
    if (std::isfinite(c.log_ratio)) ratios[c.algorithm].push_back(c.log_ratio);
  for (auto& [algorithm, r] : ratios) median_[algorithm] = median(std::move(r));
}

double AlgorithmCalibration::log_factor(int algorithm) const {
  auto it = median_.find(algorithm);
  return it == median_.end() ? 0.0 : it->second;
}

}  // namespace colltune
