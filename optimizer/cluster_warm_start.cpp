#include "optimizer/cluster_warm_start.h"

#include <algorithm>
#include <cmath>

#include "core/stats.h"

namespace colltune {
namespace {

// A measured evaluation with its comm size, as the warm start keeps it in its state.
nlohmann::json evaluation_json(int comm_size, const Evaluation& e) {
  nlohmann::json j = e;
  j["comm_size"] = comm_size;
  return j;
}

std::pair<int, Evaluation> evaluation_from_json(const nlohmann::json& j) {
  return {j.at("comm_size").get<int>(), j.get<Evaluation>()};
}

// Mean log latency per message size of one configuration's evaluations.
using LogCells = std::map<std::int64_t, std::vector<double>>;
void add_cells(LogCells& cells, const Evaluation& e) {
  if (e.failed) return;
  for (std::size_t i = 0; i < e.msg_sizes.size() && i < e.latency_us.size(); ++i)
    if (std::isfinite(e.latency_us[i]) && e.latency_us[i] > 0)
      cells[e.msg_sizes[i]].push_back(std::log(e.latency_us[i]));
}

}  // namespace

std::size_t ClusterWarmStart::prior_runs() const {
  std::size_t n = 0;
  for (const auto& [p, runs] : prior) n += runs.size();
  return n;
}

WarmStartedClusterStrategy::WarmStartedClusterStrategy(std::unique_ptr<ClusterStrategy> inner,
                                                       ClusterWarmStart warm, int budget)
    : inner_(std::move(inner)), warm_(std::move(warm)), budget_(budget) {
  for (const auto& [p, configs] : warm_.points) {
    std::vector<TuningConfig> seen;
    for (const auto& c : configs)
      if (std::find(seen.begin(), seen.end(), c) == seen.end()) {
        seen.push_back(c);
        points_.push_back({p, c});
      }
  }
}

std::vector<ClusterSuggestion> WarmStartedClusterStrategy::suggest(int max_count) {
  std::vector<ClusterSuggestion> out;
  int room = max_count;
  if (budget_ > 0)
    room = std::min(room, budget_ - new_evaluations_ - static_cast<int>(pending_.size()));
  if (room <= 0) return out;
  if (next_point_ < points_.size() && !closed_) {
    // Under a node-second budget: the first point alone, then those the rest pays for, in
    // order (ascending comm size); the points after the first that does not fit are left out
    // once nothing is pending (the prices then follow every point that ran).
    const bool budgeted = std::isfinite(inner_->node_seconds_left());
    const bool first = new_evaluations_ == 0 && pending_.empty();
    if (budgeted && first) room = std::min(room, 1);
    double left = node_seconds_left();
    while (static_cast<int>(out.size()) < room && next_point_ < points_.size()) {
      const ClusterSuggestion& next = points_[next_point_];
      if (budgeted) {
        const double price = inner_->run_price(next.comm_size, next.config);
        if (first ? left <= 0 : price > left) break;
        left -= price;
      }
      out.push_back(next);
      ++next_point_;
      pending_.insert({next.comm_size, next.config});
    }
    if (!out.empty() || !pending_.empty()) return out;
    closed_ = true;  // nothing fits and nothing is pending: the budget ends the re-measuring
  }
  if (!fed_) {
    if (!pending_.empty()) return out;  // the shift needs the re-measured points
    feed_prior();
  }
  out = inner_->suggest(room);
  for (const auto& s : out) pending_.insert({s.comm_size, s.config});
  return out;
}

void WarmStartedClusterStrategy::observe(int comm_size, const Evaluation& evaluation) {
  inner_->observe(comm_size, evaluation);
  ++new_evaluations_;
  if (auto it = pending_.find({comm_size, evaluation.config}); it != pending_.end())
    pending_.erase(it);
  if (!fed_) measured_.push_back({comm_size, evaluation});
}

void WarmStartedClusterStrategy::feed_prior() {
  fed_ = true;
  // The shift per (comm size, message size): new minus old mean log latency, averaged over the
  // configurations measured in both.
  std::map<int, std::map<TuningConfig, LogCells>> now, before;
  for (const auto& [p, e] : measured_) add_cells(now[p][e.config], e);
  for (const auto& [p, runs] : warm_.prior)
    for (const auto& e : runs) add_cells(before[p][e.config], e);
  std::map<int, std::map<std::int64_t, double>> shift;
  std::vector<double> all;
  for (const auto& [p, configs] : before) {
    std::map<std::int64_t, std::vector<double>> diffs;
    for (const auto& [config, cells] : configs) {
      auto n = now[p].find(config);
      if (n == now[p].end()) continue;
      for (const auto& [size, logs] : cells)
        if (auto m = n->second.find(size); m != n->second.end())
          diffs[size].push_back(mean(m->second) - mean(logs));
    }
    std::vector<double> of_size;
    for (const auto& [size, d] : diffs) {
      shift[p][size] = mean(d);
      of_size.push_back(shift[p][size]);
      all.push_back(shift[p][size]);
    }
    if (!of_size.empty()) shift_[p] = mean(of_size);
  }
  const double overall = all.empty() ? 0.0 : mean(all);
  for (const auto& [p, runs] : warm_.prior) {
    std::set<TuningConfig> remeasured;
    for (const auto& [q, e] : measured_)
      if (q == p) remeasured.insert(e.config);
    const double fallback = shift_.count(p) ? shift_[p] : overall;
    if (!shift_.count(p)) shift_[p] = fallback;
    for (Evaluation e : runs) {
      if (remeasured.count(e.config)) continue;
      for (std::size_t i = 0; i < e.msg_sizes.size() && i < e.latency_us.size(); ++i) {
        auto s = shift[p].find(e.msg_sizes[i]);
        e.latency_us[i] *= std::exp(s != shift[p].end() ? s->second : fallback);
      }
      inner_->observe(p, e);
      ++reused_[p];
    }
  }
  measured_.clear();
}

double WarmStartedClusterStrategy::node_seconds_left() const {
  double left = inner_->node_seconds_left();
  if (!fed_)  // the pending runs are re-measured points the inner strategy has not priced
    for (const auto& [p, c] : pending_) left -= inner_->run_price(p, c);
  return left;
}

bool WarmStartedClusterStrategy::done() const {
  if (budget_ > 0 && new_evaluations_ >= budget_ && pending_.empty()) return true;
  return fed_ && inner_->done();
}

std::string WarmStartedClusterStrategy::stop_reason() const {
  if (budget_ > 0 && new_evaluations_ >= budget_ && !inner_->done())
    return "budget: " + std::to_string(budget_) + " runs";
  return inner_->stop_reason();
}

int WarmStartedClusterStrategy::max_evaluations() const {
  if (budget_ > 0) return budget_;
  const int inner = inner_->max_evaluations();
  return inner > 0 ? std::max(0, inner - static_cast<int>(warm_.prior_runs())) : 0;
}

int WarmStartedClusterStrategy::reused_runs(int comm_size) const {
  const auto it = reused_.find(comm_size);
  return it == reused_.end() ? 0 : it->second;
}

nlohmann::json WarmStartedClusterStrategy::summary() const {
  std::map<int, std::vector<TuningConfig>> sent;
  for (std::size_t i = 0; i < next_point_; ++i)
    sent[points_[i].comm_size].push_back(points_[i].config);
  nlohmann::json remeasured = nlohmann::json::array();
  for (const auto& [p, configs] : sent)
    remeasured.push_back({{"comm_size", p}, {"configs", configs}});
  nlohmann::json reused = nlohmann::json::array();
  int total = 0;
  for (const auto& [p, n] : reused_) {
    reused.push_back({{"comm_size", p}, {"runs", n}});
    total += n;
  }
  nlohmann::json shift = nlohmann::json::array();
  for (const auto& [p, s] : shift_) shift.push_back({{"comm_size", p}, {"mean_log_shift", s}});
  return {{"remeasured", remeasured},
          {"not_remeasured", closed_ ? points_.size() - next_point_ : 0},
          {"reused_runs", total},
          {"reused", reused},
          {"shift", shift}};
}

nlohmann::json WarmStartedClusterStrategy::state() const {
  nlohmann::json pending = nlohmann::json::array();
  for (const auto& [p, c] : pending_) pending.push_back({{"comm_size", p}, {"config", c}});
  nlohmann::json measured = nlohmann::json::array();
  for (const auto& [p, e] : measured_) measured.push_back(evaluation_json(p, e));
  nlohmann::json reused = nlohmann::json::array();
  for (const auto& [p, n] : reused_) reused.push_back({p, n});
  nlohmann::json shift = nlohmann::json::array();
  for (const auto& [p, s] : shift_) shift.push_back({p, s});
  return {{"strategy", inner_->name()},
          {"warm_start",
           {{"next_point", next_point_},
            {"closed", closed_},
            {"pending", pending},
            {"measured", measured},
            {"new_evaluations", new_evaluations_},
            {"fed", fed_},
            {"reused", reused},
            {"shift", shift}}},
          {"inner", inner_->state()}};
}

void WarmStartedClusterStrategy::restore(const nlohmann::json& state) {
  inner_->restore(state.at("inner"));
  const auto& w = state.at("warm_start");
  next_point_ = std::min(w.at("next_point").get<std::size_t>(), points_.size());
  closed_ = w.value("closed", false);  // absent from states saved before budgets closed it
  pending_.clear();
  for (const auto& p : w.at("pending"))
    pending_.insert({p.at("comm_size").get<int>(), p.at("config").get<TuningConfig>()});
  measured_.clear();
  for (const auto& m : w.at("measured")) measured_.push_back(evaluation_from_json(m));
  new_evaluations_ = w.at("new_evaluations").get<int>();
  fed_ = w.at("fed").get<bool>();
  reused_.clear();
  for (const auto& r : w.at("reused")) reused_[r.at(0).get<int>()] = r.at(1).get<int>();
  shift_.clear();
  for (const auto& s : w.at("shift")) shift_[s.at(0).get<int>()] = s.at(1).get<double>();
}

}  // namespace colltune
