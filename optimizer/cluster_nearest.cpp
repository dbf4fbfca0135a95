#include "optimizer/cluster_nearest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "optimizer/expected_improvement.h"
#include "optimizer/final_choice.h"

namespace colltune {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double octaves(int a, int b) { return std::abs(std::log2(double(a) / double(b))); }

}  // namespace

NearestClusterStrategy::NearestClusterStrategy(Collective collective, const AlgorithmTable& table,
                                               const ClusterStrategyOptions& options)
    : collective_(collective), table_(table), options_(options) {
  if (options_.sizes.empty()) throw std::invalid_argument("nearest: no communicator sizes");
  std::sort(options_.sizes.begin(), options_.sizes.end(),
            [](const ClusterSize& a, const ClusterSize& b) { return a.comm_size < b.comm_size; });
  for (std::size_t i = 0; i < options_.sizes.size(); ++i) {
    if (options_.sizes[i].comm_size < 2)
      throw std::invalid_argument("nearest: communicator size " +
                                  std::to_string(options_.sizes[i].comm_size) + " is below 2");
    if (i > 0 && options_.sizes[i].comm_size == options_.sizes[i - 1].comm_size)
      throw std::invalid_argument("nearest: communicator size " +
                                  std::to_string(options_.sizes[i].comm_size) + " given twice");
  }
  if (options_.msg_sizes.empty()) throw std::invalid_argument("nearest: no message sizes");
  for (const auto& [key, value] : options_.settings.items()) {
    if (key != "noise") throw std::invalid_argument("nearest: unknown setting '" + key + "'");
    if (!value.is_number() || value.get<double>() <= 0 || value.get<double>() > 1)
      throw std::invalid_argument("nearest: noise must be a number in (0, 1]");
    noise_floor_ = value.get<double>();
  }
  budget_ = options_.budget > 0 ? options_.budget : 12 * static_cast<int>(options_.sizes.size());
}

const SearchSpace& NearestClusterStrategy::space(int comm_size) const {
  auto it = spaces_.find(comm_size);
  if (it == spaces_.end())
    it = spaces_.emplace(comm_size, SearchSpace(collective_, comm_size, table_)).first;
  return it->second;
}

double NearestClusterStrategy::cost_of(const ClusterSize& size) const {
  return size.run_cost > 0 ? size.run_cost : double(size.comm_size);
}

double NearestClusterStrategy::run_price(int comm_size, const TuningConfig& config) const {
  (void)config;
  return timed_run_price(comm_size, timed_, [&](int p) {
    for (const auto& size : options_.sizes)
      if (size.comm_size == p) return cost_of(size);
    return cost_of({p, 1, 0, 0});
  });
}

double NearestClusterStrategy::search_budget() const {
  if (!options_.reserve) return options_.budget_node_seconds;
  if (!reserve_ || reserve_->first != total_observed())
    reserve_.emplace(total_observed(), options_.reserve(*this));
  return options_.budget_node_seconds - reserve_->second;
}

double NearestClusterStrategy::node_seconds_left() const {
  if (options_.budget_node_seconds <= 0) return std::numeric_limits<double>::infinity();
  double left = search_budget() - node_seconds();
  for (const auto& [p, configs] : suggested_) {
    const auto seen = observed_.find(p);
    for (const auto& c : configs)
      if (seen == observed_.end() || !seen->second.count(c)) left -= run_price(p, c);
  }
  return left;
}

int NearestClusterStrategy::total_observed() const {
  int n = 0;
  for (const auto& [p, count] : evaluations_) n += count;
  return n;
}

int NearestClusterStrategy::total_suggested() const {
  int n = 0;
  for (const auto& [p, set] : suggested_) n += static_cast<int>(set.size());
  return n;
}

double NearestClusterStrategy::node_seconds() const {
  // What the runs reported; a run that reported no seconds at its size's price.
  double total = 0;
  for (const auto& size : options_.sizes)
    if (auto it = evaluations_.find(size.comm_size); it != evaluations_.end()) {
      const auto timed = timed_.find(size.comm_size);
      const TimedRuns t = timed == timed_.end() ? TimedRuns{} : timed->second;
      const int untimed = it->second - t.runs;
      total += t.node_seconds;
      if (untimed > 0) total += untimed * run_price(size.comm_size, TuningConfig{});
    }
  return total;
}

std::optional<TuningConfig> NearestClusterStrategy::next_config(const ClusterSize& size) {
  const SearchSpace& s = space(size.comm_size);
  const auto& taken = suggested_[size.comm_size];
  auto fresh = [&](const TuningConfig& c) { return s.contains(c) && !taken.count(s.canonical(c)); };
  if (fresh(TuningConfig::default_decision())) return TuningConfig::default_decision();
  // What won at the other sizes, nearest first.
  std::vector<int> others;
  for (const auto& [p, configs] : observed_)
    if (p != size.comm_size) others.push_back(p);
  std::stable_sort(others.begin(), others.end(), [&](int a, int b) {
    return octaves(a, size.comm_size) < octaves(b, size.comm_size);
  });
  for (int p : others)
    for (std::int64_t m : options_.msg_sizes)
      if (auto pick = measured_pick(p, m); pick && fresh(pick->config))
        return s.canonical(pick->config);
  // The rest of the space in a seeded random order (stable across restore: the order depends
  // only on the seed and the size).
  std::vector<TuningConfig> points = s.points();
  std::mt19937_64 rng(options_.seed * 1000003ULL + static_cast<std::uint64_t>(size.comm_size));
  std::shuffle(points.begin(), points.end(), rng);
  for (const auto& c : points)
    if (fresh(c)) return c;
  return std::nullopt;
}

std::vector<ClusterSuggestion> NearestClusterStrategy::suggest(int max_count) {
  std::vector<ClusterSuggestion> out;
  double spent = node_seconds();
  // Under a node-second budget, the first batch is one run: before a run reported its seconds
  // the sizes' prices have no unit (docs/whole-cluster.md, "The search").
  if (options_.budget_node_seconds > 0 && total_suggested() == 0)
    max_count = std::min(max_count, 1);
  for (int k = 0; k < max_count; ++k) {
    if (total_suggested() >= budget_) break;
    if (options_.budget_node_seconds > 0 && spent >= search_budget()) break;
    // The size with the fewest runs so far, the cheaper one on a tie.
    const ClusterSize* pick = nullptr;
    for (const auto& size : options_.sizes) {
      const std::size_t n = suggested_[size.comm_size].size();
      if (n >= space(size.comm_size).size()) continue;
      if (!pick || n < suggested_[pick->comm_size].size() ||
          (n == suggested_[pick->comm_size].size() && cost_of(size) < cost_of(*pick)))
        pick = &size;
    }
    if (!pick) break;
    auto config = next_config(*pick);
    if (!config) break;
    suggested_[pick->comm_size].insert(*config);
    spent += run_price(pick->comm_size, *config);
    out.push_back({pick->comm_size, *config});
  }
  return out;
}

void NearestClusterStrategy::observe(int comm_size, const Evaluation& evaluation) {
  const SearchSpace& s = space(comm_size);
  const TuningConfig config =
      s.contains(evaluation.config) ? s.canonical(evaluation.config) : evaluation.config;
  suggested_[comm_size].insert(config);
  ++evaluations_[comm_size];
  if (evaluation.seconds > 0) {
    int nodes = 1;
    for (const auto& size : options_.sizes)
      if (size.comm_size == comm_size) nodes = std::max(1, size.nodes);
    timed_[comm_size].node_seconds += evaluation.seconds * nodes;
    ++timed_[comm_size].runs;
  }
  if (evaluation.failed) failed_[comm_size].insert(config);
  auto& rows = observed_[comm_size][config];
  for (std::size_t i = 0; i < evaluation.msg_sizes.size() && i < evaluation.latency_us.size(); ++i)
    if (evaluation.latency_us[i] > 0 && std::isfinite(evaluation.latency_us[i]))
      rows[evaluation.msg_sizes[i]].push_back(evaluation.latency_us[i]);
}

bool NearestClusterStrategy::done() const { return !stop_reason().empty(); }

std::string NearestClusterStrategy::stop_reason() const {
  if (total_observed() >= budget_) return "budget: " + std::to_string(budget_) + " runs";
  if (options_.budget_node_seconds > 0 && node_seconds() >= search_budget())
    return "budget: node-seconds";
  for (const auto& size : options_.sizes)
    if (evaluations_.count(size.comm_size) == 0 ||
        static_cast<std::size_t>(evaluations_.at(size.comm_size)) < space(size.comm_size).size())
      return "";
  return "every configuration of every size measured";
}

double NearestClusterStrategy::relative_noise(int comm_size) const {
  // Pooled spread of ln(latency) over the (config, message size) cells measured twice or more.
  double sum = 0;
  int dof = 0;
  if (auto it = observed_.find(comm_size); it != observed_.end())
    for (const auto& [config, rows] : it->second)
      for (const auto& [m, v] : rows) {
        if (v.size() < 2) continue;
        double mean = 0;
        for (double x : v) mean += std::log(x);
        mean /= double(v.size());
        for (double x : v) sum += (std::log(x) - mean) * (std::log(x) - mean);
        dof += static_cast<int>(v.size()) - 1;
      }
  const double sigma = dof > 0 ? std::sqrt(sum / dof) : 0;
  return std::max(sigma, noise_floor_);
}

std::optional<NearestClusterStrategy::SizePick> NearestClusterStrategy::measured_pick(
    int comm_size, std::int64_t msg_size) const {
  auto it = observed_.find(comm_size);
  if (it == observed_.end()) return std::nullopt;
  const auto failed = failed_.count(comm_size) ? failed_.at(comm_size) : std::set<TuningConfig>{};
  SizePick pick;
  pick.default_us = kNaN;
  std::size_t best_n = 0, default_n = 0;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [config, rows] : it->second) {
    auto r = rows.find(msg_size);
    if (r == rows.end() || r->second.empty()) continue;
    const double med = median(r->second);
    if (config.is_default()) {
      pick.default_us = med;
      default_n = r->second.size();
    }
    if (failed.count(config) && !config.is_default()) continue;
    if (med < best) {
      best = med;
      best_n = r->second.size();
      pick.config = config;
    }
  }
  if (!std::isfinite(best)) return std::nullopt;
  pick.best_us = best;
  if (pick.config.is_default() || !std::isfinite(pick.default_us)) {
    // Nothing known to beat the default: the default stays.
    pick.win_probability = 0;
    if (!pick.config.is_default()) {
      pick.config = TuningConfig::default_decision();
      pick.best_us = pick.default_us;
    }
    return pick;
  }
  const double sigma =
      relative_noise(comm_size) *
      std::sqrt(1.0 / double(best_n) + 1.0 / double(std::max<std::size_t>(default_n, 1)));
  pick.win_probability = normal_cdf(std::log(pick.default_us / best) / sigma);
  return pick;
}

std::vector<TuningConfig> NearestClusterStrategy::finalists(int comm_size, int per_size) const {
  std::vector<TuningConfig> out;
  auto it = observed_.find(comm_size);
  if (it == observed_.end()) return out;
  const auto failed = failed_.count(comm_size) ? failed_.at(comm_size) : std::set<TuningConfig>{};
  for (std::int64_t m : options_.msg_sizes) {
    std::vector<std::pair<double, TuningConfig>> ranked;
    for (const auto& [config, rows] : it->second) {
      if (failed.count(config)) continue;
      if (auto r = rows.find(m); r != rows.end() && !r->second.empty())
        ranked.emplace_back(median(r->second), config);
    }
    std::sort(ranked.begin(), ranked.end());
    for (int k = 0; k < per_size && k < static_cast<int>(ranked.size()); ++k)
      if (std::find(out.begin(), out.end(), ranked[k].second) == out.end())
        out.push_back(ranked[k].second);
  }
  return out;
}

std::vector<ClusterChoice> NearestClusterStrategy::recommend(const std::vector<int>& comm_sizes,
                                                             double min_confidence) const {
  std::vector<int> measured;
  for (const auto& [p, configs] : observed_)
    if (!configs.empty()) measured.push_back(p);
  std::vector<ClusterChoice> out;
  for (int p : comm_sizes) {
    for (std::int64_t m : options_.msg_sizes) {
      ClusterChoice choice;
      choice.comm_size = p;
      choice.msg_size = m;
      choice.default_us = kNaN;
      choice.latency_us = kNaN;
      if (observed_.count(p)) {
        choice.measured = true;
        if (auto pick = measured_pick(p, m)) {
          choice.config = pick->config;
          choice.latency_us = pick->best_us;
          choice.default_us = pick->default_us;
          choice.confidence = pick->config.is_default() ? 0 : 1;
        }
        out.push_back(choice);
        continue;
      }
      // The nearest measured sizes below and above.
      std::optional<int> lower, upper;
      for (int q : measured) {
        if (q < p) lower = q;
        if (q > p && !upper) upper = q;
      }
      std::optional<SizePick> lo = lower ? measured_pick(*lower, m) : std::nullopt;
      std::optional<SizePick> hi = upper ? measured_pick(*upper, m) : std::nullopt;
      TuningConfig config;
      double confidence = 0;
      if (lo && hi) {
        const double d_lo = octaves(p, *lower), d_hi = octaves(p, *upper);
        if (lo->config == hi->config) {
          config = lo->config;
          confidence = std::min(lo->win_probability, hi->win_probability);
        } else {
          const bool lower_nearer = d_lo <= d_hi;
          const SizePick& near = lower_nearer ? *lo : *hi;
          config = near.config;
          confidence = near.win_probability * (lower_nearer ? d_hi : d_lo) / (d_lo + d_hi);
        }
        // Estimates interpolated in log2 P when both neighbours measured them.
        const double w = d_lo / (d_lo + d_hi);
        if (std::isfinite(lo->default_us) && std::isfinite(hi->default_us))
          choice.default_us =
              std::exp((1 - w) * std::log(lo->default_us) + w * std::log(hi->default_us));
      } else if (lo || hi) {
        const SizePick& near = lo ? *lo : *hi;
        config = near.config;
        confidence = near.win_probability * std::pow(0.5, octaves(p, lo ? *lower : *upper));
        choice.default_us = near.default_us;
      }
      // A configuration the target size cannot run (e.g. a two-rank algorithm) is not a pick.
      const SearchSpace& s = space(p);
      if (!config.is_default() && !s.contains(config)) {
        config = TuningConfig::default_decision();
        confidence = 0;
      }
      if (!config.is_default()) config = s.canonical(config);
      choice.confidence = confidence;
      choice.config = confidence >= min_confidence && confidence > 0
                          ? config
                          : TuningConfig::default_decision();
      out.push_back(choice);
    }
  }
  return out;
}

nlohmann::json NearestClusterStrategy::state() const {
  nlohmann::json observations = nlohmann::json::array();
  for (const auto& [p, configs] : observed_)
    for (const auto& [config, rows] : configs) {
      nlohmann::json r = nlohmann::json::array();
      for (const auto& [m, v] : rows) r.push_back({{"msg_size", m}, {"latency_us", v}});
      observations.push_back({{"comm_size", p},
                              {"config", config},
                              {"failed", failed_.count(p) && failed_.at(p).count(config) > 0},
                              {"rows", r}});
    }
  nlohmann::json suggested = nlohmann::json::array();
  for (const auto& [p, set] : suggested_)
    for (const auto& c : set) suggested.push_back({{"comm_size", p}, {"config", c}});
  nlohmann::json evaluations = nlohmann::json::object();
  for (const auto& [p, n] : evaluations_) evaluations[std::to_string(p)] = n;
  nlohmann::json timed = nlohmann::json::object();
  for (const auto& [p, t] : timed_)
    timed[std::to_string(p)] = {{"runs", t.runs}, {"node_seconds", t.node_seconds}};
  return {{"strategy", "nearest"},
          {"timed_runs", timed},
          {"observed", observations},
          {"suggested", suggested},
          {"per_size_evaluations", evaluations},
          {"observations", {{"evaluations", total_observed()}}}};
}

void NearestClusterStrategy::restore(const nlohmann::json& state) {
  if (!state.is_object() || state.value("strategy", std::string()) != "nearest")
    throw std::invalid_argument("nearest: not a nearest state");
  reserve_.reset();
  observed_.clear();
  failed_.clear();
  suggested_.clear();
  evaluations_.clear();
  timed_.clear();
  for (const auto& o : state.at("observed")) {
    const int p = o.at("comm_size").get<int>();
    const TuningConfig config = o.at("config").get<TuningConfig>();
    auto& rows = observed_[p][config];
    for (const auto& r : o.at("rows"))
      rows[r.at("msg_size").get<std::int64_t>()] = r.at("latency_us").get<std::vector<double>>();
    if (o.value("failed", false)) failed_[p].insert(config);
  }
  for (const auto& s : state.at("suggested"))
    suggested_[s.at("comm_size").get<int>()].insert(s.at("config").get<TuningConfig>());
  for (const auto& [key, n] : state.at("per_size_evaluations").items())
    evaluations_[std::stoi(key)] = n.get<int>();
  // (states saved before 2026-11-27 have no timed runs: their runs count at the sizes' prices)
  const nlohmann::json timed = state.value("timed_runs", nlohmann::json::object());
  for (const auto& [key, t] : timed.items()) {
    timed_[std::stoi(key)] = {t.at("runs").get<int>(), t.at("node_seconds").get<double>()};
  }
}

}  // namespace colltune
