#include "optimizer/observations.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/stats.h"

namespace colltune {
void Observations::add(const Evaluation& e) {
  ++evaluation_count_;
  evaluated_.insert(e.config);
  if (e.failed) failed_.insert(e.config);
  auto& per_size = latencies_[e.config];
  for (std::size_t i = 0; i < e.msg_sizes.size() && i < e.latency_us.size(); ++i)
    if (std::isfinite(e.latency_us[i])) per_size[e.msg_sizes[i]].push_back(e.latency_us[i]);
}

double Observations::median(const TuningConfig& config, std::int64_t msg_size) const {
  auto it = latencies_.find(config);
  if (it == latencies_.end()) return std::numeric_limits<double>::quiet_NaN();
  auto s = it->second.find(msg_size);
  if (s == it->second.end()) return std::numeric_limits<double>::quiet_NaN();
  return colltune::median(s->second);
}

std::size_t Observations::count(const TuningConfig& config, std::int64_t msg_size) const {
  auto it = latencies_.find(config);
  if (it == latencies_.end()) return 0;
  auto s = it->second.find(msg_size);
  return s == it->second.end() ? 0 : s->second.size();
}

std::vector<TuningConfig> Observations::ranked(std::int64_t msg_size) const {
  std::vector<std::pair<double, TuningConfig>> scored;
  for (const auto& [config, per_size] : latencies_) {
    double m = median(config, msg_size);
    if (std::isfinite(m)) scored.emplace_back(m, config);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<TuningConfig> out;
  for (auto& s : scored) out.push_back(s.second);
  return out;
}

std::vector<Choice> Observations::best_per_size(const std::vector<std::int64_t>& msg_sizes,
                                                double tie_tolerance) const {
  std::vector<Choice> out;
  for (std::int64_t size : msg_sizes) {
    auto order = ranked(size);
    if (order.empty()) continue;
    double best = median(order.front(), size);
    // Among configurations tied with the best, prefer the default, then the simplest.
    TuningConfig pick = order.front();
    for (const auto& c : order) {
      double m = median(c, size);
      if (m > best * (1.0 + tie_tolerance)) break;
      auto simpler = [](const TuningConfig& a, const TuningConfig& b) {
        if (a.is_default() != b.is_default()) return a.is_default();
        return a < b;
      };
      if (simpler(c, pick)) pick = c;
    }
    Choice choice;
    choice.msg_size = size;
    choice.config = pick;
    choice.latency_us = median(pick, size);
    choice.default_us = median(TuningConfig::default_decision(), size);
    out.push_back(choice);
  }
  return out;
}

nlohmann::json Observations::to_json() const {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& [config, per_size] : latencies_) {
    nlohmann::json sizes = nlohmann::json::object();
    for (const auto& [size, values] : per_size) sizes[std::to_string(size)] = values;
    runs.push_back({{"config", config}, {"sizes", sizes}, {"failed", failed_.count(config) > 0}});
  }
  nlohmann::json evaluated = nlohmann::json::array();
  for (const auto& c : evaluated_) evaluated.push_back(c);
  return {{"latencies", runs}, {"evaluated", evaluated}, {"evaluations", evaluation_count_}};
}

Observations Observations::from_json(const nlohmann::json& j) {
  Observations o;
  for (const auto& run : j.at("latencies")) {
    TuningConfig config = run.at("config").get<TuningConfig>();
    auto& per_size = o.latencies_[config];
    for (const auto& [size, values] : run.at("sizes").items())
      per_size[std::stoll(size)] = values.get<std::vector<double>>();
    if (run.value("failed", false)) o.failed_.insert(config);
  }
  for (const auto& c : j.at("evaluated")) o.evaluated_.insert(c.get<TuningConfig>());
  o.evaluation_count_ = j.at("evaluations").get<std::size_t>();
  return o;
}

}  // namespace colltune
