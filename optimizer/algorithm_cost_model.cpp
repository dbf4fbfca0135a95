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

enum class Topology { chain, binary, binomial, knomial };

// A tree of coll_base_topo.c (root 0), summarised by means over its ranks of what each rank's
// time in the call counts (OSU reports the mean over ranks), in units of one segment:
struct TreeMeans {
  // Down the tree (bcast): rounds until a rank has its first segment, the sends queued ahead of
  // it along its path (each ancestor's children), the busiest of its ancestors and itself (the
  // pipeline's period), its own children.
  double depth = 0, path_children = 0, period = 0, children = 0;
  double internal = 0;  // share of ranks with children
  // Up the tree (reduce): levels below a rank, the receives along its busiest path below,
  // the busiest rank of its subtree (max(1, ..) counting its own sends, and without).
  double height = 0, below = 0, sub_period = 0, sub_children = 0;
  double non_root = 0;  // (P - 1) / P
  // Binomial gather: blocks a rank receives (its subtree but itself) and sends (its subtree).
  double gathered = 0, sent = 0;
  // The root's own (the critical path of a reduce, which every rank of an allreduce awaits).
  double root_height = 0, root_below = 0, root_sub_period = 0;
};

std::vector<std::vector<int>> build_children(Topology t, int param, int p) {
  std::vector<std::vector<int>> kids(p);
  switch (t) {
    case Topology::chain: {  // build_chain: `param` chains of nearly equal length
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
    case Topology::binary:  // build_tree(2), level order (the in-order tree has its shape)
      for (int i = 0; i < p; ++i)
        for (int c = 2 * i + 1; c <= 2 * i + 2 && c < p; ++c) kids[i].push_back(c);
      break;
    case Topology::binomial:  // build_bmtree: i + 2^j for every 2^j > i
      for (int i = 0; i < p; ++i)
        for (long long mask = 1; i + mask < p; mask <<= 1)
          if (mask > i) kids[i].push_back(static_cast<int>(i + mask));
      break;
    case Topology::knomial:  // build_kmtree: i + d radix^j (d < radix) for every radix^j > i
      for (int i = 0; i < p; ++i)
        for (long long step = 1; i + step < p; step *= param)
          if (step > i)
            for (int d = 1; d < param && i + d * step < p; ++d)
              kids[i].push_back(static_cast<int>(i + d * step));
      break;
  }
  return kids;
}

TreeMeans summarise(const std::vector<std::vector<int>>& kids) {
  const int p = static_cast<int>(kids.size());
  std::vector<int> order{0};  // breadth first from the root
  for (std::size_t i = 0; i < order.size(); ++i)
    for (int c : kids[order[i]]) order.push_back(c);
  std::vector<double> depth(p, 0), queued(p, 0), period(p, 0), height(p, 0), below(p, 0),
      sub_period(p, 0), sub_children(p, 0), size(p, 1);
  period[0] = static_cast<double>(kids[0].size());
  for (int v : order)
    for (int c : kids[v]) {
      depth[c] = depth[v] + 1;
      queued[c] = queued[v] + static_cast<double>(kids[v].size());
      period[c] = std::max(period[v], static_cast<double>(kids[c].size()));
    }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int v = *it;
    const double k = static_cast<double>(kids[v].size());
    double h = 0, b = 0, sp = 1, sc = k;
    for (int c : kids[v]) {
      h = std::max(h, height[c] + 1), b = std::max(b, below[c]);
      sp = std::max(sp, sub_period[c]), sc = std::max(sc, sub_children[c]);
      size[v] += size[c];
    }
    height[v] = h, below[v] = b + k, sub_period[v] = std::max(sp, k), sub_children[v] = sc;
  }
  TreeMeans m;
  for (int v = 0; v < p; ++v) {
    const double k = static_cast<double>(kids[v].size());
    m.depth += depth[v], m.path_children += queued[v], m.period += period[v], m.children += k;
    m.internal += k > 0 ? 1 : 0;
    m.height += height[v], m.below += below[v], m.sub_period += sub_period[v];
    m.sub_children += sub_children[v];
    m.gathered += size[v] - 1;
    if (v != 0) m.sent += size[v];
  }
  for (double* x : {&m.depth, &m.path_children, &m.period, &m.children, &m.internal, &m.height,
                    &m.below, &m.sub_period, &m.sub_children, &m.gathered, &m.sent})
    *x /= p;
  m.non_root = (p - 1.0) / p;
  m.root_height = height[0], m.root_below = below[0], m.root_sub_period = sub_period[0];
  return m;
}

// Cached per (topology, parameter, P): building a tree of P ranks is O(P log P).
const TreeMeans& tree_means(Topology t, int param, int p) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int>, TreeMeans> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(static_cast<int>(t), param, p);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, summarise(build_children(t, param, p))).first;
  return it->second;
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
// (depth rounds; the sends queued ahead of it on its path), S - 1 periods of its busiest
// ancestor, and its own forwarding; the mean over ranks.
CostTerms tree_bcast(const TreeMeans& t, const Segments& seg) {
  const double sends = t.path_children + (seg.count - 1) * t.period + t.children;
  return {sends, t.depth + (seg.count - 1) + t.internal, sends * seg.bytes, 0};
}

// coll_base's generic tree reduce, pipelined: a rank's time is its subtree's (height rounds,
// the receives on its busiest path below), S - 1 periods of its subtree's busiest rank, and its
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

std::optional<CostTerms> bcast_terms(int id, const TuningConfig& c, int p, std::int64_t n) {
  const double bytes = static_cast<double>(n);
  const double l = ceil_log2(p);
  auto tree = [&](Topology t, int param, std::int64_t count) {
    return tree_bcast(tree_means(t, param, p), segments_of(count, 1, c.segsize));
  };
  switch (id) {
    case 1:  // isends to every rank, then wait for all
      return linear_fan(p, bytes, false, false);
    case 2:
      return tree(Topology::chain, c.fanout, n);
    case 3:
      return tree(Topology::chain, 1, n);
    case 4: {  // halves down the two subtrees of a binary tree, then exchanged between twins
      const std::int64_t half0 = (n + 1) / 2, half1 = n - half0;
      const std::int64_t seg = c.segsize > 0 ? std::max(c.segsize, 1) : 0;
      if (half0 == 0 || half1 == 0 || seg > half0 || seg > half1)
        return tree(Topology::chain, 1, n);  // its fallback
      CostTerms t = tree(Topology::binary, 2, half0);
      t += CostTerms{1, 1, static_cast<double>(half0), 0};
      return t;
    }
    case 5:
      return tree(Topology::binary, 2, n);
    case 6:
      return tree(Topology::binomial, 2, n);
    case 7:
      return tree(Topology::knomial, kKnomialRadix, n);
    case 8:  // binomial scatter, recursive-doubling allgather; linear below one byte per rank
      if (n < p) return linear_fan(p, bytes, false, false);
      return CostTerms{2 * l, 2 * l, 2 * bytes * (p - 1) / p, 0};
    case 9:  // binomial scatter, ring allgather
      if (n < p) return linear_fan(p, bytes, false, false);
      return CostTerms{l + p - 1, l + p - 1, bytes * (p - 1) / p + (p - 1) * std::ceil(bytes / p),
                       0};
    default:
      return std::nullopt;
  }
}

// `at_root`: the root's time (the critical path), else the mean over ranks.
std::optional<CostTerms> reduce_terms(int id, const TuningConfig& c, int p, std::int64_t n,
                                      bool at_root = false) {
  const std::int64_t count = std::max<std::int64_t>(1, n / 4);  // MPI_FLOAT
  const double bytes = static_cast<double>(count * 4);
  auto tree = [&](Topology t, int param) {
    return tree_reduce(tree_means(t, param, p), segments_of(count, 4, c.segsize), at_root);
  };
  auto linear = [&] {  // the root receives and reduces rank by rank, blocking
    if (at_root) return CostTerms{p - 1.0, p - 1.0, (p - 1.0) * bytes, (p - 1.0) * bytes};
    return linear_fan(p, bytes, true, true);
  };
  switch (id) {
    case 1:
      return linear();
    case 2:
      return tree(Topology::chain, c.fanout);
    case 3:
      return tree(Topology::chain, 1);
    case 4:
      return tree(Topology::binary, 2);
    case 5:
      return tree(Topology::binomial, 2);
    case 6: {  // rooted at P - 1, whose result then goes to the root
      CostTerms t = tree(Topology::binary, 2);
      t += at_root ? CostTerms{1, 1, bytes, 0} : CostTerms{2.0 / p, 2.0 / p, 2 * bytes / p, 0};
      return t;
    }
    case 7: {  // reduce-scatter by recursive halving, binomial gather; linear when too short
      const int pof2 = 1 << floor_log2(p);
      if (count < pof2) return linear();
      const double k = floor_log2(p), share = bytes * (1 - 1.0 / pof2);
      CostTerms t{2 * k, 2 * k, 2 * share, share};
      if (p > pof2) t += CostTerms{2, 2, bytes, bytes / 2};  // the extra ranks fold in first
      return t;
    }
    default:
      return std::nullopt;
  }
}

std::optional<CostTerms> allreduce_terms(int id, const TuningConfig& c, int p, std::int64_t n) {
  const std::int64_t count = std::max<std::int64_t>(1, n / 4);
  const double bytes = static_cast<double>(count * 4);
  const int pof2 = 1 << floor_log2(p);
  const double k = floor_log2(p);
  auto recursive_doubling = [&] {
    CostTerms t{k, k, k * bytes, k * bytes};
    if (p > pof2) t += CostTerms{2, 2, 2 * bytes, bytes};
    return t;
  };
  auto ring = [&] {
    if (count < p) return recursive_doubling();
    const double block = std::ceil(static_cast<double>(count) / p) * 4;
    return CostTerms{2.0 * (p - 1), 2.0 * (p - 1), 2.0 * (p - 1) * block, (p - 1) * block};
  };
  // A reduce to the root (every rank waits for its end) and a bcast from it.
  auto reduce_then_bcast = [&](int reduce_id, int bcast_id) -> std::optional<CostTerms> {
    auto rt = reduce_terms(reduce_id, TuningConfig{reduce_id, 0, 0}, p, n, true);
    auto bt = bcast_terms(bcast_id, TuningConfig{bcast_id, 0, 0}, p, n);
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
      return CostTerms{steps, steps, 2.0 * (p - 1) * block, (p - 1) * block};
    }
    case 6: {  // reduce-scatter by recursive halving, allgather by recursive doubling
      if (count < pof2) return reduce_then_bcast(1, 1);
      const double share = bytes * (1 - 1.0 / pof2);
      CostTerms t{2 * k, 2 * k, 2 * share, share};
      if (p > pof2) t += CostTerms{3, 3, 2 * bytes, bytes / 2};
      return t;
    }
    default:
      return std::nullopt;
  }
}

std::optional<CostTerms> gather_terms(int id, int p, std::int64_t n) {
  const double bytes = static_cast<double>(n);  // per rank
  switch (id) {
    case 1:  // the root receives rank by rank, blocking
      return linear_fan(p, bytes, true, false);
    case 2: {  // binomial: a rank receives its children's blocks one child after the other,
               // then sends its subtree's blocks up
      const TreeMeans& t = tree_means(Topology::binomial, 2, p);
      const double steps = t.children + t.non_root;
      return CostTerms{steps, steps, (t.gathered + t.sent) * bytes, 0};
    }
    case 3: {  // per rank in turn: a zero-byte go and the first segment (the rest overlaps, but
               // every byte still passes the root's port, whatever the segment size)
      CostTerms t = linear_fan(p, bytes, true, false);
      t.messages *= 3;
      t.rounds *= 2;
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
                                              int comm_size, std::int64_t osu_size) {
  if (!cost_model_covers(collective) || comm_size < 2 || osu_size < 1) return std::nullopt;
  TuningConfig c = config;
  if (c.is_default()) {  // the fixed decision: unsegmented, no fan-out
    const auto id = fixed_decision_4_1(collective, comm_size, osu_size);
    if (!id) return std::nullopt;
    c = TuningConfig{*id, 0, 0};
  }
  switch (collective) {
    case Collective::bcast:
      return bcast_terms(c.algorithm, c, comm_size, osu_size);
    case Collective::reduce:
      return reduce_terms(c.algorithm, c, comm_size, osu_size);
    case Collective::allreduce:
      return allreduce_terms(c.algorithm, c, comm_size, osu_size);
    case Collective::gather:
      return gather_terms(c.algorithm, comm_size, osu_size);
    default:
      return std::nullopt;
  }
}

double modelled_latency_us(const CostTerms& t, const MachineCoefficients& m) {
  return t.messages * m.per_message_us + t.rounds * m.per_round_us + t.bytes * m.per_byte_us +
         t.reduced * m.per_reduced_byte_us;
}

MachineCoefficients typical_machine_coefficients() {
  MachineCoefficients m;
  m.per_message_us = 0.5;
  m.per_round_us = 1.5;
  m.per_byte_us = 1e-4;          // 10 GB/s
  m.per_reduced_byte_us = 2e-4;  // 5 GB/s of float sums
  return m;
}

MachineCoefficients fit_machine_coefficients(const std::vector<CostObservation>& observations,
                                             const MachineCoefficients& prior,
                                             double prior_weight) {
  constexpr int kTerms = 4;
  const std::array<double, kTerms> scale{prior.per_message_us, prior.per_round_us,
                                         prior.per_byte_us, prior.per_reduced_byte_us};
  for (double s : scale)
    if (!(s > 0)) return prior;  // the prior fixes the units; without it there is no fit
  // Rows: the terms in units of the prior's coefficients; the unknowns are the log ratios
  // u_j = log(coefficient_j / prior_j), so every coefficient stays positive.
  std::vector<Eigen::Vector4d> x;
  std::vector<double> log_y;
  for (const auto& o : observations) {
    if (!(std::isfinite(o.latency_us) && o.latency_us > 0)) continue;
    const Eigen::Vector4d row(o.terms.messages * scale[0], o.terms.rounds * scale[1],
                              o.terms.bytes * scale[2], o.terms.reduced * scale[3]);
    if (!(row.sum() > 0)) continue;
    x.push_back(row);
    log_y.push_back(std::log(o.latency_us));
  }
  const double lambda = std::max(prior_weight, 0.0);
  // sum over cells of (log modelled - log observed)^2 + lambda |u|^2, with its gradient.
  auto objective = [&](const Eigen::VectorXd& u, Eigen::VectorXd& grad) -> double {
    const Eigen::Vector4d theta = u.array().exp();
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
  Eigen::VectorXd u = Eigen::VectorXd::Zero(kTerms);
  if (!x.empty()) {
    LbfgsbSettings settings;
    settings.max_iterations = 200;
    settings.epsilon = 1e-8;
    settings.epsilon_rel = 1e-8;
    settings.max_linesearch = 40;
    minimize_within_bounds(objective, u, Eigen::VectorXd::Constant(kTerms, -25.0),
                           Eigen::VectorXd::Constant(kTerms, 25.0), settings);
    if (!u.allFinite()) u.setZero();
  }
  MachineCoefficients m;
  m.per_message_us = std::exp(u[0]) * scale[0];
  m.per_round_us = std::exp(u[1]) * scale[1];
  m.per_byte_us = std::exp(u[2]) * scale[2];
  m.per_reduced_byte_us = std::exp(u[3]) * scale[3];
  return m;
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
