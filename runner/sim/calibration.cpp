#include "runner/sim/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

#include "core/stats.h"
#include "runner/sim/collective_schedules.h"

namespace colltune::sim {

namespace {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// Average ranks (ties share the mean rank).
std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = 0.5 * static_cast<double>(i + j);
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

Placement placement_of(const ClusterProfile& profile, int comm_size, int nodes) {
  if (nodes > 0) return profile.placement(comm_size, nodes, 0);
  return profile.default_placement(comm_size);
}

std::vector<ReplayDataset::Cell> selected_cells(const ReplayDataset& data,
                                                const CompareOptions& options) {
  std::vector<ReplayDataset::Cell> out;
  for (const auto& cell : data.cells()) {
    if (!sim_models(cell.collective)) continue;
    if (!options.collectives.empty() && !options.collectives.contains(cell.collective)) continue;
    if (cell.comm_size > options.max_comm_size || cell.comm_size < 2) continue;
    if (!options.include_default && cell.config.algorithm == 0) continue;
    out.push_back(cell);
  }
  return out;
}

}  // namespace

nlohmann::json ComparisonReport::to_json() const {
  return {{"cells", cells.size()},
          {"instances", instances.size()},
          {"median_abs_log2_ratio", median_abs_log2_ratio},
          {"geometric_mean_ratio", geometric_mean_ratio},
          {"mean_spearman", mean_spearman},
          {"same_best_fraction", same_best_fraction},
          {"median_regret", median_regret},
          {"p90_regret", p90_regret}};
}

ComparisonReport compare(const SimModel& model, const ReplayDataset& measured,
                         const CompareOptions& options) {
  ComparisonReport report;
  for (const auto& cell : selected_cells(measured, options)) {
    CellComparison c;
    c.collective = cell.collective;
    c.comm_size = cell.comm_size;
    c.nodes = cell.nodes;
    c.config = cell.config;
    c.msg_size = cell.msg_size;
    std::vector<double> values;
    for (const auto& v : *cell.values) values.push_back(v.avg_us);
    c.measured_us = median(values);
    try {
      c.simulated_us = model.latency_us(cell.collective,
                                        placement_of(model.profile(), cell.comm_size, cell.nodes),
                                        cell.config, cell.msg_size);
    } catch (const std::exception&) {
      c.simulated_us = std::numeric_limits<double>::quiet_NaN();
    }
    report.cells.push_back(c);
  }
  std::vector<double> abs_log2, log_ratio;
  std::map<std::tuple<int, int, int, std::int64_t>, std::vector<const CellComparison*>> groups;
  for (const auto& c : report.cells) {
    if (!(c.simulated_us > 0) || !(c.measured_us > 0)) continue;
    const double l = std::log(c.simulated_us / c.measured_us);
    log_ratio.push_back(l);
    abs_log2.push_back(std::abs(l) / std::log(2.0));
    groups[{static_cast<int>(c.collective), c.comm_size, c.nodes, c.msg_size}].push_back(&c);
  }
  report.median_abs_log2_ratio = median(abs_log2);
  report.geometric_mean_ratio =
      log_ratio.empty() ? std::numeric_limits<double>::quiet_NaN()
                        : std::exp(std::accumulate(log_ratio.begin(), log_ratio.end(), 0.0) /
                                   static_cast<double>(log_ratio.size()));
  std::vector<double> spearman, regret;
  int same = 0;
  for (const auto& [key, cells] : groups) {
    if (cells.size() < 2) continue;
    std::vector<double> sim, real;
    for (const auto* c : cells) {
      sim.push_back(c->simulated_us);
      real.push_back(c->measured_us);
    }
    InstanceAgreement a;
    a.collective = cells[0]->collective;
    a.comm_size = cells[0]->comm_size;
    a.nodes = cells[0]->nodes;
    a.msg_size = cells[0]->msg_size;
    a.configs = static_cast<int>(cells.size());
    a.spearman = pearson(ranks(sim), ranks(real));
    const auto sim_best = std::min_element(sim.begin(), sim.end()) - sim.begin();
    const double real_best = *std::min_element(real.begin(), real.end());
    a.same_best = real[sim_best] == real_best;
    a.regret = real[sim_best] / real_best - 1;
    report.instances.push_back(a);
    spearman.push_back(a.spearman);
    regret.push_back(a.regret);
    same += a.same_best;
  }
  if (!spearman.empty()) {
    report.mean_spearman = std::accumulate(spearman.begin(), spearman.end(), 0.0) /
                           static_cast<double>(spearman.size());
    report.same_best_fraction = static_cast<double>(same) / static_cast<double>(spearman.size());
    report.median_regret = median(regret);
    report.p90_regret = quantile(regret, 0.9);
  }
  return report;
}

std::vector<std::string> fittable_parameters(const ClusterProfile& profile) {
  std::vector<std::string> out;
  auto level = [&](const std::string& name, const LinkLevel& l) {
    for (std::size_t i = 0; i < l.pieces.size(); ++i)
      for (const char* field : {"latency_us", "overhead_us", "bandwidth_gbps"})
        out.push_back("/" + name + "/pieces/" + std::to_string(i) + "/" + field);
    out.push_back("/" + name + "/contention");
  };
  level("intra_node", profile.intra_node);
  if (profile.nodes > 1) level("inter_node", profile.inter_node);
  out.push_back("/reduce_ns_per_byte");
  out.push_back("/oversubscription_penalty");
  return out;
}

namespace {

bool is_fraction(const std::string& pointer) {
  return pointer.size() >= 11 && pointer.ends_with("/contention");
}

// Parameter <-> unconstrained coordinate: log for positive numbers, logit for fractions.
double to_coordinate(const std::string& p, double value) {
  if (is_fraction(p)) {
    const double v = std::clamp(value, 1e-4, 1 - 1e-4);
    return std::log(v / (1 - v));
  }
  return std::log(std::max(value, 1e-6));
}

double from_coordinate(const std::string& p, double x) {
  if (is_fraction(p)) return 1 / (1 + std::exp(-x));
  return std::exp(x);
}

}  // namespace

FitResult fit_profile(const ClusterProfile& start, const ReplayDataset& measured,
                      const FitOptions& options) {
  const std::vector<std::string> params =
      options.parameters.empty() ? fittable_parameters(start) : options.parameters;
  const nlohmann::json base = start.to_json();
  std::vector<double> x0;
  for (const auto& p : params) {
    const nlohmann::json::json_pointer ptr(p);
    if (!base.contains(ptr) || !base.at(ptr).is_number())
      throw std::invalid_argument("not a numeric profile parameter: " + p);
    x0.push_back(to_coordinate(p, base.at(ptr).get<double>()));
  }
  const auto cells = selected_cells(measured, options.compare);
  std::vector<double> medians;
  for (const auto& c : cells) {
    std::vector<double> v;
    for (const auto& r : *c.values) v.push_back(r.avg_us);
    medians.push_back(median(v));
  }
  if (cells.empty()) throw std::invalid_argument("no measurements the simulator can compare");

  auto profile_at = [&](const std::vector<double>& x) {
    nlohmann::json j = base;
    for (std::size_t i = 0; i < params.size(); ++i)
      j[nlohmann::json::json_pointer(params[i])] = from_coordinate(params[i], x[i]);
    return ClusterProfile::from_json(j);
  };
  int evaluations = 0;
  auto loss = [&](const std::vector<double>& x) {
    ++evaluations;
    ClusterProfile profile;
    try {
      profile = profile_at(x);
    } catch (const std::invalid_argument&) {
      return std::numeric_limits<double>::infinity();
    }
    const SimModel model(profile);
    double sum = 0;
    int n = 0;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      double sim;
      try {
        sim = model.latency_us(cells[i].collective,
                               placement_of(profile, cells[i].comm_size, cells[i].nodes),
                               cells[i].config, cells[i].msg_size);
      } catch (const std::exception&) {
        continue;
      }
      if (!(sim > 0) || !(medians[i] > 0)) continue;
      const double l = std::log(sim / medians[i]);
      sum += l * l;
      ++n;
    }
    return n ? sum / n : std::numeric_limits<double>::infinity();
  };

  // Nelder-Mead (standard coefficients), initial simplex steps of 0.5 in every coordinate.
  const std::size_t dim = x0.size();
  std::vector<std::vector<double>> simplex(dim + 1, x0);
  for (std::size_t i = 0; i < dim; ++i) simplex[i + 1][i] += 0.5;
  std::vector<double> f(dim + 1);
  for (std::size_t i = 0; i <= dim; ++i) f[i] = loss(simplex[i]);
  const double initial = f[0];
  while (evaluations < options.max_evaluations) {
    std::vector<std::size_t> order(dim + 1);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return f[a] < f[b]; });
    std::vector<std::vector<double>> s2;
    std::vector<double> f2;
    for (auto i : order) {
      s2.push_back(simplex[i]);
      f2.push_back(f[i]);
    }
    simplex = std::move(s2);
    f = std::move(f2);
    if (f[dim] - f[0] < 1e-9) break;
    std::vector<double> centroid(dim, 0);
    for (std::size_t i = 0; i < dim; ++i)
      for (std::size_t k = 0; k < dim; ++k) centroid[k] += simplex[i][k] / static_cast<double>(dim);
    auto along = [&](double t) {
      std::vector<double> x(dim);
      for (std::size_t k = 0; k < dim; ++k)
        x[k] = centroid[k] + t * (simplex[dim][k] - centroid[k]);
      return x;
    };
    const auto xr = along(-1.0);
    const double fr = loss(xr);
    if (fr < f[0]) {
      const auto xe = along(-2.0);
      const double fe = loss(xe);
      if (fe < fr) {
        simplex[dim] = xe;
        f[dim] = fe;
      } else {
        simplex[dim] = xr;
        f[dim] = fr;
      }
    } else if (fr < f[dim - 1]) {
      simplex[dim] = xr;
      f[dim] = fr;
    } else {
      const auto xc = fr < f[dim] ? along(-0.5) : along(0.5);
      const double fc = loss(xc);
      if (fc < std::min(fr, f[dim])) {
        simplex[dim] = xc;
        f[dim] = fc;
      } else {
        for (std::size_t i = 1; i <= dim; ++i) {
          for (std::size_t k = 0; k < dim; ++k)
            simplex[i][k] = simplex[0][k] + 0.5 * (simplex[i][k] - simplex[0][k]);
          f[i] = loss(simplex[i]);
        }
      }
    }
  }
  const auto best = std::min_element(f.begin(), f.end()) - f.begin();
  FitResult result;
  result.profile = profile_at(simplex[best]);
  result.initial_loss = initial;
  result.final_loss = f[best];
  result.evaluations = evaluations;
  for (std::size_t i = 0; i < dim; ++i)
    result.values[params[i]] = from_coordinate(params[i], simplex[best][i]);
  return result;
}

}  // namespace colltune::sim
