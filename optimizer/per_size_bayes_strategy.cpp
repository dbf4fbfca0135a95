#include "optimizer/per_size_bayes_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "core/rng.h"
#include "core/seed.h"
#include "optimizer/dense_gp.h"
#include "optimizer/expected_improvement.h"
#include "optimizer/hyperparameter_fit.h"
#include "optimizer/latin_hypercube.h"

namespace colltune {
namespace {

constexpr int kMaxPerSize = 150;  // thesis cap
constexpr int kWindow = 15;       // thesis: < 1 % improvement over the last 15
constexpr double kMinImprovement = 0.01;

Eigen::MatrixXd rbf(const std::vector<Eigen::Vector3d>& a, const std::vector<Eigen::Vector3d>& b,
                    double signal, double length, Eigen::MatrixXd* d_length) {
  Eigen::MatrixXd k(a.size(), b.size());
  if (d_length) d_length->resize(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) {
      double r2 = (a[i] - b[j]).squaredNorm() / (length * length);
      k(i, j) = signal * std::exp(-0.5 * r2);
      if (d_length) (*d_length)(i, j) = k(i, j) * r2;  // d/dlog(length)
    }
  return k;
}

// MAP-free maximum likelihood of (log signal, log length, log noise) for the thesis GP.
Eigen::Vector3d fit_rbf(const std::vector<Eigen::Vector3d>& x, const Eigen::VectorXd& y,
                        const std::vector<Eigen::Vector3d>& starts) {
  Eigen::Vector3d lb(-4, std::log(0.05), std::log(1e-6)), ub(3, std::log(10.0), 0.0);
  auto objective = guarded([&](const Eigen::VectorXd& t, Eigen::VectorXd& grad) {
    grad = Eigen::VectorXd::Zero(3);
    Eigen::MatrixXd d_len;
    Eigen::MatrixXd k = rbf(x, x, std::exp(t[0]), std::exp(t[1]), &d_len);
    DenseGp gp(k, std::exp(t[2]), y);
    const int n = static_cast<int>(x.size());
    grad[0] = -gp.log_marginal_likelihood_derivative(k);
    grad[1] = -gp.log_marginal_likelihood_derivative(d_len);
    grad[2] =
        -gp.log_marginal_likelihood_derivative(std::exp(t[2]) * Eigen::MatrixXd::Identity(n, n));
    return -gp.log_marginal_likelihood();
  });
  LbfgsbSettings settings;
  settings.max_iterations = 40;
  settings.epsilon = 1e-4;
  std::vector<Eigen::VectorXd> dynamic_starts(starts.begin(), starts.end());
  return best_of_starts(objective, starts.front(), dynamic_starts, lb, ub, settings);
}

}  // namespace

PerSizeBayesStrategy::PerSizeBayesStrategy(const SearchSpace& space, const StrategyOptions& options)
    : space_(&space), options_(options), encoder_(space) {
  if (options_.msg_sizes.empty())
    throw std::invalid_argument("bo-per-size needs the message sizes to tune");
  if (options_.stop_rule.empty()) options_.stop_rule = "thesis";
  if (options_.stop_rule != "thesis" && options_.stop_rule != "budget")
    throw std::invalid_argument("bo-per-size supports the thesis and budget stop rules");
  if (!options_.settings.empty()) throw std::invalid_argument("bo-per-size takes no settings");
  max_evaluations_ = options_.budget;
  for (const auto& p : space.points()) max_algorithm_ = std::max(max_algorithm_, p.algorithm);
  auto sizes = options_.msg_sizes;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const int n_init = default_initial_design_size(space);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    SizeSearch s;
    s.msg_size = sizes[i];
    Rng rng(mix_seed(options_.seed, 1000 + i));
    s.design = latin_hypercube_design(space, n_init, rng);
    searches_.push_back(std::move(s));
  }
}

Eigen::Vector3d PerSizeBayesStrategy::coordinates(const TuningConfig& config) const {
  EncodedConfig e = encoder_.encode(config);
  return {static_cast<double>(config.algorithm) / max_algorithm_, e.seg, e.fan};
}

bool PerSizeBayesStrategy::budget_exhausted() const {
  if (max_evaluations_ > 0 && static_cast<int>(evaluations_.size()) >= max_evaluations_)
    return true;
  if (options_.budget_seconds > 0) {
    double seconds = 0;
    for (const auto& e : evaluations_)
      seconds += options_.cost.run_seconds(e.msg_sizes, e.latency_us);
    if (seconds >= options_.budget_seconds) return true;
  }
  return false;
}

bool PerSizeBayesStrategy::rule_met(const SizeSearch& s) const {
  const std::size_t t = s.configs.size();
  if (t >= static_cast<std::size_t>(space_->size())) return true;
  if (options_.stop_rule != "thesis") return false;
  if (t >= static_cast<std::size_t>(kMaxPerSize)) return true;
  if (t < s.design.size() + kWindow) return false;
  auto best_until = [&](std::size_t count) {
    double b = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < count; ++i)
      if (std::isfinite(s.log_latency[i])) b = std::min(b, s.log_latency[i]);
    return std::exp(b);
  };
  double before = best_until(t - kWindow), now = best_until(t);
  return (before - now) / before < kMinImprovement;
}

bool PerSizeBayesStrategy::done() const {
  if (budget_exhausted()) return true;
  for (const auto& s : searches_)
    if (!s.stopped && !rule_met(s)) return false;
  return true;
}

TuningConfig PerSizeBayesStrategy::next_for(SizeSearch& s, std::uint64_t salt) {
  std::set<TuningConfig> seen(s.configs.begin(), s.configs.end());
  for (const auto& [config, sizes] : wanted_)
    if (std::find(sizes.begin(), sizes.end(), s.msg_size) != sizes.end()) seen.insert(config);
  while (s.design_next < s.design.size()) {
    const TuningConfig& c = s.design[s.design_next++];
    if (!seen.count(c)) return c;
  }
  std::vector<TuningConfig> candidates;
  for (const auto& p : space_->points())
    if (!seen.count(p)) candidates.push_back(p);
  if (candidates.empty()) return TuningConfig{-1, 0, 0};

  std::vector<Eigen::Vector3d> x;
  std::vector<double> ys;
  for (std::size_t i = 0; i < s.configs.size(); ++i)
    if (std::isfinite(s.log_latency[i])) {
      x.push_back(coordinates(s.configs[i]));
      ys.push_back(s.log_latency[i]);
    }
  if (x.size() < 2) {
    Rng rng(mix_seed(options_.seed, salt));
    return candidates[rng.below(candidates.size())];
  }
  Eigen::VectorXd y = Eigen::Map<Eigen::VectorXd>(ys.data(), static_cast<Eigen::Index>(ys.size()));
  double mean = y.mean();
  double sd = std::sqrt((y.array() - mean).square().mean());
  if (sd <= 1e-9) sd = 1.0;
  Eigen::VectorXd z = (y.array() - mean) / sd;

  std::vector<Eigen::Vector3d> starts{Eigen::Vector3d(0.0, std::log(0.3), std::log(1e-2))};
  if (s.theta) starts.insert(starts.begin(), *s.theta);
  s.theta = fit_rbf(x, z, starts);
  const double signal = std::exp((*s.theta)[0]), length = std::exp((*s.theta)[1]);
  DenseGp gp(rbf(x, x, signal, length, nullptr), std::exp((*s.theta)[2]), z);

  std::vector<Eigen::Vector3d> cx;
  for (const auto& c : candidates) cx.push_back(coordinates(c));
  Eigen::VectorXd mu, var;
  gp.predict(rbf(x, cx, signal, length, nullptr), Eigen::VectorXd::Constant(cx.size(), signal), &mu,
             &var);
  const double incumbent = z.minCoeff();  // thesis: best value observed so far
  int best = 0;
  double best_value = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < mu.size(); ++i) {
    double v = log_expected_improvement(mu[i], std::sqrt(var[i]), incumbent);
    if (v > best_value) best_value = v, best = i;
  }
  return candidates[best];
}

std::vector<TuningConfig> PerSizeBayesStrategy::suggest(int max_count) {
  ++suggest_calls_;
  std::vector<TuningConfig> out;
  if (max_count <= 0 || done()) return out;
  int want = max_count;
  if (max_evaluations_ > 0) {
    int in_flight = static_cast<int>(wanted_.size());
    want = std::min(want, max_evaluations_ - static_cast<int>(evaluations_.size()) - in_flight);
  }
  const std::size_t count = searches_.size();
  for (std::size_t k = 0; k < count && static_cast<int>(out.size()) < want; ++k) {
    SizeSearch& s = searches_[(next_size_ + k) % count];
    if (s.stopped) continue;
    if (rule_met(s)) {
      if (s.pending == 0) s.stopped = true;
      continue;
    }
    bool in_design = s.design_next < s.design.size();
    if (!in_design && s.pending > 0) continue;  // sequential after the initial design
    TuningConfig c = next_for(s, suggest_calls_ * 1000 + k);
    if (c.algorithm < 0) {
      if (s.pending == 0) s.stopped = true;
      continue;
    }
    ++s.pending;
    auto& sizes = wanted_[c];
    if (sizes.empty() && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    sizes.push_back(s.msg_size);
  }
  next_size_ = (next_size_ + 1) % std::max<std::size_t>(1, count);
  return out;
}

std::vector<std::int64_t> PerSizeBayesStrategy::msg_sizes_wanted(const TuningConfig& config) const {
  auto it = wanted_.find(space_->canonical(config));
  if (it == wanted_.end()) return {};
  auto sizes = it->second;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

void PerSizeBayesStrategy::observe(const Evaluation& evaluation) {
  Evaluation e = evaluation;
  e.config = space_->canonical(e.config);
  evaluations_.push_back(e);
  observations_.add(e);
  auto it = wanted_.find(e.config);
  if (it == wanted_.end()) return;  // a re-measurement, not a search step
  for (std::int64_t size : it->second)
    for (auto& s : searches_) {
      if (s.msg_size != size) continue;
      double value = std::nan("");
      for (std::size_t i = 0; i < e.msg_sizes.size() && i < e.latency_us.size(); ++i)
        if (e.msg_sizes[i] == size && std::isfinite(e.latency_us[i]) && e.latency_us[i] > 0 &&
            !e.failed)
          value = std::log(e.latency_us[i]);
      s.configs.push_back(e.config);
      s.log_latency.push_back(value);
      s.pending = std::max(0, s.pending - 1);
    }
  wanted_.erase(it);
}

std::vector<TuningConfig> PerSizeBayesStrategy::finalists(int per_size) const {
  std::set<TuningConfig> picked;
  for (const auto& s : searches_) {
    std::set<TuningConfig> own(s.configs.begin(), s.configs.end());
    std::vector<std::pair<double, TuningConfig>> scored;
    for (const auto& c : own) {
      double m = observations_.median(c, s.msg_size);
      if (std::isfinite(m)) scored.emplace_back(m, c);
    }
    std::sort(scored.begin(), scored.end());
    for (int k = 0; k < per_size && k < static_cast<int>(scored.size()); ++k)
      picked.insert(scored[k].second);
  }
  return {picked.begin(), picked.end()};
}

std::vector<Choice> PerSizeBayesStrategy::recommend() const {
  std::vector<Choice> out;
  for (const auto& s : searches_) {
    std::set<TuningConfig> own(s.configs.begin(), s.configs.end());
    double best = std::numeric_limits<double>::infinity();
    TuningConfig pick;
    bool any = false;
    for (const auto& c : own) {
      double m = observations_.median(c, s.msg_size);
      if (std::isfinite(m) && m < best) best = m, pick = c, any = true;
    }
    if (!any) continue;
    Choice choice;
    choice.msg_size = s.msg_size;
    choice.config = pick;
    choice.latency_us = best;
    choice.default_us = observations_.median(TuningConfig{}, s.msg_size);
    out.push_back(choice);
  }
  return out;
}

nlohmann::json PerSizeBayesStrategy::state() const {
  nlohmann::json searches = nlohmann::json::array();
  for (const auto& s : searches_) {
    nlohmann::json design = nlohmann::json::array(), configs = nlohmann::json::array();
    for (const auto& c : s.design) design.push_back(c);
    for (const auto& c : s.configs) configs.push_back(c);
    nlohmann::json theta = nullptr;
    if (s.theta) theta = std::vector<double>{(*s.theta)[0], (*s.theta)[1], (*s.theta)[2]};
    searches.push_back({{"msg_size", s.msg_size},
                        {"design", design},
                        {"design_next", s.design_next},
                        {"configs", configs},
                        {"log_latency", s.log_latency},
                        {"pending", s.pending},
                        {"stopped", s.stopped},
                        {"theta", theta}});
  }
  nlohmann::json wanted = nlohmann::json::array();
  for (const auto& [c, sizes] : wanted_) wanted.push_back({{"config", c}, {"sizes", sizes}});
  nlohmann::json evals = nlohmann::json::array();
  for (const auto& e : evaluations_) evals.push_back(e);
  return {{"strategy", name()},
          {"seed", options_.seed},
          {"searches", searches},
          {"wanted", wanted},
          {"next_size", next_size_},
          {"suggest_calls", suggest_calls_},
          {"evaluations", evals},
          // Derived from "evaluations"; kept for readers of the common state layout.
          {"observations", observations_.to_json()}};
}

void PerSizeBayesStrategy::restore(const nlohmann::json& state) {
  check_state_is_for(state, name(), options_.seed);
  searches_.clear();
  for (const auto& j : state.at("searches")) {
    SizeSearch s;
    s.msg_size = j.at("msg_size").get<std::int64_t>();
    for (const auto& c : j.at("design")) s.design.push_back(c.get<TuningConfig>());
    s.design_next = j.at("design_next").get<std::size_t>();
    for (const auto& c : j.at("configs")) s.configs.push_back(c.get<TuningConfig>());
    for (const auto& x : j.at("log_latency"))
      s.log_latency.push_back(x.is_number() ? x.get<double>() : std::nan(""));
    s.pending = j.at("pending").get<int>();
    s.stopped = j.at("stopped").get<bool>();
    if (!j.at("theta").is_null()) {
      auto t = j.at("theta").get<std::vector<double>>();
      s.theta = Eigen::Vector3d(t.at(0), t.at(1), t.at(2));
    }
    searches_.push_back(std::move(s));
  }
  wanted_.clear();
  for (const auto& j : state.at("wanted"))
    wanted_[j.at("config").get<TuningConfig>()] = j.at("sizes").get<std::vector<std::int64_t>>();
  next_size_ = state.at("next_size").get<std::size_t>();
  suggest_calls_ = state.at("suggest_calls").get<std::uint64_t>();
  evaluations_.clear();
  observations_ = Observations();
  for (const auto& j : state.at("evaluations")) {
    const auto e = j.get<Evaluation>();
    evaluations_.push_back(e);
    observations_.add(e);
  }
}

}  // namespace colltune
