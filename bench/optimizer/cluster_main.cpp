// colltune-bench-cluster: whole-cluster tuning (issue #15) scored on the simulated clusters,
// with the exhaustive optimum of every (comm size, message size) as truth. Three ways to cover
// a list of comm sizes, side by side on the same landscapes and seeds:
//   (a) per-size: "bo" run on its own at every comm size (today's way);
//   (b) nearest: "bo" at a subset of the sizes, every other size served by the block of the
//       largest tuned size <= P (the smallest tuned size below it), as Open MPI 4.1.x reads a
//       rules file; the subset is chosen to cost no more node-seconds than (c) ("equal"), and
//       also every third size ("third", unequal cost);
//   (c) cluster: "bo-cluster" over all the sizes at once (optimizer/cluster_strategy.h).
// Regret = truth(pick) / optimum - 1 per (comm size, message size); cost = runs and
// node-seconds (benchmark seconds of each run x the nodes it occupies). One JSON line per
// (collective, seed, method), then a Markdown table of the means over seeds. See bench/README.md
// "Whole-cluster".
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "bench/optimizer/landscape.h"
#include "bench/optimizer/sim_landscape.h"
#include "bench/optimizer/simulation.h"
#include "campaign/comm_sizes.h"
#include "core/rng.h"
#include "core/stats.h"
#include "optimizer/algorithm_cost_model.h"
#include "optimizer/benchmark_cost.h"
#include "optimizer/cluster_bayes_strategy.h"
#include "optimizer/cluster_strategy.h"
#include "optimizer/search_space.h"

namespace {

using namespace colltune;
using bench::Landscape;

struct Scored {
  std::string method;
  std::vector<double> regrets;  // every (comm size, message size)
  int runs = 0;
  double node_seconds = 0;
  double decision_ms_max = 0;
  std::string note;
  std::map<int, std::vector<double>> by_comm;  // regrets per comm size
  nlohmann::json cells;                        // bo-cluster: per-cell diagnostics (--diagnose)
  nlohmann::json theta;                        // and its fitted hyper-parameters (--diagnose)
  // bo-cluster: per run, |log(price quoted when it was suggested / node-seconds it took)|,
  // all runs and those at the largest size
  std::vector<double> price_errors, price_errors_top;
  // bo-cluster, at the end: log(price / true node-seconds) of each configuration never run at
  // the largest size
  std::vector<double> top_unrun_price_log_ratios;
  nlohmann::json top_unrun_prices;  // and per configuration, quoted / true (--diagnose)
  // The final phase (--final paired): its runs and node-seconds (included in runs and
  // node_seconds above), the (comm size, message size) cells with a nominee and those where it
  // was proven faster than the default, and the comm sizes the search never ran (a campaign
  // has nothing of its own to test there: the default stands).
  int final_runs = 0;
  int leftover_runs = 0;  // of those, the leftover looks' (--total-budget)
  double search_node_seconds = 0;
  int nominated_cells = 0, proven_cells = 0, sizes_without_runs = 0;
  std::map<int, double> final_node_seconds_by_comm;
  std::map<int, int> final_runs_by_comm;
  std::map<int, int> final_looks_by_comm, final_nominees_by_comm;
  // --unverified-above: the cells written from the gated model picks with no final phase, and
  // those of them whose pick is truly more than 5 % slower than the default
  int unverified_cells = 0, unverified_slower_cells = 0;
  // --remeasure: the rules stage's re-measure of those cells' files (draw_remeasure), its runs
  // and node-seconds (included in runs and node_seconds above) and the cells it reverted
  int remeasure_runs = 0, remeasure_reverted_cells = 0;
  double remeasure_node_seconds = 0;
  // --total-budget: the nominated cells whose nominee the budget could not pay to test
  int untested_cells = 0;
  // --final paired, bo-cluster rows: the cells whose final pick is truly slower than the
  // default (the promise the paired test keeps), and by more than 5 %
  int proven_slower_cells = 0, proven_slower5_cells = 0;
  // Every method: the cells whose pick is truly more than 5 % slower than the default, however
  // the pick was made (tested, gated by the model, or carried from another size)
  int slower5_cells = 0;
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  std::size_t lo = static_cast<std::size_t>(pos);
  std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

// Decision time of bo-cluster for one batch at `sizes` x the collective's spaces x 19 message
// sizes, after the initial design and `rows` more runs (random configurations and sizes, latencies
// from a smooth synthetic function with 5 % noise): the first suggest() includes the
// hyper-parameter fit, the second (after observing that batch) the steady state between fits.
void timing(Collective collective, const std::vector<int>& sizes, const std::vector<int>& counts,
            int batch) {
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  for (int rows : counts) {
    ClusterStrategyOptions o;
    o.seed = 1;
    for (std::int64_t m = 4; m <= (1 << 20); m *= 2) o.msg_sizes.push_back(m);
    std::size_t configs = 0;
    for (int p : sizes) {
      o.sizes.push_back({p, 1, 0, 0});
      configs = std::max(configs, SearchSpace(collective, p, table).size());
    }
    o.budget = 100000;
    auto s = make_cluster_strategy("bo-cluster", collective, table, o);
    Rng rng(rows);
    auto measure = [&](int p, const TuningConfig& c) {
      Evaluation e;
      e.config = c;
      e.msg_sizes = o.msg_sizes;
      for (auto m : o.msg_sizes)
        e.latency_us.push_back((1 + c.algorithm * 0.1 + c.fanout * 0.01) * std::log2(p) *
                               (2 + m * 1e-3) * (1 + 0.05 * rng.uniform()));
      s->observe(p, e);
    };
    for (const auto& d : s->suggest(1000)) measure(d.comm_size, d.config);  // the design
    for (int i = 0; i < rows; ++i) {
      int p = sizes[rng.below(sizes.size())];
      const SearchSpace space(collective, p, table);
      const auto& pts = space.points();
      measure(p, pts[rng.below(pts.size())]);
    }
    double ms[2], cpu[2];
    for (int k = 0; k < 2; ++k) {
      auto t0 = std::chrono::steady_clock::now();
      std::clock_t c0 = std::clock();
      auto next = s->suggest(batch);
      cpu[k] = 1000.0 * (std::clock() - c0) / CLOCKS_PER_SEC;
      ms[k] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      for (const auto& n : next) measure(n.comm_size, n.config);
    }
    std::printf(
        "| %s | %zu sizes x %zu configs x %zu message sizes | %d | %.0f / %.0f | %.0f / %.0f |\n",
        std::string(name(collective)).c_str(), sizes.size(), configs, o.msg_sizes.size(), rows,
        cpu[0], ms[0], cpu[1], ms[1]);
  }
}

// Per-cell diagnostics of a finished bo-cluster search at the comm sizes `at` (--diagnose):
// per size, the runs made there (configuration, how many times); per message size, the pick
// (gated at min_confidence) and the posterior-mean pick (ungated), each with its regret,
// whether it was measured at that size and its confidence, the optimum, its regret-free
// configuration and the sizes where that configuration (in its canonical form at P) was run;
// the model's posterior (mean and sd of log latency, µs) of the optimum and of the ungated
// pick there, beside the truth's log ratio of the two (what the model should have seen). The
// row's "theta" beside it holds the model's fitted hyper-parameters (ClusterGpParam order).
nlohmann::json diagnose_cells(const ClusterStrategy& strategy, const std::map<int, Landscape>& land,
                              const std::vector<int>& at, double min_confidence) {
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  const nlohmann::json state = strategy.state();
  const auto gated = strategy.recommend(at, min_confidence);
  const auto ungated = strategy.recommend(at, 0.0);
  nlohmann::json out = nlohmann::json::object();
  for (int p : at) {
    auto lit = land.find(p);
    if (lit == land.end()) continue;
    const Landscape& l = lit->second;
    const SearchSpace space(l.collective, p, table);
    std::map<TuningConfig, int> here;                // runs at P
    std::map<TuningConfig, std::set<int>> run_from;  // canonical at P -> sizes it was run at
    int runs_total = 0, runs_here = 0;
    for (const auto& e : state.at("evaluations")) {
      const int size = e.at("comm_size").get<int>();
      const TuningConfig c = e.at("config").get<TuningConfig>();
      ++runs_total;
      if (size == p) ++here[c], ++runs_here;
      if (space.contains(c)) run_from[space.canonical(c)].insert(size);
    }
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& [c, n] : here) runs.push_back({{"config", to_string(c)}, {"runs", n}});
    auto regret = [&](const TuningConfig& c, std::int64_t m) {
      const auto* pt = l.find(space.contains(c) ? space.canonical(c) : TuningConfig{}, m);
      if (!pt) pt = l.find(TuningConfig{}, m);
      return pt ? pt->truth / l.optimum(m) - 1 : std::nan("");
    };
    nlohmann::json cells = nlohmann::json::array();
    int msg_index = 0;  // the cell's column in the model's posterior
    for (std::size_t i = 0; i < gated.size(); ++i) {
      const ClusterChoice& g = gated[i];
      if (g.comm_size != p) continue;
      const ClusterChoice& u = ungated[i];
      const TuningConfig best = l.optimal_config(g.msg_size).value_or(TuningConfig{});
      std::vector<int> best_run_at;
      if (auto it = run_from.find(best); it != run_from.end())
        best_run_at.assign(it->second.begin(), it->second.end());
      nlohmann::json posterior = nullptr;
      const TuningConfig pick = space.contains(u.config) ? space.canonical(u.config) : u.config;
      Eigen::MatrixXd mean, var;
      if (const auto* bo = dynamic_cast<const ClusterBayesStrategy*>(&strategy);
          bo && bo->search_posterior(p, {best, pick}, &mean, &var)) {
        const auto* truth_best = l.find(best, g.msg_size);
        const auto* truth_pick = l.find(pick, g.msg_size);
        posterior = {{"optimum_mean", mean(0, msg_index)},
                     {"optimum_sd", std::sqrt(var(0, msg_index))},
                     {"pick_mean", mean(1, msg_index)},
                     {"pick_sd", std::sqrt(var(1, msg_index))},
                     {"truth_log_optimum_over_pick",
                      truth_best && truth_pick ? std::log(truth_best->truth / truth_pick->truth)
                                               : std::nan("")}};
      }
      ++msg_index;
      cells.push_back({{"msg", g.msg_size},
                       {"posterior", posterior},
                       {"pick", to_string(g.config)},
                       {"pick_regret", regret(g.config, g.msg_size)},
                       {"measured", g.measured},
                       {"confidence", g.confidence},
                       {"ungated_pick", to_string(u.config)},
                       {"ungated_regret", regret(u.config, g.msg_size)},
                       {"ungated_measured", u.measured},
                       {"default_regret", regret(TuningConfig{}, g.msg_size)},
                       {"optimum", to_string(best)},
                       {"optimum_run_at", best_run_at}});
    }
    out[std::to_string(p)] = {{"runs_here", runs_here},
                              {"runs_total", runs_total},
                              {"configs_run_here", runs},
                              {"cells", cells}};
  }
  return out;
}

// Recorded sweeps (bench/data/ornl-peak.csv, ornl-peak-other-sizes.csv): for every collective,
// split its recorded comm sizes into measured and left out (schemes below), give bo-cluster
// every recorded run at the measured sizes, and score its picks at the left-out sizes against
// the recorded truth (median of the repeats). Beside it "nearest" (the best measured
// configuration of the largest measured size <= P, else the smallest: what a 4.1.x rules file
// tuned at the measured sizes gives) and the default. Calibration: how many predicted picks
// were confident (>= min_confidence, not the default) and how many of those were slower than
// the default in the recorded truth.
struct LeaveOut {
  std::string scheme;
  std::vector<int> left_out;
};

std::vector<LeaveOut> leave_out_schemes(const std::vector<int>& sizes, const std::string& which) {
  std::vector<LeaveOut> out;
  const int k = static_cast<int>(sizes.size());
  if (which == "all" || which == "one")
    for (int p : sizes) out.push_back({"one out", {p}});
  if ((which == "all" || which == "blocks") && k >= 5) {
    LeaveOut odd{"every other (odd positions out)", {}},
        even{"every other (even positions out)", {}};
    for (int i = 0; i < k; ++i) (i % 2 ? odd : even).left_out.push_back(sizes[i]);
    out.push_back(odd);
    out.push_back(even);
    LeaveOut high{"<= 64 measured, larger predicted", {}};
    for (int p : sizes)
      if (p > 64) high.left_out.push_back(p);
    if (!high.left_out.empty() && high.left_out.size() + 2 <= sizes.size()) out.push_back(high);
  }
  return out;
}

std::string join_sizes(const std::vector<int>& v) {
  std::string s;
  for (int p : v) s += (s.empty() ? "" : ",") + std::to_string(p);
  return s;
}

int leave_out(const std::vector<std::string>& paths, const std::string& which,
              const std::string& only_collective, double min_confidence,
              const nlohmann::json& settings) {
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  std::vector<Landscape> all;
  for (const auto& path : paths)
    for (auto& l : bench::load_landscapes(path, table)) {
      for (const auto& o : all)
        if (o.collective == l.collective && o.comm_size == l.comm_size)
          throw std::invalid_argument(path + ": " + std::string(name(l.collective)) + " at " +
                                      std::to_string(l.comm_size) + " ranks is in two files");
      all.push_back(std::move(l));
    }
  std::map<Collective, std::vector<const Landscape*>> by_collective;
  for (const auto& l : all)
    if (only_collective.empty() || name(l.collective) == only_collective)
      by_collective[l.collective].push_back(&l);
  std::printf(
      "| collective | scheme | predicted P | cells | bo-cluster regret mean / median / max %% | "
      "bo-cluster without the confidence gate | nearest mean / median / max %% | default mean / "
      "median / max %% | confident picks | confident and slower than default "
      "|\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (auto& [collective, ls] : by_collective) {
    std::sort(ls.begin(), ls.end(),
              [](const Landscape* a, const Landscape* b) { return a->comm_size < b->comm_size; });
    if (ls.size() < 2) continue;
    std::vector<int> sizes;
    for (const Landscape* l : ls) sizes.push_back(l->comm_size);
    struct Pooled {
      std::vector<double> cluster, ungated, nearest, def;
      int predicted = 0, confident = 0, confident_worse = 0;
    };
    std::map<std::string, Pooled> pooled;
    std::vector<std::string> order;
    for (const auto& scheme : leave_out_schemes(sizes, which)) {
      auto is_out = [&](int p) {
        return std::find(scheme.left_out.begin(), scheme.left_out.end(), p) !=
               scheme.left_out.end();
      };
      ClusterStrategyOptions o;
      std::vector<const Landscape*> measured;
      for (const Landscape* l : ls)
        if (!is_out(l->comm_size)) {
          measured.push_back(l);
          o.sizes.push_back({l->comm_size, 1, 0, 0});
        }
      o.msg_sizes = measured.front()->msg_sizes;
      o.budget = 100000;
      o.settings = settings;
      auto s = make_cluster_strategy("bo-cluster", collective, table, o);
      for (const Landscape* l : measured)
        for (const auto& cfg : l->configs()) {
          std::size_t runs = 0;
          for (auto m : o.msg_sizes)
            if (const auto* pt = l->find(cfg, m)) runs = std::max(runs, pt->repeats.size());
          for (std::size_t r = 0; r < runs; ++r) {
            Evaluation e;
            e.config = cfg;
            e.msg_sizes = o.msg_sizes;
            for (auto m : o.msg_sizes) {
              const auto* pt = l->find(cfg, m);
              e.latency_us.push_back(pt && r < pt->repeats.size() ? pt->repeats[r] : std::nan(""));
            }
            s->observe(l->comm_size, e);
          }
        }
      const auto picks = s->recommend(scheme.left_out, min_confidence);
      const auto ungated = s->recommend(scheme.left_out, 0.0);  // the posterior-mean argmin
      if (!pooled.count(scheme.scheme)) order.push_back(scheme.scheme);
      Pooled& pool = pooled[scheme.scheme];
      Pooled row;
      nlohmann::json cells = nlohmann::json::array();
      for (const Landscape* out : ls) {
        if (!is_out(out->comm_size)) continue;
        const Landscape* near = nullptr;  // largest measured size <= P, else the smallest
        for (const Landscape* l : measured)
          if (l->comm_size <= out->comm_size) near = l;
        if (!near) near = measured.front();
        std::vector<Choice> cluster, ungated_picks, nearest, def;
        for (const auto& k : ungated)
          if (k.comm_size == out->comm_size) ungated_picks.push_back({k.msg_size, k.config, 0, 0});
        for (const auto& k : picks) {
          if (k.comm_size != out->comm_size) continue;
          cluster.push_back({k.msg_size, k.config, k.latency_us, k.default_us});
          ++row.predicted;
          const auto* pick = out->find(k.config, k.msg_size);
          const auto* dflt = out->find(TuningConfig{}, k.msg_size);
          if (!k.measured && k.confidence >= min_confidence && !k.config.is_default()) {
            ++row.confident;
            if (pick && dflt && pick->truth > dflt->truth) ++row.confident_worse;
          }
          // The posterior-mean pick before the gate, whose probability `confidence` is (the
          // calibration of the gate: bench/README.md).
          TuningConfig free_pick{};
          for (const auto& u : ungated_picks)
            if (u.msg_size == k.msg_size) free_pick = u.config;
          const auto* free_pt = out->find(free_pick, k.msg_size);
          cells.push_back(
              {{"P", out->comm_size},
               {"msg", k.msg_size},
               {"pick", k.config.algorithm},
               {"confidence", k.confidence},
               {"measured", k.measured},
               {"pick_over_default", pick && dflt ? pick->truth / dflt->truth : 0.0},
               {"pick_over_best", pick ? pick->truth / out->optimum(k.msg_size) : 0.0},
               {"ungated_pick", free_pick.algorithm},
               {"ungated_over_default", free_pt && dflt ? free_pt->truth / dflt->truth : 0.0}});
          nearest.push_back(
              {k.msg_size, near->optimal_config(k.msg_size).value_or(TuningConfig{}), 0, 0});
          def.push_back({k.msg_size, TuningConfig{}, 0, 0});
        }
        auto add = [](std::vector<double>& to, const std::vector<double>& r) {
          for (double x : r)
            if (std::isfinite(x)) to.push_back(x);
        };
        add(row.cluster, bench::regrets(*out, cluster));
        add(row.ungated, bench::regrets(*out, ungated_picks));
        add(row.nearest, bench::regrets(*out, nearest));
        add(row.def, bench::regrets(*out, def));
      }
      auto cat = [](std::vector<double>& a, const std::vector<double>& b) {
        a.insert(a.end(), b.begin(), b.end());
      };
      cat(pool.cluster, row.cluster);
      cat(pool.ungated, row.ungated);
      cat(pool.nearest, row.nearest);
      cat(pool.def, row.def);
      pool.predicted += row.predicted;
      pool.confident += row.confident;
      pool.confident_worse += row.confident_worse;
      nlohmann::json line = {{"collective", name(collective)},
                             {"scheme", scheme.scheme},
                             {"measured", join_sizes([&] {
                                std::vector<int> v;
                                for (const Landscape* l : measured) v.push_back(l->comm_size);
                                return v;
                              }())},
                             {"predicted", join_sizes(scheme.left_out)},
                             {"bo_cluster_mean", mean(row.cluster)},
                             {"bo_cluster_max", quantile(row.cluster, 1.0)},
                             {"bo_cluster_ungated_mean", mean(row.ungated)},
                             {"nearest_mean", mean(row.nearest)},
                             {"nearest_max", quantile(row.nearest, 1.0)},
                             {"default_mean", mean(row.def)},
                             {"confident", row.confident},
                             {"confident_worse", row.confident_worse},
                             {"cells", row.predicted},
                             {"picks", cells}};
      std::fprintf(stderr, "%s\n", line.dump().c_str());
    }
    for (const auto& key : order) {
      const Pooled& p = pooled[key];
      std::string predicted;
      for (const auto& scheme : leave_out_schemes(sizes, which))
        if (scheme.scheme == key)
          predicted += (predicted.empty() ? "" : ",") + join_sizes(scheme.left_out);
      auto fmt = [](const std::vector<double>& v) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.1f / %.1f / %.0f", 100 * mean(v), 100 * quantile(v, 0.5),
                      100 * quantile(v, 1.0));
        return std::string(buf);
      };
      std::printf("| %s | %s | %s | %d | %s | %s | %s | %s | %d | %d |\n",
                  std::string(name(collective)).c_str(), key.c_str(), predicted.c_str(),
                  p.predicted, fmt(p.cluster).c_str(), fmt(p.ungated).c_str(),
                  fmt(p.nearest).c_str(), fmt(p.def).c_str(), p.confident, p.confident_worse);
    }
  }
  return 0;
}

// How well the analytic cost model (optimizer/algorithm_cost_model.h) describes a set of
// landscapes of one collective: its machine coefficients fitted to every (configuration, comm
// size, message size) truth at once, then per comm size the rank correlation (Spearman) between
// modelled and true run seconds over the configurations, and the spread of log(modelled / true)
// run seconds (median and largest absolute value, as a factor). A run = the calls of
// BenchmarkCost at every message size, no launch overhead. With `from_smallest`, the
// coefficients are fitted at the smallest comm size only, so the other rows show how far the
// model's scaling in P carries. `ranks_per_node(P)` > 0: the model's node level (ranks placed
// in order on nodes of that many), with its two crossing coefficients fitted with the others;
// with `memory`, the node memory's shared bytes too (also on one node), as bo-cluster's
// cost_model_memory.
void cost_model_check(const std::vector<const Landscape*>& ls, bool from_smallest,
                      const std::function<int(int)>& ranks_per_node, bool memory) {
  const BenchmarkCost cost;
  auto terms_of = [&](const Landscape* l, const TuningConfig& cfg, std::int64_t m) {
    const int q = ranks_per_node(l->comm_size);
    auto t = algorithm_cost_terms(l->collective, cfg, l->comm_size, m,
                                  memory || q < l->comm_size ? q : 0);
    if (t && !memory) t->shared_bytes = 0;
    return t;
  };
  std::vector<CostObservation> cells;
  for (const Landscape* l : ls) {
    if (from_smallest && l != ls.front()) continue;
    for (const auto& cfg : l->configs())
      for (auto m : l->msg_sizes)
        if (const auto* pt = l->find(cfg, m))
          if (auto t = terms_of(l, cfg, m)) cells.push_back({*t, pt->truth});
  }
  const MachineCoefficients machine =
      fit_machine_coefficients(cells, typical_machine_coefficients());
  std::printf(
      "| %s | coefficients (%s): %.3g us/message, %.3g us/round, %.3g GB/s, %.3g GB/s "
      "reduced | | | |\n",
      std::string(name(ls.front()->collective)).c_str(),
      from_smallest ? "fitted at the smallest size" : "fitted at every size",
      machine.per_message_us, machine.per_round_us,
      machine.per_byte_us > 0 ? 1e-3 / machine.per_byte_us : 0.0,
      machine.per_reduced_byte_us > 0 ? 1e-3 / machine.per_reduced_byte_us : 0.0);
  if (ranks_per_node(ls.back()->comm_size) > 0)
    std::printf(
        "| | node level, %d ranks per node at %d: crossing nodes %.3g us/round more, "
        "%.3g GB/s more | | | |\n",
        ranks_per_node(ls.back()->comm_size), ls.back()->comm_size, machine.per_inter_round_us,
        machine.per_inter_byte_us > 0 ? 1e-3 / machine.per_inter_byte_us : 0.0);
  if (memory)
    std::printf("| | a node's memory: %.3g GB/s for its ranks' copies at once | | | |\n",
                machine.per_shared_byte_us > 0 ? 1e-3 / machine.per_shared_byte_us : 0.0);
  auto ranks = [](const std::vector<double>& v) {
    std::vector<int> order(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < order.size(); ++i) r[order[i]] = static_cast<double>(i);
    return r;
  };
  for (const Landscape* l : ls) {
    std::vector<double> truth, model, error;
    for (const auto& cfg : l->configs()) {
      std::vector<double> lat_truth, lat_model;
      for (auto m : l->msg_sizes) {
        const auto* pt = l->find(cfg, m);
        const auto t = terms_of(l, cfg, m);
        lat_truth.push_back(pt ? pt->truth : std::nan(""));
        lat_model.push_back(pt && t ? modelled_latency_us(*t, machine) : std::nan(""));
      }
      const double ts = cost.run_seconds(l->msg_sizes, lat_truth) - cost.launch_overhead_s;
      const double ms = cost.run_seconds(l->msg_sizes, lat_model) - cost.launch_overhead_s;
      if (!(ts > 0 && ms > 0)) continue;
      truth.push_back(ts), model.push_back(ms), error.push_back(std::abs(std::log(ms / ts)));
      std::fprintf(stderr, "%s\n",
                   nlohmann::json{{"collective", name(l->collective)},
                                  {"fit", from_smallest ? "smallest" : "all"},
                                  {"P", l->comm_size},
                                  {"config", to_string(cfg)},
                                  {"true_s", ts},
                                  {"model_s", ms}}
                       .dump()
                       .c_str());
    }
    const auto rt = ranks(truth), rm = ranks(model);
    double d2 = 0;
    for (std::size_t i = 0; i < rt.size(); ++i) d2 += (rt[i] - rm[i]) * (rt[i] - rm[i]);
    const double n = static_cast<double>(rt.size());
    const double spearman = n > 1 ? 1 - 6 * d2 / (n * (n * n - 1)) : 1.0;
    std::printf("| | P=%d | %zu | %.2f | %.2fx / %.2fx |\n", l->comm_size, truth.size(), spearman,
                std::exp(median(error)), std::exp(quantile(error, 1.0)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"colltune-bench-cluster: per-size bo vs nearest-size extension vs bo-cluster"};
  bench::SimLandscapeOptions sim;
  std::string sizes_text, collective_name = "bcast", cache_dir;
  int seeds = 3, first_seed = 1, ppn = 0, batch = 4;
  double min_confidence = 0.7, cluster_budget = 0.25;
  std::string settings_text = "{}";
  std::vector<int> timing_rows;
  std::vector<std::string> recorded;
  std::string leave_out_which = "all";
  app.add_option("--recorded", recorded,
                 "leave comm sizes out on recorded landscape CSVs, comma-separated (no --sim)")
      ->delimiter(',');
  app.add_option("--leave-out", leave_out_which,
                 "with --recorded: one (each size alone), blocks (every other size; sizes > 64 "
                 "from <= 64) or all");
  app.add_option("--sim", sim.profile, "simulated cluster profile");
  app.add_option("--timing-rows", timing_rows,
                 "only time bo-cluster's decisions after these numbers of runs (no --sim)")
      ->delimiter(',');
  app.add_option("--comm-sizes", sizes_text, "comm sizes, as tune --np takes them (2,4,8 or 2:64)");
  app.add_option("--collective", collective_name, "bcast, reduce, allreduce or gather");
  app.add_option("--ppn", ppn,
                 "ranks per node (node-seconds = seconds x ceil(P / ppn); with "
                 "--cost-model-check: the model's node level)");
  app.add_option("--seeds", seeds, "seeds per method");
  app.add_option("--first-seed", first_seed,
                 "the first seed (seeds first-seed .. first-seed + seeds - 1): seeds no change "
                 "was chosen on, to compare two builds without the bias of the seeds they were "
                 "tuned on")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "suggestions per job");
  app.add_option("--min-confidence", min_confidence,
                 "bo-cluster: predicted picks below it = default");
  app.add_option("--cluster-budget", cluster_budget,
                 "second bo-cluster row: node-second budget as a fraction of (a)'s");
  double total_budget = 0;
  app.add_option("--total-budget", total_budget,
                 "second bo-cluster row: a budget for the whole campaign (search and final "
                 "phases, as cluster.total_node_seconds) as a fraction of (a)'s node-seconds, "
                 "final phases counted; 0 = --cluster-budget's search budget instead")
      ->check(CLI::Range(0.0, 10.0));
  app.add_option("--settings", settings_text, "bo-cluster settings (JSON object)");
  std::string final_method = "paired";
  app.add_option("--final", final_method,
                 "what a size's rules come from: paired (the campaign's final phase: one nominee "
                 "per message size tested against the default, its runs counted) or none (the "
                 "strategies' picks, no final phase)")
      ->check(CLI::IsMember({"paired", "none"}));
  int unverified_above = 0;
  app.add_option("--unverified-above", unverified_above,
                 "bo-cluster rows with --final paired: listed comm sizes above this one get no "
                 "final phase; their cells are the model's picks at --min-confidence (an "
                 "experiment: what skipping the verification at the largest sizes costs and "
                 "risks; 0 = verify every size, as a campaign does)");
  bool remeasure = false;
  app.add_flag("--remeasure", remeasure,
               "with --unverified-above: each unverified size's picks are re-measured as a "
               "campaign's rules stage re-measures the file it wrote (file against no file, "
               "--final-repeats pairs, a second look where a change measured slower without "
               "proof), the sizes proven slower go back to the default, and its runs count in "
               "the row's cost (docs/final-choice.md section 4)");
  int final_repeats = 3;
  app.add_option("--final-repeats", final_repeats,
                 "with --final paired: the campaign spec's final_repeats for every method (its "
                 "final phase's cap: this many runs of each configuration; the spec's default 3)")
      ->check(CLI::Range(1, 100));
  bool oracle_nominees = false;
  app.add_flag("--oracle-nominees", oracle_nominees,
               "bo-cluster rows with --final paired: every size's final phase is given the "
               "landscape's optimum at each message size as its nominee, not the model's pick "
               "(an experiment: the regret the final phase leaves with a perfect model; not "
               "with --total-budget, whose plan of the looks is the model's)");
  bool no_comm_lend = false;
  app.add_flag("--no-comm-lend", no_comm_lend,
               "bo-cluster rows with --final paired: the final phase of a size does not pool the "
               "variance of its neighbouring sizes' pairs, as the engine does (an experiment: "
               "what that pooling gains; docs/final-choice.md)");
  bool size_prices = false;
  app.add_flag("--size-prices", size_prices,
               "bo-cluster: price runs per size (the median configuration), not per configuration");
  app.add_option("--cache-dir", cache_dir, "directory for the landscapes' noise-free caches");
  app.add_option("--sim-threads", sim.threads, "simulation threads");
  bool check_cost_model = false;
  app.add_flag("--cost-model-check", check_cost_model,
               "only compare the analytic cost model with the landscapes (--sim or --recorded)");
  bool check_memory = false;
  app.add_flag("--cost-model-memory", check_memory,
               "--cost-model-check with --ppn: the node memory's term too (bo-cluster's "
               "cost_model_memory)");
  std::string diagnose_text;
  app.add_option("--diagnose", diagnose_text,
                 "bo-cluster rows: per-cell diagnostics at these comm sizes (comma-separated; "
                 "'top' = the largest) in the JSON lines: pick, optimum, measured, confidence, "
                 "where the optimum was run, the runs at that size");
  bool build_only = false;
  app.add_flag("--build-only", build_only,
               "only build (or read) the landscapes and their caches, with timings on stderr");
  CLI11_PARSE(app, argc, argv);

  try {
    const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
    if (!recorded.empty()) {
      if (leave_out_which != "all" && leave_out_which != "one" && leave_out_which != "blocks")
        throw std::invalid_argument("--leave-out must be one, blocks or all");
      if (check_cost_model) {
        std::vector<Landscape> all;
        for (const auto& path : recorded)
          for (auto& l : bench::load_landscapes(path, table)) all.push_back(std::move(l));
        std::printf(
            "| collective | comm size | configurations | Spearman, run seconds | "
            "modelled / true run seconds: median, largest factor |\n|---|---|---|---|---|\n");
        for (Collective c :
             {Collective::bcast, Collective::reduce, Collective::allreduce, Collective::gather}) {
          std::vector<const Landscape*> ls;
          for (const auto& l : all)
            if (l.collective == c) ls.push_back(&l);
          std::sort(ls.begin(), ls.end(), [](const Landscape* a, const Landscape* b) {
            return a->comm_size < b->comm_size;
          });
          if (ls.empty()) continue;
          // The recorded jobs filled nodes of ppn ranks in order (the last one partly).
          const auto fixed = [&](int) { return ppn; };
          cost_model_check(ls, false, fixed, check_memory);
          cost_model_check(ls, true, fixed, check_memory);
        }
        return 0;
      }
      return leave_out(recorded, leave_out_which,
                       app.count("--collective") ? collective_name : std::string(), min_confidence,
                       nlohmann::json::parse(settings_text));
    }
    const auto collective = parse_collective(collective_name);
    if (!collective) throw std::invalid_argument("unknown collective " + collective_name);
    // As `colltune tune --np` reads them (2,4,8 or 2:64): a size given twice is refused (it
    // would build and score the same landscape twice).
    const std::vector<int> sizes = parse_comm_sizes(sizes_text, "--comm-sizes");
    if (sizes.size() < 2 && !build_only)
      throw std::invalid_argument("--comm-sizes needs at least two sizes (one with --build-only)");
    if (!timing_rows.empty()) {
      timing(*collective, sizes, timing_rows, batch);
      return 0;
    }
    if (sim.profile.empty()) throw std::invalid_argument("--sim PROFILE is required");
    if (oracle_nominees && (final_method != "paired" || total_budget > 0))
      throw std::invalid_argument(
          "--oracle-nominees needs --final paired and no --total-budget (the plan of a whole "
          "campaign's looks is made from the model's nominees)");
    if (remeasure && (final_method != "paired" || unverified_above < 1))
      throw std::invalid_argument(
          "--remeasure needs --final paired and --unverified-above (it re-measures the sizes "
          "no final phase tested)");
    if (ppn < 1 && !build_only && !check_cost_model)
      throw std::invalid_argument("--ppn (ranks per node) is required with --sim");
    sim.collectives = {*collective};
    sim.verbose = sim.verbose || build_only;
    std::map<int, Landscape> land;
    for (int p : sizes) {
      sim.comm_size = p;
      if (!cache_dir.empty())
        sim.cache_path = cache_dir + "/" + sim.profile + "-" + collective_name + "-" +
                         std::to_string(p) + ".csv";
      land.emplace(p, bench::sim_landscapes(sim, table).front());
    }
    if (build_only) return 0;
    if (check_cost_model) {
      std::vector<const Landscape*> ls;
      for (const auto& [p, l] : land) ls.push_back(&l);
      std::printf(
          "| collective | comm size | configurations | Spearman, run seconds | "
          "modelled / true run seconds: median, largest factor |\n|---|---|---|---|---|\n");
      // As the simulator places a job (packed): the fewest nodes of ppn, ranks spread evenly.
      const auto packed = [&](int p) {
        return ppn > 0 ? (p + (p + ppn - 1) / ppn - 1) / ((p + ppn - 1) / ppn) : 0;
      };
      cost_model_check(ls, false, packed, check_memory);
      cost_model_check(ls, true, packed, check_memory);
      return 0;
    }
    auto nodes = [&](int p) { return static_cast<double>((p + ppn - 1) / ppn); };
    const BenchmarkCost cost;
    const std::vector<int> diagnose = diagnose_text.empty() ? std::vector<int>{}
                                      : diagnose_text == "top"
                                          ? std::vector<int>{sizes.back()}
                                          : parse_comm_sizes(diagnose_text, "--diagnose");
    // Regrets of picks (per comm size: per message size) against each landscape's optimum.
    // A pick made at another size is read in its canonical form at P (a chain fan-out clamps to
    // P - 1); a configuration P cannot run (no point in its landscape) falls back to the default,
    // as Open MPI does for an algorithm unusable at that size.
    // Each regret goes to `into` (all cells and its comm size's), and a cell whose pick is truly
    // more than 5 % slower than the default counts in into.slower5_cells.
    auto score = [&](int p, std::vector<Choice> choices, Scored& into) {
      const SearchSpace space(*collective, p, table);
      for (auto& c : choices) {
        c.config = space.canonical(c.config);
        const auto* pick = land.at(p).find(c.config, c.msg_size);
        if (!pick) c.config = TuningConfig{};
        const auto* dflt = land.at(p).find(TuningConfig{}, c.msg_size);
        into.slower5_cells += pick && dflt && pick->truth > 1.05 * dflt->truth;
      }
      for (double x : bench::regrets(land.at(p), choices))
        into.regrets.push_back(x), into.by_comm[p].push_back(x);
    };

    const bool paired = final_method == "paired";
    std::vector<std::vector<Scored>> all_seeds;
    for (int seed = first_seed; seed < first_seed + seeds; ++seed) {
      std::vector<Scored> rows;
      // (a) per-size bo.
      std::map<int, bench::SimulationResult> per_size;
      Scored a{"per-size bo (a)", {}, 0, 0, 0, ""};
      for (int p : sizes) {
        bench::SimulationOptions o;
        o.strategy = "bo";
        o.seed = seed;
        o.batch = batch;
        o.finalists = paired ? 2 : 0;  // the campaign spec's final_candidates
        o.final_pick = paired ? "paired" : "strategy";
        o.final_repeats = final_repeats;
        auto r = bench::simulate(land.at(p), table, o);
        score(p, r.choices, a);
        a.runs += r.runs;
        a.node_seconds += r.benchmark_seconds * nodes(p);
        a.final_runs += r.final_runs;
        a.search_node_seconds += r.search_seconds * nodes(p);
        a.decision_ms_max = std::max(a.decision_ms_max, r.decision_ms_max);
        if (paired) {
          a.final_node_seconds_by_comm[p] = (r.benchmark_seconds - r.search_seconds) * nodes(p);
          a.final_runs_by_comm[p] = r.final_runs;
          a.final_looks_by_comm[p] = r.final_looks;
          a.final_nominees_by_comm[p] = r.final_nominees;
          a.nominated_cells += r.nominated_sizes;
          a.proven_cells += r.proven_sizes;
        }
        per_size.emplace(p, std::move(r));
      }
      rows.push_back(a);

      // (c) bo-cluster.
      ClusterStrategyOptions co;
      co.seed = seed;
      co.msg_sizes = land.at(sizes.front()).msg_sizes;
      co.settings = nlohmann::json::parse(settings_text);
      for (auto m : size_prices ? std::vector<std::int64_t>{} : co.msg_sizes)
        // the calls a run makes per size, as BenchmarkCost counts them
        co.calls_per_run[m] = m > cost.large_message_size
                                  ? cost.iterations_large + cost.warmup_large
                                  : cost.iterations_small + cost.warmup_small;
      // Expected node-seconds of one run at P: the median over the landscape's configurations
      // of a run's benchmark seconds (noise-free; the median, since a few pathological
      // configurations are 100x slower than the rest), times the nodes.
      for (int p : sizes) {
        const Landscape& l = land.at(p);
        std::vector<double> seconds;
        for (const auto& cfg : l.configs()) {
          std::vector<double> lat;
          for (auto m : co.msg_sizes) {
            const auto* pt = l.find(cfg, m);
            lat.push_back(pt ? pt->truth : std::nan(""));
          }
          seconds.push_back(cost.run_seconds(co.msg_sizes, lat));
        }
        co.sizes.push_back({p, static_cast<int>(nodes(p)), 0, quantile(seconds, 0.5) * nodes(p)});
      }
      // `whole_campaign`: budget_node_seconds is the search's and the final phases' together
      // (the campaign's cluster.total_node_seconds, the engine's rules), else the search's.
      auto run_cluster = [&](const std::string& label, double budget_node_seconds,
                             bool whole_campaign) {
        co.budget_node_seconds = budget_node_seconds;
        std::map<int, SearchLatencies> search_latency;  // per comm size, for the final phase
        std::map<int, int> searched_runs;
        Scored c{label, {}, 0, 0, 0, ""};
        // As the engine: the first looks of every nominee that what is left could pay for held
        // back (first_look_reserve).
        co.reserve = nullptr;
        if (whole_campaign)
          co.reserve = [&](const ClusterStrategy& strategy) {
            return first_look_reserve(
                strategy, sizes, 2,
                [&](int p) {
                  const auto it = search_latency.find(p);
                  return it == search_latency.end() ? SearchLatencies{} : it->second;
                },
                *collective, table, budget_node_seconds - c.node_seconds);
          };
        auto strategy = make_cluster_strategy("bo-cluster", *collective, table, co);
        Rng draws(static_cast<std::uint64_t>(seed) * 0x9E3779B97F4A7C15ULL + 17);
        while (!strategy->done()) {
          auto t0 = std::chrono::steady_clock::now();
          auto next = strategy->suggest(batch);
          double ms =
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count();
          if (next.empty()) break;
          c.decision_ms_max = std::max(c.decision_ms_max, ms);
          // The prices the search charges the batch (before any of it is observed).
          std::vector<double> quoted;
          if (const auto* bayes = dynamic_cast<const ClusterBayesStrategy*>(strategy.get()))
            for (const auto& sgg : next) quoted.push_back(bayes->price(sgg.comm_size, sgg.config));
          for (std::size_t q = 0; q < next.size(); ++q) {
            const auto& sgg = next[q];
            Evaluation e;
            e.config = sgg.config;
            e.msg_sizes = co.msg_sizes;
            e.latency_us = land.at(sgg.comm_size).draw(sgg.config, e.msg_sizes, draws);
            e.failed = std::none_of(e.latency_us.begin(), e.latency_us.end(),
                                    [](double x) { return std::isfinite(x); });
            e.seconds = cost.run_seconds(e.msg_sizes, e.latency_us);  // what the run took
            c.runs += 1;
            c.node_seconds += e.seconds * nodes(sgg.comm_size);
            if (q < quoted.size() && quoted[q] > 0 && e.seconds > 0) {
              const double err = std::abs(std::log(quoted[q] / (e.seconds * nodes(sgg.comm_size))));
              c.price_errors.push_back(err);
              if (sgg.comm_size == sizes.back()) c.price_errors_top.push_back(err);
            }
            ++searched_runs[sgg.comm_size];  // any outcome, as the engine counts them
            for (std::size_t i = 0; i < e.msg_sizes.size() && !e.failed; ++i)
              if (std::isfinite(e.latency_us[i]))
                search_latency[sgg.comm_size][e.msg_sizes[i]][sgg.config].push_back(
                    e.latency_us[i]);
            strategy->observe(sgg.comm_size, e);
          }
        }
        c.search_node_seconds = c.node_seconds;
        c.note = strategy->stop_reason();
        // How the search would price, at its end, every configuration it never ran at the
        // largest size (the runs it did not make are where a wrong price costs: over-priced,
        // never affordable): price / true node-seconds (noise-free), per configuration.
        if (const auto* bayes = dynamic_cast<const ClusterBayesStrategy*>(strategy.get())) {
          const int top = sizes.back();
          const Landscape& l = land.at(top);
          const SearchSpace space(*collective, top, table);
          std::set<TuningConfig> ran;
          const nlohmann::json state = strategy->state();  // (a temporary's member would dangle)
          for (const auto& e : state.at("evaluations"))
            if (e.at("comm_size").get<int>() == top)
              ran.insert(space.canonical(e.at("config").get<TuningConfig>()));
          for (const auto& cfg : space.points()) {
            if (ran.count(cfg)) continue;
            std::vector<double> lat;
            for (auto m : co.msg_sizes) {
              const auto* pt = l.find(cfg, m);
              lat.push_back(pt ? pt->truth : std::nan(""));
            }
            const double truth_ns = cost.run_seconds(co.msg_sizes, lat) * nodes(top);
            const double quoted = bayes->price(top, cfg);
            if (truth_ns > 0 && quoted > 0 && std::isfinite(truth_ns)) {
              c.top_unrun_price_log_ratios.push_back(std::log(quoted / truth_ns));
              if (!diagnose.empty()) c.top_unrun_prices[to_string(cfg)] = quoted / truth_ns;
            }
          }
        }
        // What the campaign writes at each listed size: the final phase's proven picks (the
        // campaign's ClusterSizeView: the ungated picks and the finalists of that size), or with
        // --final none the gated picks of recommend(). Under a budget for the whole campaign
        // the final phases run largest first, as the engine's do then.
        std::vector<int> order = sizes;
        if (whole_campaign) std::reverse(order.begin(), order.end());
        const auto picks = strategy->recommend(sizes, paired ? 0.0 : min_confidence);
        const auto gated = unverified_above > 0 && paired
                               ? strategy->recommend(sizes, min_confidence)
                               : std::vector<ClusterChoice>{};
        auto choices_at = [&](const std::vector<ClusterChoice>& from, int p) {
          std::vector<Choice> out;
          for (const auto& k : from)
            if (k.comm_size == p) out.push_back({k.msg_size, k.config, k.latency_us, k.default_us});
          return out;
        };
        // In `order`, as the engine plans them: each size's first look (its nominees come from
        // the search), planned together when the search ends.
        std::vector<FirstLookCandidate> candidates(order.size());
        FirstLookPlan plan;
        if (whole_campaign) {
          for (std::size_t k = 0; k < order.size(); ++k) {
            const int p = order[k];
            candidates[k] = cluster_first_look(*strategy, p, 2, search_latency[p],
                                               SearchSpace(*collective, p, table));
            if (paired && unverified_above > 0 && p > unverified_above) {
              candidates[k].nominated.clear();
              candidates[k].values.clear();
            }
          }
          plan = plan_final_looks(candidates, budget_node_seconds - c.node_seconds);
        }
        // Under a budget for the whole campaign each size's phase is kept, and the sizes are
        // scored after the leftover looks (below).
        std::map<int, bench::PairedFinalState> phases;
        std::map<int, std::vector<Choice>> unscored;
        // A verified size's picks that are not the default yet truly slower than it.
        auto count_slower = [&](int p, const std::vector<Choice>& choices) {
          const SearchSpace space(*collective, p, table);
          for (const auto& k : choices) {
            if (k.config.is_default()) continue;
            const auto* pick = land.at(p).find(space.canonical(k.config), k.msg_size);
            const auto* dflt = land.at(p).find(TuningConfig{}, k.msg_size);
            c.proven_slower_cells += pick && dflt && pick->truth > dflt->truth;
            c.proven_slower5_cells += pick && dflt && pick->truth > 1.05 * dflt->truth;
          }
        };
        // The phases of p's neighbouring listed sizes that have run (as the engine's
        // run_context's lend_from): their pairs lend their variance to p's intervals.
        auto lent_to = [&](int p) {
          std::vector<const bench::PairedFinalState*> out;
          if (no_comm_lend) return out;
          const auto at = std::find(sizes.begin(), sizes.end(), p) - sizes.begin();
          for (const auto q : {at - 1, at + 1})
            if (q >= 0 && q < static_cast<std::ptrdiff_t>(sizes.size()))
              if (auto it = phases.find(sizes[static_cast<std::size_t>(q)]);
                  it != phases.end() && it->second.started &&
                  land.at(it->first).msg_sizes == land.at(p).msg_sizes)
                out.push_back(&it->second);
          return out;
        };
        for (int p : order) {
          const bool unverified = paired && unverified_above > 0 && p > unverified_above;
          std::vector<Choice> choices = choices_at(unverified ? gated : picks, p);
          if (unverified) {
            const SearchSpace space(*collective, p, table);
            if (remeasure) {
              const bench::RemeasureDraw m = bench::draw_remeasure(
                  land.at(p), space, std::move(choices), final_repeats, cost, draws);
              choices = m.choices;
              c.runs += m.runs;
              c.node_seconds += m.benchmark_seconds * nodes(p);
              c.remeasure_runs += m.runs;
              c.remeasure_node_seconds += m.benchmark_seconds * nodes(p);
              c.remeasure_reverted_cells += m.reverted;
            }
            for (const auto& k : choices) {
              const auto* pick = land.at(p).find(space.canonical(k.config), k.msg_size);
              const auto* dflt = land.at(p).find(TuningConfig{}, k.msg_size);
              c.unverified_cells += 1;
              c.unverified_slower_cells += pick && dflt && pick->truth > 1.05 * dflt->truth;
            }
          } else if (paired) {
            c.sizes_without_runs += searched_runs[p] == 0;
            const SearchSpace space(*collective, p, table);
            bench::PairedFinalOptions po;
            po.cost = cost;
            po.final_repeats = final_repeats;
            if (whole_campaign) {
              const auto at = static_cast<std::size_t>(std::find(order.begin(), order.end(), p) -
                                                       order.begin());
              const double unspent = budget_node_seconds - c.node_seconds;
              const FinalLookBudget budget = final_look_budget(plan, candidates, at, unspent);
              po.unspent_node_seconds = unspent;
              po.nodes = nodes(p);
              po.run_price = budget.run_price;
              po.planned = budget.planned;
              po.reserved_after = plan.after(at);
            }
            po.lent = lent_to(p);
            po.state = &phases[p];
            ClusterFinalists finalists = cluster_finalists(*strategy, p, 2);
            po.model = finalists.model;
            if (oracle_nominees) {  // the landscape's optima, each a finalist; no riders
              choices = bench::oracle_choices(land.at(p), std::move(choices));
              for (const auto& k : choices) finalists.configs.push_back(k.config);
              po.model = {};
            }
            const bench::PairedFinalDraw fin =
                bench::draw_paired_final(land.at(p), space, choices, finalists.configs,
                                         search_latency[p], searched_runs[p], po, draws);
            choices = fin.choices;
            c.runs += fin.runs;
            c.final_runs += fin.runs;
            c.node_seconds += fin.benchmark_seconds * nodes(p);
            c.final_node_seconds_by_comm[p] = fin.benchmark_seconds * nodes(p);
            c.final_runs_by_comm[p] = fin.runs;
            c.final_looks_by_comm[p] = fin.looks;
            c.final_nominees_by_comm[p] = fin.nominees;
            c.nominated_cells += fin.nominated_sizes;
            c.proven_cells += fin.proven_sizes;
            c.untested_cells += fin.untested_sizes;
            if (whole_campaign) {
              unscored[p] = choices;
              continue;
            }
            count_slower(p, choices);
          }
          score(p, choices, c);
        }
        // What the planned looks left unspent pays for more looks, in the same order, at the
        // sizes with a nominee no look tested (as the engine does: leftover_look_budget,
        // optimizer/paired_final.h).
        for (std::size_t at = 0; at < order.size(); ++at) {
          const int p = order[at];
          if (!unscored.count(p)) continue;
          bench::PairedFinalState& phase = phases[p];
          if (phase.drawn.untested_sizes > 0 && budget_node_seconds > c.node_seconds) {
            const FinalLookBudget budget =
                leftover_look_budget(candidates[at], budget_node_seconds - c.node_seconds);
            bench::PairedFinalOptions po;
            po.cost = cost;
            po.final_repeats = final_repeats;
            po.unspent_node_seconds = budget.left;
            po.nodes = nodes(p);
            po.run_price = budget.run_price;
            po.planned = budget.planned;
            po.leftover = true;
            po.lent = lent_to(p);
            po.state = &phase;
            const ClusterFinalists finalists = cluster_finalists(*strategy, p, 2);
            po.model = finalists.model;
            const bench::PairedFinalDraw before = phase.drawn;
            const bench::PairedFinalDraw fin = bench::draw_paired_final(
                land.at(p), SearchSpace(*collective, p, table), choices_at(picks, p),
                finalists.configs, search_latency[p], searched_runs[p], po, draws);
            c.runs += fin.runs - before.runs;
            c.final_runs += fin.runs - before.runs;
            c.node_seconds += (fin.benchmark_seconds - before.benchmark_seconds) * nodes(p);
            c.final_node_seconds_by_comm[p] = fin.benchmark_seconds * nodes(p);
            c.final_runs_by_comm[p] = fin.runs;
            c.final_looks_by_comm[p] = fin.looks;
            c.proven_cells += fin.proven_sizes - before.proven_sizes;
            c.untested_cells += fin.untested_sizes - before.untested_sizes;
            c.leftover_runs += fin.runs - before.runs;
            unscored[p] = fin.choices;
          }
          count_slower(p, unscored[p]);
          score(p, unscored[p], c);
        }
        if (!diagnose.empty()) {
          c.cells = diagnose_cells(*strategy, land, diagnose, min_confidence);
          if (const auto state = strategy->state(); state.is_object())
            c.theta = state.value("theta", nlohmann::json());
        }
        return c;
      };
      const Scored c_free = run_cluster("bo-cluster (c), own stop", 0, false);
      // The budget: the search's, a share of (a)'s search node-seconds (--cluster-budget); or
      // with --total-budget the whole campaign's, a share of (a)'s node-seconds, final phases
      // counted on both sides.
      const Scored c = total_budget > 0
                           ? run_cluster("bo-cluster (c), total node-s budget",
                                         total_budget * a.node_seconds, true)
                           : run_cluster("bo-cluster (c), node-s budget",
                                         cluster_budget * a.search_node_seconds, false);

      // (b) nearest-size extension over a subset of (a)'s per-size searches.
      auto nearest = [&](const std::vector<int>& tuned, const std::string& label) {
        Scored b{label, {}, 0, 0, 0, ""};
        for (int p : tuned) {
          b.runs += per_size.at(p).runs;
          b.node_seconds += per_size.at(p).benchmark_seconds * nodes(p);
          b.search_node_seconds += per_size.at(p).search_seconds * nodes(p);
          b.final_runs += per_size.at(p).final_runs;
        }
        for (int p : sizes) {
          int from = tuned.front();
          for (int t : tuned)
            if (t <= p) from = t;
          score(p, per_size.at(from).choices, b);
        }
        b.note = "tuned at";
        for (int t : tuned) b.note += " " + std::to_string(t);
        return b;
      };
      auto spread = [&](int count) {  // `count` sizes evenly spaced in the list, smallest first
        std::vector<int> out;
        for (int i = 0; i < count; ++i) {
          int idx = count == 1
                        ? 0
                        : static_cast<int>(std::lround(i * (sizes.size() - 1.0) / (count - 1)));
          if (out.empty() || out.back() != sizes[idx]) out.push_back(sizes[idx]);
        }
        return out;
      };
      // Equal cost: the most sizes whose per-size searches cost no more than (c), either evenly
      // spread over the list (smallest first) or the smallest sizes first.
      auto cost_of = [&](const std::vector<int>& tuned) {
        double ns = 0;
        for (int p : tuned) ns += per_size.at(p).benchmark_seconds * nodes(p);
        return ns;
      };
      std::vector<int> spread_equal = spread(1), smallest_equal = {sizes.front()};
      for (int count = 2; count <= static_cast<int>(sizes.size()); ++count) {
        if (auto cand = spread(count); cost_of(cand) <= c.node_seconds) spread_equal = cand;
        std::vector<int> first(sizes.begin(), sizes.begin() + count);
        if (cost_of(first) <= c.node_seconds) smallest_equal = first;
      }
      rows.push_back(nearest(spread_equal, "nearest (b), equal cost, spread"));
      rows.push_back(nearest(smallest_equal, "nearest (b), equal cost, smallest first"));
      rows.push_back(nearest(spread((static_cast<int>(sizes.size()) + 2) / 3),
                             "nearest (b), a third of the sizes"));
      rows.push_back(c_free);
      rows.push_back(c);
      for (const auto& r : rows) {
        nlohmann::json j = {{"profile", sim.profile},
                            {"collective", collective_name},
                            {"seed", seed},
                            {"method", r.method},
                            {"comm_sizes", sizes},
                            {"runs", r.runs},
                            {"node_seconds", r.node_seconds},
                            {"regret_mean", mean(r.regrets)},
                            {"regret_median", quantile(r.regrets, 0.5)},
                            {"regret_p90", quantile(r.regrets, 0.9)},
                            {"slower5_cells", r.slower5_cells},
                            {"decision_ms_max", r.decision_ms_max},
                            {"note", r.note}};
        for (const auto& [p, v] : r.by_comm)
          j["regret_mean_by_comm_size"][std::to_string(p)] = mean(v);
        if (!r.cells.is_null()) j["cells"] = r.cells;
        if (!r.theta.is_null()) j["theta"] = r.theta;
        if (!r.top_unrun_prices.is_null()) j["top_unrun_prices"] = r.top_unrun_prices;
        if (paired) {
          j["final"] = final_method;
          j["final_runs"] = r.final_runs;
          j["search_node_seconds"] = r.search_node_seconds;
          j["nominated_cells"] = r.nominated_cells;
          j["proven_cells"] = r.proven_cells;
          j["sizes_without_runs"] = r.sizes_without_runs;
          if (r.method.rfind("bo-cluster", 0) == 0) {  // counted for (c)'s final phases only
            j["proven_slower_cells"] = r.proven_slower_cells;
            j["proven_slower5_cells"] = r.proven_slower5_cells;
            j["comm_lend"] = !no_comm_lend;
            if (oracle_nominees) j["oracle_nominees"] = true;
          }
          if (total_budget > 0) {
            j["total_budget"] = total_budget;
            j["untested_cells"] = r.untested_cells;
            j["leftover_runs"] = r.leftover_runs;
          }
          if (unverified_above > 0) {
            j["unverified_above"] = unverified_above;
            j["unverified_cells"] = r.unverified_cells;
            j["unverified_slower_cells"] = r.unverified_slower_cells;
            if (r.method.rfind("bo-cluster", 0) == 0) {
              j["remeasure"] = remeasure;
              if (remeasure) {
                j["remeasure_runs"] = r.remeasure_runs;
                j["remeasure_node_seconds"] = r.remeasure_node_seconds;
                j["remeasure_reverted_cells"] = r.remeasure_reverted_cells;
              }
            }
          }
          for (const auto& [p, ns] : r.final_node_seconds_by_comm) {
            j["final_node_seconds_by_comm_size"][std::to_string(p)] = ns;
            j["final_runs_by_comm_size"][std::to_string(p)] = r.final_runs_by_comm.at(p);
            j["final_looks_by_comm_size"][std::to_string(p)] = r.final_looks_by_comm.at(p);
            j["final_nominees_by_comm_size"][std::to_string(p)] = r.final_nominees_by_comm.at(p);
          }
        }
        if (!r.price_errors.empty()) {  // as factors: exp(|log(quoted / cost)|)
          j["price_factor_median"] = std::exp(quantile(r.price_errors, 0.5));
          j["price_factor_p90"] = std::exp(quantile(r.price_errors, 0.9));
        }
        if (!r.price_errors_top.empty())
          j["price_factor_median_top"] = std::exp(quantile(r.price_errors_top, 0.5));
        if (!r.top_unrun_price_log_ratios.empty()) {
          std::vector<double> abs_err;
          for (double x : r.top_unrun_price_log_ratios) abs_err.push_back(std::abs(x));
          j["top_unrun_price_ratio_median"] = std::exp(quantile(r.top_unrun_price_log_ratios, 0.5));
          j["top_unrun_price_factor_median"] = std::exp(quantile(abs_err, 0.5));
          j["top_unrun_configs"] = r.top_unrun_price_log_ratios.size();
        }
        std::cerr << j.dump() << "\n";
      }
      all_seeds.push_back(rows);
    }
    // Markdown: mean over seeds.
    std::cout << "| " << sim.profile << " " << collective_name
              << " | method | runs | node-s | regret mean / median / p90 % | max decision ms |\n";
    for (std::size_t m = 0; m < all_seeds.front().size(); ++m) {
      double runs = 0, ns = 0, rm = 0, rmed = 0, r90 = 0, dm = 0;
      for (const auto& rows : all_seeds) {
        const auto& r = rows[m];
        runs += r.runs, ns += r.node_seconds, rm += mean(r.regrets);
        rmed += quantile(r.regrets, 0.5), r90 += quantile(r.regrets, 0.9);
        dm = std::max(dm, r.decision_ms_max);
      }
      const double n = static_cast<double>(all_seeds.size());
      std::printf("| | %s | %.1f | %.0f | %.2f / %.2f / %.2f | %.0f |\n",
                  all_seeds.front()[m].method.c_str(), runs / n, ns / n, 100 * rm / n,
                  100 * rmed / n, 100 * r90 / n, dm);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "colltune-bench-cluster: " << e.what() << "\n";
    return 2;
  }
}
