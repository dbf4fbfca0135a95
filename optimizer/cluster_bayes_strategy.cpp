#include "optimizer/cluster_bayes_strategy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "core/rng.h"
#include "core/stats.h"
#include "optimizer/batch_check.h"
#include "optimizer/expected_improvement.h"
#include "optimizer/kernel_math.h"
#include "optimizer/latin_hypercube.h"

namespace colltune {
namespace {

double comm_correlation(double log2_a, double log2_b, double length) {
  const double r = std::abs(log2_a - log2_b) / length;
  return matern52(r);
}

nlohmann::json pair_json(int comm_size, const TuningConfig& config) {
  return {{"comm_size", comm_size}, {"config", config}};
}

}  // namespace

ClusterBayesSettings ClusterBayesSettings::from_json(const nlohmann::json& j) {
  ClusterBayesSettings s;
  if (j.is_null()) return s;
  if (!j.is_object()) throw std::invalid_argument("bo-cluster settings must be an object");
  for (const auto& [key, value] : j.items()) {
    if (key == "initial_points") {
      s.initial_points = value.get<int>();
    } else if (key == "design_defaults") {
      s.design_defaults = value.get<bool>();
    } else if (key == "ei_noise_fraction") {
      s.ei_noise_fraction = value.get<double>();
    } else if (key == "ei_floor") {
      s.ei_floor = value.get<double>();
    } else if (key == "refit_growth") {
      s.refit_growth = value.get<double>();
    } else if (key == "max_fit_rows") {
      s.max_fit_rows = value.get<int>();
    } else if (key == "design_budget_fraction") {
      s.design_budget_fraction = value.get<double>();
    } else if (key == "batch_price_quantile") {
      s.batch_price_quantile = value.get<double>();
    } else if (key == "blind_price_factor") {
      s.blind_price_factor = value.get<double>();
    } else if (key == "cost_model_prices") {
      s.cost_model_prices = value.get<bool>();
    } else if (key == "cost_model_mean") {
      s.cost_model_mean = value.get<bool>();
    } else if (key == "cost_model_nodes") {
      s.cost_model_nodes = value.get<bool>();
    } else if (key == "cost_model_memory") {
      s.cost_model_memory = value.get<bool>();
    } else if (key == "default_alias") {
      s.default_alias = value.get<bool>();
    } else if (key == "calibrate_algorithms") {
      s.calibrate_algorithms = value.get<bool>();
    } else {
      throw std::invalid_argument("bo-cluster: unknown setting '" + key + "'");
    }
  }
  if (s.initial_points < 0 || s.max_fit_rows < 4 || s.refit_growth < 1.0 ||
      !(s.design_budget_fraction > 0 && s.design_budget_fraction <= 1) ||
      !(s.batch_price_quantile >= 0 && s.batch_price_quantile <= 1) || !(s.blind_price_factor >= 1))
    throw std::invalid_argument("bo-cluster: setting out of range");
  return s;
}

ClusterBayesStrategy::ClusterBayesStrategy(Collective collective, const AlgorithmTable& table,
                                           const ClusterStrategyOptions& options)
    : collective_(collective),
      table_(&table),
      options_(options),
      settings_(ClusterBayesSettings::from_json(options.settings)) {
  if (options_.sizes.empty()) throw std::invalid_argument("bo-cluster: no comm sizes");
  if (options_.msg_sizes.empty()) throw std::invalid_argument("bo-cluster: no message sizes");
  std::sort(options_.sizes.begin(), options_.sizes.end(),
            [](const ClusterSize& a, const ClusterSize& b) { return a.comm_size < b.comm_size; });
  for (std::size_t i = 0; i < options_.sizes.size(); ++i) {
    if (options_.sizes[i].comm_size < 2)
      throw std::invalid_argument("bo-cluster: comm size " +
                                  std::to_string(options_.sizes[i].comm_size) + " is below 2");
    if (i > 0 && options_.sizes[i].comm_size == options_.sizes[i - 1].comm_size)
      throw std::invalid_argument("bo-cluster: comm size " +
                                  std::to_string(options_.sizes[i].comm_size) + " listed twice");
    if (options_.sizes[i].run_cost < 0)
      throw std::invalid_argument("bo-cluster: negative run cost");
  }
  for (const auto& [msg, calls] : options_.calls_per_run)
    if (!(calls >= 0)) throw std::invalid_argument("bo-cluster: negative calls per run");
  if (options_.budget < 0 || options_.budget_node_seconds < 0)
    throw std::invalid_argument("bo-cluster: negative budget");
  std::sort(options_.msg_sizes.begin(), options_.msg_sizes.end());
  if (options_.budget > 0) max_evaluations_ = options_.budget;

  std::set<int> ids;
  for (const auto& size : options_.sizes)
    for (const auto& p : space_at(size.comm_size).points()) ids.insert(p.algorithm);
  algorithms_.assign(ids.begin(), ids.end());
  largest_.emplace(collective_, options_.sizes.back().comm_size, *table_);
  encoder_.emplace(*largest_);
  make_design();
}

const SearchSpace& ClusterBayesStrategy::space_at(int comm_size) const {
  auto it = spaces_.find(comm_size);
  if (it == spaces_.end())
    it = spaces_.emplace(comm_size, std::make_unique<SearchSpace>(collective_, comm_size, *table_))
             .first;
  return *it->second;
}

double ClusterBayesStrategy::run_cost(int comm_size) const {
  for (const auto& s : options_.sizes)
    if (s.comm_size == comm_size && s.run_cost > 0) return s.run_cost;
  // Rank-seconds: ranks x a benchmark time that grows like log2 P.
  return comm_size * std::max(1.0, std::log2(static_cast<double>(comm_size)));
}

std::map<int, TimedRuns> ClusterBayesStrategy::timed_runs() const {
  std::map<int, TimedRuns> out;
  for (const auto& o : evaluations_)
    if (o.evaluation.seconds > 0) {
      out[o.comm_size].node_seconds += o.evaluation.seconds * nodes_of(o.comm_size);
      ++out[o.comm_size].runs;
    }
  return out;
}

double ClusterBayesStrategy::size_price(int comm_size) const {
  return size_price(comm_size, timed_runs());
}

double ClusterBayesStrategy::size_price(int comm_size,
                                        const std::map<int, TimedRuns>& timed) const {
  return timed_run_price(comm_size, timed, [this](int p) { return run_cost(p); });
}

int ClusterBayesStrategy::nodes_of(int comm_size) const {
  for (const auto& s : options_.sizes)
    if (s.comm_size == comm_size) return std::max(1, s.nodes);
  return 1;
}

int ClusterBayesStrategy::ranks_per_node(int comm_size) const {
  if (!settings_.cost_model_nodes) return 0;
  for (const auto& s : options_.sizes)
    if (s.comm_size == comm_size && s.nodes > 1)
      return s.ppn > 0 ? s.ppn : (comm_size + s.nodes - 1) / s.nodes;
  return settings_.cost_model_memory ? comm_size : 0;
}

std::optional<CostTerms> ClusterBayesStrategy::cost_terms(const TuningConfig& config, int comm_size,
                                                          std::int64_t msg_size) const {
  auto terms =
      algorithm_cost_terms(collective_, config, comm_size, msg_size, ranks_per_node(comm_size));
  if (terms && !settings_.cost_model_memory) terms->shared_bytes = 0;
  return terms;
}

double ClusterBayesStrategy::pending_node_seconds() const {
  double total = 0;
  for (const auto& [pair, price] : pending_) total += price;
  return total;
}

std::set<int> ClusterBayesStrategy::timed_sizes() const {
  std::set<int> out;
  for (const auto& [comm_size, runs] : timed_runs()) out.insert(comm_size);
  return out;
}

double ClusterBayesStrategy::batch_price_factor() const {
  std::vector<double> ratios;
  for (const auto& o : evaluations_)
    if (o.priced > 0 && o.evaluation.seconds > 0)
      ratios.push_back(o.evaluation.seconds * nodes_of(o.comm_size) / o.priced);
  if (ratios.empty()) return 1.0;
  std::sort(ratios.begin(), ratios.end());
  // The nearest-rank quantile: with few runs, the dearest surprise so far.
  const auto rank = static_cast<std::size_t>(
      std::ceil(settings_.batch_price_quantile * static_cast<double>(ratios.size())));
  return std::max(1.0, ratios[std::clamp<std::size_t>(rank, 1, ratios.size()) - 1]);
}

bool ClusterBayesStrategy::prices_configurations() const {
  if (options_.calls_per_run.empty()) return false;
  for (auto m : options_.msg_sizes)
    if (!options_.calls_per_run.count(m)) return false;
  return true;
}

std::map<int, double> ClusterBayesStrategy::launch_overheads() const {
  // Per observed run: its seconds minus the calls it made at the latencies it measured.
  std::map<int, std::vector<double>> by_size;
  std::vector<double> all;
  for (const auto& o : evaluations_) {
    const Evaluation& e = o.evaluation;
    if (e.failed || !(e.seconds > 0)) continue;
    double compute = 0;
    std::size_t counted = 0;
    for (std::size_t i = 0; i < e.msg_sizes.size() && i < e.latency_us.size(); ++i) {
      auto it = options_.calls_per_run.find(e.msg_sizes[i]);
      if (it == options_.calls_per_run.end() || !std::isfinite(e.latency_us[i])) continue;
      compute += it->second * e.latency_us[i] * 1e-6;
      ++counted;
    }
    if (counted != options_.msg_sizes.size()) continue;  // truncated: its seconds say little
    const double residual = std::max(0.0, e.seconds - compute);
    by_size[o.comm_size].push_back(residual);
    all.push_back(residual);
  }
  std::map<int, double> out;
  const double global = all.empty() ? 0.0 : median(all);
  for (const auto& size : options_.sizes) {
    auto it = by_size.find(size.comm_size);
    out[size.comm_size] = it == by_size.end() ? global : median(it->second);
  }
  return out;
}

double ClusterBayesStrategy::node_seconds() const {
  const auto timed = timed_runs();
  double total = 0;
  for (const auto& o : evaluations_)
    total += o.evaluation.seconds > 0 ? o.evaluation.seconds * nodes_of(o.comm_size)
                                      : size_price(o.comm_size, timed);
  return total;
}

ClusterRow ClusterBayesStrategy::row(int comm_size, const TuningConfig& config, bool offset) const {
  ClusterRow r;
  r.config = encoder_->encode(config);
  auto it = std::lower_bound(algorithms_.begin(), algorithms_.end(), config.algorithm);
  r.config.category = static_cast<int>(it - algorithms_.begin());
  r.log2_comm = std::log2(static_cast<double>(comm_size));
  if (offset) {
    const int m = static_cast<int>(options_.msg_sizes.size());
    r.offset.resize(m);
    for (int s = 0; s < m; ++s) {
      const auto terms = cost_terms(config, comm_size, options_.msg_sizes[s]);
      const double us = terms ? modelled_latency_us(*terms, machine()) : 0.0;
      const double factor =
          settings_.calibrate_algorithms ? calibration().log_factor(config.algorithm) : 0.0;
      r.offset[s] = us > 0 ? std::log(us) + factor : 0.0;
    }
  }
  return r;
}

std::vector<ClusterRow> ClusterBayesStrategy::rows_for(const ClusterGp& gp,
                                                       const std::vector<Pair>& pairs) const {
  const bool offset = !gp.data().rows.empty() && gp.data().rows.front().offset.size() > 0;
  std::vector<ClusterRow> out;
  out.reserve(pairs.size());
  for (const auto& p : pairs) out.push_back(row(p.first, p.second, offset));
  return out;
}

bool ClusterBayesStrategy::cost_model_on() const {
  return settings_.cost_model_prices && prices_configurations() && cost_model_covers(collective_);
}

const ClusterBayesStrategy::CostFit& ClusterBayesStrategy::cost_fit() const {
  if (cost_fit_ && cost_fit_->first == evaluations_.size()) return cost_fit_->second;
  std::vector<CostObservation> cells;
  std::vector<int> algorithm;  // per cell
  for (const auto& o : evaluations_) {
    const Evaluation& e = o.evaluation;
    if (e.failed) continue;
    for (std::size_t i = 0; i < e.msg_sizes.size() && i < e.latency_us.size(); ++i) {
      if (!(std::isfinite(e.latency_us[i]) && e.latency_us[i] > 0)) continue;
      const auto terms = cost_terms(e.config, o.comm_size, e.msg_sizes[i]);
      if (!terms) continue;
      cells.push_back({*terms, e.latency_us[i]});
      algorithm.push_back(e.config.algorithm);
    }
  }
  CostFit fit;
  fit.machine = fit_machine_coefficients(cells, typical_machine_coefficients());
  std::vector<AlgorithmCalibration::Cell> ratios;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const double us = modelled_latency_us(cells[i].terms, fit.machine);
    if (us > 0) ratios.push_back({algorithm[i], std::log(cells[i].latency_us / us)});
  }
  fit.calibration = AlgorithmCalibration(ratios);
  cost_fit_.emplace(evaluations_.size(), std::move(fit));
  return cost_fit_->second;
}

const MachineCoefficients& ClusterBayesStrategy::machine() const { return cost_fit().machine; }

const AlgorithmCalibration& ClusterBayesStrategy::calibration() const {
  return cost_fit().calibration;
}

double ClusterBayesStrategy::modelled_run_seconds(int comm_size, const TuningConfig& config,
                                                  const MachineCoefficients& machine) const {
  double seconds = 0;
  for (auto m : options_.msg_sizes) {
    const auto terms = cost_terms(config, comm_size, m);
    if (terms)
      seconds += options_.calls_per_run.at(m) * modelled_latency_us(*terms, machine) * 1e-6;
  }
  return seconds;
}

double ClusterBayesStrategy::price(int comm_size, const TuningConfig& config) const {
  return span_price(comm_size, config, options_.msg_sizes.front(), options_.msg_sizes.back());
}

double ClusterBayesStrategy::span_price(int comm_size, const TuningConfig& config,
                                        std::int64_t min_size, std::int64_t max_size) const {
  if (!prices_configurations()) return size_price(comm_size);
  // The pricing surrogate, built once per (observations, fitted rows).
  const ModelState key = model_state();
  if (!span_pricing_ || span_pricing_->first != key) span_pricing_.emplace(key, pricing_model());
  const auto& gp = span_pricing_->second;
  const TuningConfig c = space_at(comm_size).canonical(config);
  if (!gp) return planned_price(comm_size, c);
  Eigen::MatrixXd mean, var;
  gp->predict(rows_for(*gp, {{comm_size, c}}), &mean, &var);
  return prices({{comm_size, c}}, mean, var, std::pair{min_size, max_size}).front();
}

double ClusterBayesStrategy::planned_price(int comm_size, const TuningConfig& config) const {
  if (!cost_model_on()) return size_price(comm_size);
  const double seconds = modelled_run_seconds(comm_size, config, typical_machine_coefficients());
  for (const auto& s : options_.sizes)
    if (s.comm_size == comm_size && s.run_cost > 0) {
      auto it = median_model_seconds_.find(comm_size);
      if (it != median_model_seconds_.end() && it->second > 0)
        return s.run_cost * seconds / it->second;
      return s.run_cost;
    }
  return std::max(seconds, 1e-9) * nodes_of(comm_size);
}

void ClusterBayesStrategy::make_design() {
  Rng rng(options_.seed);
  const int k = static_cast<int>(options_.sizes.size());
  int n = settings_.initial_points > 0 ? settings_.initial_points
                                       : lean_design_size(*largest_, /*cover_fanouts=*/true);
  LatinHypercubeOptions lho;
  lho.include_default = false;
  lho.cover_fanouts = true;
  std::vector<TuningConfig> configs = latin_hypercube_design(*largest_, n, rng, lho);
  n = static_cast<int>(configs.size());
  // Latin hypercube over the sizes' order: design point j gets stratum perm[j] of [0, k).
  std::vector<int> perm(n);
  for (int j = 0; j < n; ++j) perm[j] = j;
  rng.shuffle(perm);
  std::set<Pair> seen;
  auto add = [&](int comm_size, const TuningConfig& c) {
    const SearchSpace& space = space_at(comm_size);
    if (!space.contains(c)) return false;
    Pair p{comm_size, space.canonical(c)};
    if (!seen.insert(p).second) return false;
    design_.push_back({p.first, p.second});
    return true;
  };
  if (settings_.design_defaults) {
    for (int idx : {0, (k - 1) / 2, k - 1})
      add(options_.sizes[idx].comm_size, TuningConfig::default_decision());
  }
  for (int j = 0; j < n; ++j) {
    int stratum = static_cast<int>((perm[j] + rng.uniform()) / n * k);
    stratum = std::clamp(stratum, 0, k - 1);
    // The nearest size where the configuration exists (and was not taken yet).
    for (int d = 0; d < k; ++d) {
      if (stratum - d >= 0 && add(options_.sizes[stratum - d].comm_size, configs[j])) break;
      if (d > 0 && stratum + d < k && add(options_.sizes[stratum + d].comm_size, configs[j])) break;
    }
  }
  if (options_.budget_node_seconds > 0) {
    if (cost_model_on())
      for (const auto& size : options_.sizes) {
        std::vector<double> seconds;
        for (const auto& c : space_at(size.comm_size).points())
          seconds.push_back(
              modelled_run_seconds(size.comm_size, c, typical_machine_coefficients()));
        median_model_seconds_[size.comm_size] = median(seconds);
      }
    // Fitted at prices the budget can be checked against: the cost model's, or the sizes'
    // prices the caller gave. The strategy's own estimates (comm_size x log2 comm_size) are in
    // no unit; the design's points are then checked one by one once runs reported their
    // seconds (below, in suggest()).
    const bool callers_prices = std::all_of(options_.sizes.begin(), options_.sizes.end(),
                                            [](const ClusterSize& c) { return c.run_cost > 0; });
    if (cost_model_on() || callers_prices) fit_design_to_budget(seen);
    // Cheapest first: the dear points come when runs were observed and the model prices them.
    std::stable_sort(design_.begin(), design_.end(),
                     [&](const ClusterSuggestion& a, const ClusterSuggestion& b) {
                       return planned_price(a.comm_size, a.config) <
                              planned_price(b.comm_size, b.config);
                     });
  }
}

void ClusterBayesStrategy::fit_design_to_budget(std::set<Pair>& taken) {
  const double cap = settings_.design_budget_fraction * search_budget();
  double total = 0;
  for (const auto& d : design_) total += planned_price(d.comm_size, d.config);
  const double planned = total;
  const std::size_t planned_runs = design_.size();
  std::vector<bool> was_moved(design_.size(), false);  // per point of design_: moved at least once
  int dropped = 0;
  auto index_of = [&](int comm_size) {
    int i = 0;
    while (options_.sizes[i].comm_size != comm_size) ++i;
    return i;
  };
  // The dearest point moves to the next smaller size where its configuration exists (and is
  // not in the design yet); a point that cannot move is dropped; one point always stays.
  while (total > cap && design_.size() > 1) {
    std::size_t dear = 0;
    for (std::size_t i = 1; i < design_.size(); ++i)
      if (planned_price(design_[i].comm_size, design_[i].config) >=
          planned_price(design_[dear].comm_size, design_[dear].config))
        dear = i;
    ClusterSuggestion& d = design_[dear];
    const double before = planned_price(d.comm_size, d.config);
    bool placed = false;
    for (int q = index_of(d.comm_size) - 1; q >= 0 && !placed; --q) {
      const SearchSpace& space = space_at(options_.sizes[q].comm_size);
      if (!space.contains(d.config)) continue;
      Pair p{options_.sizes[q].comm_size, space.canonical(d.config)};
      const double after = planned_price(p.first, p.second);
      if (after >= before || !taken.insert(p).second) continue;
      taken.erase({d.comm_size, d.config});
      d.comm_size = p.first;
      d.config = p.second;
      total += after - before;
      placed = true;
      was_moved[dear] = true;
    }
    if (!placed) {
      taken.erase({d.comm_size, d.config});
      design_.erase(design_.begin() + static_cast<std::ptrdiff_t>(dear));
      was_moved.erase(was_moved.begin() + static_cast<std::ptrdiff_t>(dear));
      total -= before;
      ++dropped;
    }
  }
  // Points moved and still in the design (a point moved and then dropped counts as dropped).
  const int moved = static_cast<int>(std::count(was_moved.begin(), was_moved.end(), true));
  if (moved + dropped == 0) return;
  char text[256];
  std::snprintf(text, sizeof text,
                "initial design fitted to %.0f%% of the node-second budget: %d of %zu runs moved "
                "to smaller sizes, %d dropped (%.4g -> %.4g node-s at %s)",
                100 * settings_.design_budget_fraction, moved, planned_runs, dropped, planned,
                total, cost_model_on() ? "the cost model's prices" : "the sizes' prices");
  design_note_ = text;
}

std::string ClusterBayesStrategy::design_note() const {
  std::string note = design_note_;
  if (design_cut_ > 0)
    note += (note.empty() ? "" : "; ") + std::string("initial design: ") +
            std::to_string(design_cut_) +
            " runs skipped, priced past its share of the budget once runs were observed";
  return note;
}

std::optional<ClusterGp> ClusterBayesStrategy::model(
    const std::vector<Pair>& fantasies, const std::vector<Eigen::VectorXd>& fantasy_values,
    const Eigen::VectorXd* theta) const {
  return model(fantasies, fantasy_values, theta,
               settings_.cost_model_mean && cost_model_covers(collective_));
}

std::optional<ClusterGp> ClusterBayesStrategy::pricing_model() const {
  if (!cost_model_on()) return model({}, {});
  return model({}, {}, nullptr, true);
}

std::optional<ClusterGp> ClusterBayesStrategy::model(
    const std::vector<Pair>& fantasies, const std::vector<Eigen::VectorXd>& fantasy_values,
    const Eigen::VectorXd* theta, bool offsets) const {
  const int m = static_cast<int>(options_.msg_sizes.size());
  std::map<Pair, std::pair<Eigen::VectorXd, int>> cells;  // sum of log latency, runs
  for (const auto& o : evaluations_) {
    if (o.evaluation.failed) continue;
    Eigen::VectorXd y(m);
    bool complete = true;
    for (int s = 0; s < m; ++s) {
      auto it = std::find(o.evaluation.msg_sizes.begin(), o.evaluation.msg_sizes.end(),
                          options_.msg_sizes[s]);
      double v = it == o.evaluation.msg_sizes.end()
                     ? std::numeric_limits<double>::quiet_NaN()
                     : o.evaluation.latency_us[it - o.evaluation.msg_sizes.begin()];
      if (!(std::isfinite(v) && v > 0)) {
        complete = false;
        break;
      }
      y[s] = std::log(v);
    }
    if (!complete) continue;  // a truncated run: kept out of the model (see the header)
    Pair key{o.comm_size, space_at(o.comm_size).canonical(o.evaluation.config)};
    auto [it, inserted] = cells.try_emplace(key, Eigen::VectorXd::Zero(m), 0);
    it->second.first += y;
    it->second.second += 1;
  }
  ClusterGridData data;
  const int n = static_cast<int>(cells.size() + fantasies.size());
  if (cells.empty()) return std::nullopt;
  data.log_latency.resize(n, m);
  data.repeats.resize(n);
  int i = 0;
  for (const auto& [key, cell] : cells) {
    data.rows.push_back(row(key.first, key.second, offsets));
    data.log_latency.row(i) = (cell.first / cell.second).transpose();
    data.repeats[i++] = cell.second;
  }
  for (std::size_t f = 0; f < fantasies.size(); ++f) {
    data.rows.push_back(row(fantasies[f].first, fantasies[f].second, offsets));
    data.log_latency.row(i) = fantasy_values[f].transpose();
    data.repeats[i++] = 1;
  }
  const double lo = std::log2(static_cast<double>(options_.msg_sizes.front()));
  const double hi = std::log2(static_cast<double>(options_.msg_sizes.back()));
  data.size_coord.resize(m);
  for (int s = 0; s < m; ++s)
    data.size_coord[s] =
        hi > lo ? (std::log2(static_cast<double>(options_.msg_sizes[s])) - lo) / (hi - lo) : 0.0;
  if (theta) return ClusterGp(std::move(data), *theta);
  return ClusterGp(std::move(data), theta_ ? *theta_ : ClusterGp::default_theta());
}

void ClusterBayesStrategy::maybe_refit() {
  int rows = 0;
  if (auto theta = stale_fit(&rows)) {
    theta_ = std::move(theta);
    fitted_rows_ = rows;
  }
}

std::optional<Eigen::VectorXd> ClusterBayesStrategy::stale_fit(int* rows_out) const {
  const ModelState key = model_state();
  if (!stale_fit_ || stale_fit_->first != key) {
    int rows = 0;
    auto theta = fit_if_stale(&rows);
    stale_fit_.emplace(key, std::make_pair(rows, std::move(theta)));
  }
  *rows_out = stale_fit_->second.first;
  return stale_fit_->second.second;
}

std::optional<Eigen::VectorXd> ClusterBayesStrategy::fit_if_stale(int* rows_out) const {
  auto gp = model({}, {});
  if (!gp) return std::nullopt;
  const int rows = static_cast<int>(gp->data().rows.size());
  *rows_out = rows;
  if (rows < 3) return std::nullopt;
  if (theta_ && rows < settings_.refit_growth * fitted_rows_) return std::nullopt;
  ClusterGridData data = gp->data();
  if (rows > settings_.max_fit_rows) {  // evenly spaced rows, deterministic
    ClusterGridData sub;
    const int keep = settings_.max_fit_rows;
    sub.size_coord = data.size_coord;
    sub.log_latency.resize(keep, data.log_latency.cols());
    sub.repeats.resize(keep);
    for (int j = 0; j < keep; ++j) {
      int src = static_cast<int>(static_cast<long>(j) * rows / keep);
      sub.rows.push_back(data.rows[src]);
      sub.log_latency.row(j) = data.log_latency.row(src);
      sub.repeats[j] = data.repeats[src];
    }
    data = std::move(sub);
  }
  std::vector<Eigen::VectorXd> starts;
  if (theta_) starts.push_back(*theta_);
  starts.push_back(ClusterGp::default_theta());
  return fit_cluster_gp(data, starts);
}

std::vector<double> ClusterBayesStrategy::prices(
    const std::vector<Pair>& pairs, const Eigen::MatrixXd& mean, const Eigen::MatrixXd& var,
    std::optional<std::pair<std::int64_t, std::int64_t>> span) const {
  const bool per_config = prices_configurations();
  const auto overhead = per_config ? launch_overheads() : std::map<int, double>{};
  const auto timed = per_config ? std::map<int, TimedRuns>{} : timed_runs();
  std::vector<double> out(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const int comm = pairs[i].first;
    if (!per_config) {
      out[i] = size_price(comm, timed);
      continue;
    }
    double seconds = overhead.at(comm);
    for (int s = 0; s < mean.cols(); ++s) {
      const std::int64_t m = options_.msg_sizes[s];
      if (span && (m < span->first || m > span->second)) continue;
      seconds += options_.calls_per_run.at(m) *
                 std::exp(mean(i, s) + 0.5 * std::min(var(i, s), 1.0)) * 1e-6;
    }
    out[i] = std::max(seconds, 1e-9) * nodes_of(comm);
  }
  return out;
}

int ClusterBayesStrategy::cell_means(int comm_size, const TuningConfig& config,
                                     Eigen::VectorXd* mean_log) const {
  const int m = static_cast<int>(options_.msg_sizes.size());
  const SearchSpace& space = space_at(comm_size);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(m);
  int runs = 0;
  for (const auto& o : evaluations_) {
    if (o.comm_size != comm_size || o.evaluation.failed ||
        space.canonical(o.evaluation.config) != config)
      continue;
    Eigen::VectorXd y(m);
    bool complete = true;
    for (int s = 0; s < m && complete; ++s) {
      auto it = std::find(o.evaluation.msg_sizes.begin(), o.evaluation.msg_sizes.end(),
                          options_.msg_sizes[s]);
      const double v = it == o.evaluation.msg_sizes.end()
                           ? std::numeric_limits<double>::quiet_NaN()
                           : o.evaluation.latency_us[it - o.evaluation.msg_sizes.begin()];
      complete = std::isfinite(v) && v > 0;
      if (complete) y[s] = std::log(v);
    }
    if (!complete) continue;  // as in model(): a truncated run is not in the model either
    sum += y;
    ++runs;
  }
  if (runs > 0) *mean_log = sum / runs;
  return runs;
}

void ClusterBayesStrategy::tie_default_alias(const ClusterGp& gp, int comm_size,
                                             const std::vector<TuningConfig>& configs, int offset,
                                             Eigen::MatrixXd& mean, Eigen::MatrixXd& var) const {
  if (!settings_.default_alias) return;
  const SearchSpace& space = space_at(comm_size);
  const int m = static_cast<int>(options_.msg_sizes.size());
  // The message sizes at which the default runs each alias.
  std::map<TuningConfig, std::vector<int>> runs_alias;
  for (int s = 0; s < m; ++s)
    if (auto alias = space.default_alias(options_.msg_sizes[s]); alias && space.contains(*alias))
      runs_alias[*alias].push_back(s);
  if (runs_alias.empty()) return;
  Eigen::VectorXd def_y;
  const int def_runs = cell_means(comm_size, TuningConfig::default_decision(), &def_y);
  if (def_runs == 0) return;
  const Eigen::VectorXd noise_var = gp.noise_sd().array().square().matrix();
  for (const auto& [alias, at] : runs_alias) {
    const auto it = std::find(configs.begin(), configs.end(), alias);
    if (it == configs.end()) continue;
    const int a = offset + static_cast<int>(it - configs.begin());
    // An alias run at this size is known from its own runs (the model has them); pooling the
    // default's runs into it too would also pool their outliers, which the model's Gaussian
    // noise does not expect (bench/README.md "Whole-cluster", allreduce at 4 ranks).
    Eigen::VectorXd own;
    if (cell_means(comm_size, alias, &own) > 0) continue;
    // The default's runs at `at` are runs of the alias, with the per-run noise: the alias's
    // posterior across all message sizes is conditioned on them.
    Eigen::VectorXd mu;
    Eigen::MatrixXd cov;
    gp.predict_joint(rows_for(gp, {{comm_size, alias}}).front(), &mu, &cov);
    const int k = static_cast<int>(at.size());
    Eigen::MatrixXd c_ss(k, k), c_xs(m, k);
    Eigen::VectorXd resid(k);
    for (int i = 0; i < k; ++i) {
      resid[i] = def_y[at[i]] - mu[at[i]];
      c_xs.col(i) = cov.col(at[i]);
      for (int j = 0; j < k; ++j) c_ss(i, j) = cov(at[i], at[j]);
      c_ss(i, i) += noise_var[at[i]] / def_runs;
    }
    const Eigen::LDLT<Eigen::MatrixXd> solve(c_ss);
    mu += c_xs * solve.solve(resid);
    cov -= c_xs * solve.solve(c_xs.transpose());
    mean.row(a) = mu.transpose();
    var.row(a) = cov.diagonal().cwiseMax(1e-10).transpose();
  }
}

bool ClusterBayesStrategy::search_posterior(int comm_size, const std::vector<TuningConfig>& configs,
                                            Eigen::MatrixXd* mean, Eigen::MatrixXd* var) const {
  int fit_rows = 0;  // as the search would: refitted when the observations outgrew the fit
  const auto fresh = stale_fit(&fit_rows);
  auto gp = model({}, {}, fresh ? &*fresh : nullptr);
  if (!gp) return false;
  std::vector<TuningConfig> canonical;
  std::vector<Pair> pairs;
  for (const auto& c : configs) {
    canonical.push_back(space_at(comm_size).canonical(c));
    pairs.push_back({comm_size, canonical.back()});
  }
  gp->predict(rows_for(*gp, pairs), mean, var);
  tie_default_alias(*gp, comm_size, canonical, 0, *mean, *var);
  return true;
}

std::vector<ClusterBayesStrategy::Scored> ClusterBayesStrategy::acquisition(
    const ClusterGp& gp, const ClusterGp* pricing, const std::set<Pair>& excluded) const {
  const int m = static_cast<int>(options_.msg_sizes.size());
  const int k = static_cast<int>(options_.sizes.size());
  // Posterior of every configuration of every size.
  std::vector<Pair> all;
  std::vector<int> first(k + 1, 0);
  for (int p = 0; p < k; ++p) {
    first[p] = static_cast<int>(all.size());
    const int comm = options_.sizes[p].comm_size;
    for (const auto& c : space_at(comm).points()) all.push_back({comm, c});
  }
  first[k] = static_cast<int>(all.size());
  Eigen::MatrixXd mean, var;
  gp.predict(rows_for(gp, all), &mean, &var);
  // The price of each candidate: its predicted run time (launch overhead + calls x the
  // predicted mean latency, exp(mu + min(var, 1) / 2)) x the nodes of its size, from the
  // pricing surrogate when there is one (the cost model in its prior mean), else from the
  // search's own posterior before the default's aliases are tied in; or the size's price when
  // the calls per run are unknown.
  std::vector<double> price;
  if (pricing && pricing != &gp) {
    Eigen::MatrixXd price_mean, price_var;
    pricing->predict(rows_for(*pricing, all), &price_mean, &price_var);
    price = prices(all, price_mean, price_var);
  } else {
    price = prices(all, mean, var);
  }
  for (int p = 0; p < k; ++p) {
    const int comm = options_.sizes[p].comm_size;
    tie_default_alias(gp, comm, space_at(comm).points(), first[p], mean, var);
  }
  // Summed EI of each pair at its own size.
  std::map<Pair, double> ei, top_ei;
  for (int p = 0; p < k; ++p) {
    Eigen::VectorXd best = mean.middleRows(first[p], first[p + 1] - first[p]).colwise().minCoeff();
    for (int i = first[p]; i < first[p + 1]; ++i) {
      double sum = 0, top = 0;
      for (int s = 0; s < m; ++s) {
        double e = expected_improvement(mean(i, s), std::sqrt(var(i, s)), best[s]);
        sum += e;
        top = std::max(top, e);
      }
      ei[all[i]] = sum;
      top_ei[all[i]] = top;
    }
  }
  const double cheapest = *std::min_element(price.begin(), price.end());
  const double length = std::exp(gp.theta()[kClusterLogLengthComm]);
  // EI-cool (Lee et al. 2020): EI per cost^alpha, alpha falling from 1 to 0 as the budget is
  // spent, so that cheap sizes are explored first and the expensive ones are not starved.
  double used = static_cast<double>(evaluations_.size() + pending_.size()) / max_evaluations_;
  if (options_.budget_node_seconds > 0)
    used =
        std::max(used, (node_seconds() + pending_node_seconds()) / std::max(search_budget(), 1e-9));
  const double alpha = std::clamp(1.0 - used, 0.0, 1.0);
  std::vector<Scored> out;
  for (int p = 0; p < k; ++p) {
    const int comm = options_.sizes[p].comm_size;
    for (int i = first[p]; i < first[p + 1]; ++i) {
      if (excluded.count(all[i])) continue;
      const double cost = std::pow(price[i] / cheapest, alpha);
      double value = 0;
      for (int q = 0; q < k; ++q) {
        const int other = options_.sizes[q].comm_size;
        const SearchSpace& space = space_at(other);
        if (!space.contains(all[i].second)) continue;
        auto it = ei.find({other, space.canonical(all[i].second)});
        if (it == ei.end()) continue;
        double c = comm_correlation(std::log2(static_cast<double>(comm)),
                                    std::log2(static_cast<double>(other)), length);
        value += c * c * it->second;
      }
      out.push_back({all[i], value / cost, top_ei[all[i]], price[i]});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Scored& a, const Scored& b) { return a.value > b.value; });
  return out;
}

double ClusterBayesStrategy::search_budget() const {
  if (options_.budget_node_seconds <= 0 || !options_.reserve) return options_.budget_node_seconds;
  // What the reserve holds back for the strategy as it stands, kept until its observations or
  // its model change.
  const ModelState key = model_state();
  if (!reserve_ || reserve_->first != key) reserve_.emplace(key, options_.reserve(*this));
  return options_.budget_node_seconds - reserve_->second;
}

double ClusterBayesStrategy::node_seconds_left() const {
  if (options_.budget_node_seconds <= 0) return std::numeric_limits<double>::infinity();
  return search_budget() - node_seconds() - pending_node_seconds();
}

bool ClusterBayesStrategy::run_cap_reached() const {
  return static_cast<int>(evaluations_.size() + pending_.size()) >= max_evaluations_;
}

std::string ClusterBayesStrategy::budget_reason() const {
  if (run_cap_reached()) return "budget: " + std::to_string(max_evaluations_) + " runs";
  return "budget: node-seconds";
}

bool ClusterBayesStrategy::budget_spent() const {
  if (run_cap_reached()) return true;
  if (options_.budget_node_seconds > 0 &&
      node_seconds() + pending_node_seconds() >= search_budget())
    return true;
  return false;
}

std::vector<ClusterSuggestion> ClusterBayesStrategy::suggest(int max_count) {
  std::vector<ClusterSuggestion> out;
  if (stopped_ || max_count <= 0) return out;
  if (options_.reserve && options_.budget_node_seconds > 0) {
    maybe_refit();  // the reserve reads the model as it stands
    if (pending_.empty() && budget_spent()) {
      stopped_ = true;
      stop_reason_ = budget_reason();
      return out;
    }
  }
  // Under a node-second budget, the first batch is one run, the design's cheapest: before a run
  // was observed a price has no unit (the sizes' prices and the cost model's leave out the
  // launch), and a whole first batch at such prices crossed a small budget many times over
  // (docs/whole-cluster.md, "The search"). The runs after it are priced from what it cost.
  if (options_.budget_node_seconds > 0 && evaluations_.empty() && pending_.empty())
    max_count = std::min(max_count, 1);
  std::set<Pair> excluded;
  for (const auto& [pair, price] : pending_) excluded.insert(pair);
  for (const auto& o : evaluations_)
    excluded.insert({o.comm_size, space_at(o.comm_size).canonical(o.evaluation.config)});
  // Under a node-second budget, a design point costs its size's price until runs were
  // observed, then the model's price for it (per configuration); a point that would take the
  // design past its share of the budget is skipped (design_cut_).
  // The points after a batch's first join it as BatchCheck says, within the design's share.
  const bool budgeted = options_.budget_node_seconds > 0;
  std::optional<ClusterGp> design_gp;
  std::optional<BatchCheck> design_batch;
  if (budgeted && design_next_ < design_.size()) {
    if (prices_configurations()) {
      maybe_refit();
      design_gp = pricing_model();
    }
    if (settings_.batch_price_quantile > 0)
      design_batch.emplace(settings_.design_budget_fraction * search_budget() - node_seconds() -
                               pending_node_seconds(),
                           batch_price_factor(), timed_sizes(), settings_.blind_price_factor,
                           node_seconds_left());
  }
  while (static_cast<int>(out.size()) < max_count && design_next_ < design_.size()) {
    if (budget_spent()) break;
    const auto& d = design_[design_next_];
    if (excluded.count({d.comm_size, d.config})) {
      ++design_next_;
      continue;
    }
    double price = planned_price(d.comm_size, d.config);
    if (design_gp) {
      Eigen::MatrixXd mean, var;
      design_gp->predict(rows_for(*design_gp, {{d.comm_size, d.config}}), &mean, &var);
      price = prices({{d.comm_size, d.config}}, mean, var).front();
    }
    if (budgeted && node_seconds() + pending_node_seconds() + price >
                        settings_.design_budget_fraction * search_budget()) {
      ++design_next_;
      ++design_cut_;  // cannot afford it within the design's share
      continue;
    }
    if (design_batch && !design_batch->admits(d.comm_size, price)) break;  // the next batch's
    ++design_next_;
    if (design_batch) design_batch->add(d.comm_size, price);
    out.push_back(d);
    pending_.insert({{d.comm_size, d.config}, price});
    excluded.insert({d.comm_size, d.config});
  }
  if (!out.empty() || design_next_ < design_.size()) return out;

  maybe_refit();
  std::vector<Pair> fantasies;
  std::vector<Eigen::VectorXd> fantasy_values;
  for (const auto& [pair, price] : pending_) fantasies.push_back(pair);
  auto believe = [&](const ClusterGp& gp) {
    std::vector<Pair> fresh(fantasies.begin() + static_cast<std::ptrdiff_t>(fantasy_values.size()),
                            fantasies.end());
    if (fresh.empty()) return;
    Eigen::MatrixXd mean;
    gp.predict(rows_for(gp, fresh), &mean, nullptr);
    for (int r = 0; r < mean.rows(); ++r) fantasy_values.push_back(mean.row(r).transpose());
  };
  auto gp = model({}, {});
  if (!gp) {
    // Nothing usable observed yet (the design's runs pending or failed): random pairs, so that
    // an empty answer keeps meaning "nothing more to ask".
    Rng rng(options_.seed ^ (0x9E3779B97F4A7C15ULL * (evaluations_.size() + pending_.size() + 1)));
    std::vector<Pair> free;
    for (const auto& size : options_.sizes)
      for (const auto& c : space_at(size.comm_size).points())
        if (!excluded.count({size.comm_size, c})) free.push_back({size.comm_size, c});
    rng.shuffle(free);
    for (const auto& p : free) {
      if (static_cast<int>(out.size()) >= max_count || budget_spent()) break;
      out.push_back({p.first, p.second});
      pending_.insert({p, planned_price(p.first, p.second)});
    }
    if (out.empty() && pending_.empty()) stopped_ = true, stop_reason_ = "space exhausted";
    return out;
  }
  believe(*gp);
  gp = model(fantasies, fantasy_values);
  // The pricing surrogate, on the observed runs (a fantasy adds nothing to a price).
  std::optional<ClusterGp> pricing;
  if (cost_model_on() && !(settings_.cost_model_mean && cost_model_covers(collective_)))
    pricing = pricing_model();
  bool first_pick = pending_.empty();
  // Under a node-second budget the first pick of a batch needs its price to fit what is left,
  // the others join as BatchCheck says.
  std::optional<BatchCheck> batch;
  if (budgeted && settings_.batch_price_quantile > 0)
    batch.emplace(node_seconds_left(), batch_price_factor(), timed_sizes(),
                  settings_.blind_price_factor, node_seconds_left());
  while (static_cast<int>(out.size()) < max_count) {
    if (budget_spent()) {
      if (pending_.empty()) stopped_ = true, stop_reason_ = budget_reason();
      break;
    }
    auto scored = acquisition(*gp, pricing ? &*pricing : nullptr, excluded);
    if (scored.empty()) {
      if (pending_.empty()) stopped_ = true, stop_reason_ = "space exhausted";
      break;
    }
    // The best candidate the rest of the node-second budget can pay for (at its price).
    auto affordable = scored.begin();
    if (options_.budget_node_seconds > 0) {
      const double left = node_seconds_left();
      affordable = std::find_if(scored.begin(), scored.end(),
                                [&](const Scored& x) { return x.price <= left; });
      if (affordable == scored.end()) {
        if (pending_.empty()) stopped_ = true, stop_reason_ = budget_reason();
        break;
      }
    }
    if (first_pick) {  // the stop rule, judged on the model without fantasies
      double noise = gp->noise_sd().mean();
      double threshold = std::max(settings_.ei_floor, settings_.ei_noise_fraction * noise);
      double best_ei = 0;
      for (const auto& s : scored) best_ei = std::max(best_ei, s.max_ei);
      if (best_ei < threshold) {
        stopped_ = true;
        stop_reason_ = "ei";
        break;
      }
      first_pick = false;
    }
    if (batch && !batch->admits(affordable->pair.first, affordable->price)) break;
    if (batch) batch->add(affordable->pair.first, affordable->price);
    const Pair pick = affordable->pair;
    out.push_back({pick.first, pick.second});
    pending_.insert({pick, affordable->price});
    excluded.insert(pick);
    fantasies.push_back(pick);
    believe(*gp);
    gp = model(fantasies, fantasy_values);
  }
  return out;
}

void ClusterBayesStrategy::observe(int comm_size, const Evaluation& evaluation) {
  if (comm_size < 2) throw std::invalid_argument("bo-cluster: comm size below 2");
  if (evaluation.msg_sizes.size() != evaluation.latency_us.size())
    throw std::invalid_argument("bo-cluster: evaluation sizes and latencies differ in length");
  const TuningConfig c = space_at(comm_size).canonical(evaluation.config);
  // Its price when picked counts as a price in seconds when a run had reported its seconds by
  // then (under a budget the first batch is that one run; the runs after it were priced after).
  const bool timed = std::any_of(evaluations_.begin(), evaluations_.end(),
                                 [](const Observed& e) { return e.evaluation.seconds > 0; });
  Observed o{comm_size, evaluation};
  auto it = pending_.find(Pair{comm_size, c});
  if (it != pending_.end()) {
    if (timed) o.priced = it->second;
    pending_.erase(it);
  }
  o.evaluation.config = c;
  evaluations_.push_back(std::move(o));
  // The budget itself; what the reserve holds back is judged when the next batch is asked for
  // (it may read the model, which is refitted then).
  if (!stopped_ && pending_.empty() &&
      (run_cap_reached() ||
       (options_.budget_node_seconds > 0 && node_seconds() >= options_.budget_node_seconds))) {
    stopped_ = true;
    stop_reason_ = budget_reason();
  }
}

bool ClusterBayesStrategy::done() const { return stopped_; }

std::vector<TuningConfig> ClusterBayesStrategy::finalists(int comm_size, int per_size) const {
  std::vector<TuningConfig> out;
  if (per_size <= 0) return out;
  std::set<TuningConfig> observed, failed;
  for (const auto& o : evaluations_)
    if (o.comm_size == comm_size)
      (o.evaluation.failed ? failed : observed).insert(o.evaluation.config);
  for (const auto& f : failed) observed.erase(f);
  if (observed.empty()) return out;
  auto gp = model({}, {});
  if (!gp) return out;
  std::vector<TuningConfig> configs(observed.begin(), observed.end());
  std::vector<Pair> pairs;
  for (const auto& c : configs) pairs.push_back({comm_size, c});
  Eigen::MatrixXd mean;
  gp->predict(rows_for(*gp, pairs), &mean, nullptr);
  for (int s = 0; s < mean.cols(); ++s) {
    std::vector<int> order(configs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return mean(a, s) < mean(b, s); });
    for (int r = 0; r < per_size && r < static_cast<int>(order.size()); ++r)
      if (std::find(out.begin(), out.end(), configs[order[r]]) == out.end())
        out.push_back(configs[order[r]]);
  }
  return out;
}

ClusterBayesStrategy::SizePosterior ClusterBayesStrategy::size_posterior(const ClusterGp* gp,
                                                                         int comm) const {
  if (comm < 2) throw std::invalid_argument("bo-cluster: comm size below 2");
  SizePosterior out;
  const SearchSpace& space = space_at(comm);
  const int m = static_cast<int>(options_.msg_sizes.size());
  // Runs at this size, per configuration and message size.
  std::set<TuningConfig> failed;
  for (const auto& o : evaluations_) {
    if (o.comm_size != comm) continue;
    if (o.evaluation.failed) {
      failed.insert(o.evaluation.config);
      continue;
    }
    auto& r = out.runs[o.evaluation.config];
    r.resize(m);
    for (int s = 0; s < m; ++s) {
      auto it = std::find(o.evaluation.msg_sizes.begin(), o.evaluation.msg_sizes.end(),
                          options_.msg_sizes[s]);
      if (it == o.evaluation.msg_sizes.end()) continue;
      double v = o.evaluation.latency_us[it - o.evaluation.msg_sizes.begin()];
      if (std::isfinite(v) && v > 0) r[s].push_back(v);
    }
  }
  // Candidates: the configurations run somewhere (in their canonical form at this size) and
  // the default; a configuration never run anywhere is not recommended on the prior alone.
  std::set<TuningConfig> seen{TuningConfig::default_decision()};
  for (const auto& o : evaluations_)
    if (!o.evaluation.failed) seen.insert(space.canonical(o.evaluation.config));
  for (const auto& c : space.points())
    if (!failed.count(c) && seen.count(c)) out.configs.push_back(c);
  if (gp) {
    std::vector<Pair> pairs;
    for (const auto& c : out.configs) pairs.push_back({comm, c});
    gp->predict(rows_for(*gp, pairs), &out.mean, &out.var);
    // The default's aliases (header comment) rank the configurations; the confidence keeps
    // the model's own variances: they may not make a predicted pick surer.
    Eigen::MatrixXd tied_var = out.var;
    tie_default_alias(*gp, comm, out.configs, 0, out.mean, tied_var);
  }
  out.def = static_cast<int>(
      std::find(out.configs.begin(), out.configs.end(), TuningConfig::default_decision()) -
      out.configs.begin());
  return out;
}

double ClusterBayesStrategy::SizePosterior::measured_median(const TuningConfig& c, int s) const {
  auto it = runs.find(c);
  return it == runs.end() ? std::numeric_limits<double>::quiet_NaN() : median(it->second[s]);
}

ClusterChoice ClusterBayesStrategy::SizePosterior::versus_default(int i, int s) const {
  ClusterChoice choice;
  choice.config = configs[i];
  const double own = measured_median(configs[i], s);
  choice.measured = std::isfinite(own);
  choice.latency_us = choice.measured ? own : std::exp(mean(i, s));
  choice.default_us = std::numeric_limits<double>::quiet_NaN();
  choice.confidence = 0.5;
  if (def < static_cast<int>(configs.size())) {
    const double def_median = measured_median(configs[def], s);
    choice.default_us = std::isfinite(def_median) ? def_median : std::exp(mean(def, s));
    if (i != def) {
      if (choice.measured && std::isfinite(def_median) && own < def_median) {
        choice.confidence = 1.0;
      } else {
        choice.gain_sd = std::sqrt(var(i, s) + var(def, s));
        choice.confidence = normal_cdf((mean(def, s) - mean(i, s)) / choice.gain_sd);
      }
    }
  }
  return choice;
}

std::vector<ClusterChoice> ClusterBayesStrategy::recommend(const std::vector<int>& comm_sizes,
                                                           double min_confidence) const {
  std::vector<ClusterChoice> out;
  int fit_rows = 0;
  const auto fresh = stale_fit(&fit_rows);
  auto gp = model({}, {}, fresh ? &*fresh : nullptr);
  const int m = static_cast<int>(options_.msg_sizes.size());
  for (int comm : comm_sizes) {
    const SizePosterior post = size_posterior(gp ? &*gp : nullptr, comm);
    for (int s = 0; s < m; ++s) {
      if (!gp || post.configs.empty()) {  // nothing observed yet: the default, unknown
        ClusterChoice choice;
        choice.config = TuningConfig::default_decision();
        choice.default_us = choice.latency_us = post.measured_median(choice.config, s);
        choice.measured = std::isfinite(choice.latency_us);
        choice.confidence = 0.5;
        choice.comm_size = comm;
        choice.msg_size = options_.msg_sizes[s];
        out.push_back(choice);
        continue;
      }
      int best = 0;
      for (int i = 1; i < static_cast<int>(post.configs.size()); ++i)
        if (post.mean(i, s) < post.mean(best, s)) best = i;
      ClusterChoice choice = post.versus_default(best, s);
      choice.comm_size = comm;
      choice.msg_size = options_.msg_sizes[s];
      if (!choice.measured && best != post.def && choice.confidence < min_confidence) {
        choice.config = TuningConfig::default_decision();
        const double def_median = post.measured_median(choice.config, s);
        choice.measured = std::isfinite(def_median);
        choice.latency_us = choice.default_us;
      }
      out.push_back(choice);
    }
  }
  return out;
}

VersusDefault ClusterBayesStrategy::versus_default(int comm_size,
                                                   const std::set<TuningConfig>& configs) const {
  VersusDefault out;
  int fit_rows = 0;
  const auto fresh = stale_fit(&fit_rows);
  auto gp = model({}, {}, fresh ? &*fresh : nullptr);
  if (!gp) return out;
  const SizePosterior post = size_posterior(&*gp, comm_size);
  const SearchSpace& space = space_at(comm_size);
  const int m = static_cast<int>(options_.msg_sizes.size());
  for (const auto& config : configs) {
    const auto at = std::find(post.configs.begin(), post.configs.end(), space.canonical(config));
    if (at == post.configs.end()) continue;
    auto& rows = out[config];
    for (int s = 0; s < m; ++s) {
      const ClusterChoice c = post.versus_default(static_cast<int>(at - post.configs.begin()), s);
      rows.push_back({options_.msg_sizes[s], config, c.latency_us, c.default_us, c.gain_sd});
    }
  }
  return out;
}

nlohmann::json ClusterBayesStrategy::state() const {
  nlohmann::json evals = nlohmann::json::array();
  for (const auto& o : evaluations_) {
    nlohmann::json j = o.evaluation;
    j["comm_size"] = o.comm_size;
    if (o.priced > 0) j["priced"] = o.priced;
    evals.push_back(std::move(j));
  }
  nlohmann::json pending = nlohmann::json::array();
  for (const auto& [p, price] : pending_) {
    auto j = pair_json(p.first, p.second);
    j["node_seconds"] = price;
    pending.push_back(std::move(j));
  }
  nlohmann::json theta = nullptr;
  if (theta_) theta = std::vector<double>(theta_->data(), theta_->data() + theta_->size());
  return {{"strategy", name()},
          {"evaluations", evals},
          {"pending", pending},
          {"design_next", design_next_},
          {"theta", theta},
          {"fitted_rows", fitted_rows_},
          {"stopped", stopped_},
          {"stop_reason", stop_reason_},
          {"design_note", design_note()},
          {"design_cut", design_cut_}};
}

void ClusterBayesStrategy::restore(const nlohmann::json& state) {
  if (!state.is_object() || state.value("strategy", "") != name())
    throw std::invalid_argument("bo-cluster: not a bo-cluster state");
  std::vector<Observed> evals;
  for (const auto& e : state.at("evaluations")) {
    Observed o;
    o.comm_size = e.at("comm_size").get<int>();
    o.evaluation = e.get<Evaluation>();  // seconds absent in older states: priced
    o.priced = e.value("priced", 0.0);   // absent in older states: unknown
    if (o.comm_size < 2) throw std::invalid_argument("bo-cluster: malformed evaluation in state");
    evals.push_back(std::move(o));
  }
  std::multimap<Pair, double> pending;
  for (const auto& p : state.at("pending")) {
    const int comm = p.at("comm_size").get<int>();
    // Older states carry no price: the size's.
    const double price = p.contains("node_seconds") ? p.at("node_seconds").get<double>() : 0.0;
    pending.insert(
        {{comm, p.at("config").get<TuningConfig>()}, price > 0 ? price : run_cost(comm)});
  }
  std::optional<Eigen::VectorXd> theta;
  if (!state.at("theta").is_null()) {
    theta = upgrade_cluster_theta(state.at("theta").get<std::vector<double>>());
  }
  evaluations_ = std::move(evals);
  cost_fit_.reset();
  reserve_.reset();
  span_pricing_.reset();
  stale_fit_.reset();
  pending_ = std::move(pending);
  theta_ = std::move(theta);
  design_next_ = std::min<std::size_t>(state.at("design_next").get<std::size_t>(), design_.size());
  design_cut_ = state.value("design_cut", 0);
  fitted_rows_ = state.value("fitted_rows", 0);
  stopped_ = state.value("stopped", false);
  stop_reason_ = state.value("stop_reason", "");
}

}  // namespace colltune
