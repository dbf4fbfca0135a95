#include "optimizer/bayes_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "core/rng.h"
#include "core/seed.h"
#include "core/stats.h"
#include "optimizer/expected_improvement.h"
#include "optimizer/kronecker_gp.h"
#include "optimizer/latin_hypercube.h"

namespace colltune {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kScaleFloor = 0.02;  // log units: sizes where every config is ~equal
constexpr double kFailurePenalty = 0.6931471805599453;  // failed runs count as 2x the worst
constexpr int kMinModelRows = 3;
constexpr int kFitRows = 40;
constexpr double kWarmBudgetShare = 0.4;  // of the cold budget, under a warm start with runs

}  // namespace

// ---------------------------------------------------------------------------------------------
// Settings

BayesSettings BayesSettings::from_json(const nlohmann::json& j) {
  BayesSettings s;
  if (j.is_null()) return s;
  if (!j.is_object()) throw std::invalid_argument("bo settings must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key == "initial_points")
      s.initial_points = value.get<int>();
    else if (key == "repeat_default")
      s.repeat_default = value.get<bool>();
    else if (key == "ei_noise_fraction")
      s.ei_noise_fraction = value.get<double>();
    else if (key == "ei_floor")
      s.ei_floor = value.get<double>();
    else if (key == "refit_growth")
      s.refit_growth = value.get<double>();
    else if (key == "final_score")
      s.final_score = value.get<std::string>();
    else if (key == "tie_z")
      s.tie_z = value.get<double>();
    else if (key == "finalist_z")
      s.finalist_z = value.get<double>();
    else if (key == "finalist_cover")
      s.finalist_cover = value.get<bool>();
    else if (key == "small_space")
      s.small_space = value.get<int>();
    else if (key == "budget_fraction")
      s.budget_fraction = value.get<double>();
    else if (key == "design_fanouts")
      s.design_fanouts = value.get<bool>();
    else if (key == "pool_default_alias")
      s.pool_default_alias = value.get<bool>();
    else
      throw std::invalid_argument("unknown bo setting '" + key + "'");
  }
  if (s.final_score != "hybrid" && s.final_score != "median" && s.final_score != "posterior")
    throw std::invalid_argument("bo final_score must be hybrid, median or posterior");
  if (s.refit_growth < 1.0) throw std::invalid_argument("bo refit_growth must be >= 1");
  if (s.small_space < 0) throw std::invalid_argument("bo small_space must be >= 0");
  if (!(s.budget_fraction >= 0 && s.budget_fraction <= 1))
    throw std::invalid_argument("bo budget_fraction must be in [0, 1]");
  return s;
}

nlohmann::json BayesSettings::to_json() const {
  return {{"initial_points", initial_points},
          {"repeat_default", repeat_default},
          {"ei_noise_fraction", ei_noise_fraction},
          {"ei_floor", ei_floor},
          {"refit_growth", refit_growth},
          {"final_score", final_score},
          {"tie_z", tie_z},
          {"finalist_z", finalist_z},
          {"finalist_cover", finalist_cover},
          {"small_space", small_space},
          {"budget_fraction", budget_fraction},
          {"design_fanouts", design_fanouts},
          {"pool_default_alias", pool_default_alias}};
}

// ---------------------------------------------------------------------------------------------
// The observations as a grid

struct BayesStrategy::GridView {
  std::vector<std::int64_t> sizes;
  std::vector<TuningConfig> rows;                      // configurations with a row in the data
  std::vector<bool> penalty;                           // row stands for a failed configuration
  std::vector<std::vector<std::vector<double>>> logs;  // rows x sizes x runs (log latency)
  GridData data;
  Eigen::VectorXd center, scale;  // per size: z = (log latency - center) / scale
  int data_rows = 0;              // rows that are not penalties
  int reused_runs = 0;            // warm start: earlier runs among the data rows

  int row_of(const TuningConfig& c) const {
    auto it = std::find(rows.begin(), rows.end(), c);
    return it == rows.end() ? -1 : static_cast<int>(it - rows.begin());
  }
};

std::vector<std::int64_t> BayesStrategy::size_grid() const {
  std::vector<std::int64_t> sizes = options_.msg_sizes;
  if (sizes.empty())
    for (const auto& e : evaluations_)
      sizes.insert(sizes.end(), e.msg_sizes.begin(), e.msg_sizes.end());
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// Warm start: the earlier campaign's runs stand in for the configurations this one has not
// measured yet, shifted per size by the mean log change seen on the configurations measured
// in both (the landscape after a small change is the old one, moved); sizes without a common
// configuration take the mean shift of the others. They are data like any other row, so the
// model knows the whole landscape from the first fit, re-measures where the old optimum may have
// moved, and stops much sooner; picks still come from runs made in this campaign (the engine's
// final phase re-measures every finalist).
int BayesStrategy::add_warm_start_rows(
    const std::vector<std::int64_t>& sizes,
    std::map<TuningConfig, std::pair<bool, std::vector<std::vector<double>>>>& by_config) const {
  const int m = static_cast<int>(sizes.size());
  std::map<TuningConfig, std::vector<std::vector<double>>> prior;
  std::map<TuningConfig, int> prior_runs;
  for (const auto& e : prior_evaluations_) {
    if (e.failed) continue;
    const TuningConfig config = space_->canonical(e.config);
    ++prior_runs[config];
    auto& cells = prior[config];
    cells.resize(m);
    for (std::size_t i = 0; i < e.msg_sizes.size() && i < e.latency_us.size(); ++i) {
      auto it = std::lower_bound(sizes.begin(), sizes.end(), e.msg_sizes[i]);
      if (it == sizes.end() || *it != e.msg_sizes[i]) continue;
      if (std::isfinite(e.latency_us[i]) && e.latency_us[i] > 0)
        cells[it - sizes.begin()].push_back(std::log(e.latency_us[i]));
    }
  }
  std::vector<double> shift(m, std::nan(""));
  double shift_sum = 0;
  int shift_count = 0;
  for (int s = 0; s < m; ++s) {
    double sum = 0;
    int count = 0;
    for (const auto& [config, cells] : prior) {
      auto now = by_config.find(config);
      if (now == by_config.end() || now->second.second.size() != static_cast<std::size_t>(m))
        continue;
      if (cells[s].empty() || now->second.second[s].empty()) continue;
      sum += mean(now->second.second[s]) - mean(cells[s]);
      ++count;
    }
    if (count) shift[s] = sum / count, shift_sum += shift[s], ++shift_count;
  }
  if (shift_count == 0) return 0;  // nothing measured again yet: the old levels mean nothing
  for (int s = 0; s < m; ++s)
    if (!std::isfinite(shift[s])) shift[s] = shift_sum / shift_count;
  int added = 0;
  for (auto& [config, cells] : prior) {
    if (by_config.count(config)) continue;
    for (int s = 0; s < m; ++s)
      for (double& x : cells[s]) x += shift[s];
    by_config[config] = {false, std::move(cells)};
    added += prior_runs[config];
  }
  return added;
}

// Per size, the default runs one configuration of the space (SearchSpace::default_alias): when
// both are measured, each gets the other's runs at that size.
void BayesStrategy::pool_default_with_alias(
    const std::vector<std::int64_t>& sizes,
    std::map<TuningConfig, std::pair<bool, std::vector<std::vector<double>>>>& by_config) const {
  auto def = by_config.find(TuningConfig{});
  if (def == by_config.end()) return;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const auto alias = space_->default_alias(sizes[s]);
    if (!alias) continue;
    auto a = by_config.find(*alias);
    if (a == by_config.end()) continue;
    auto& d_cells = def->second.second;
    auto& a_cells = a->second.second;
    if (s >= d_cells.size() || s >= a_cells.size()) continue;
    std::vector<double> both = d_cells[s];
    both.insert(both.end(), a_cells[s].begin(), a_cells[s].end());
    d_cells[s] = both;
    a_cells[s] = std::move(both);
  }
}

BayesStrategy::GridView BayesStrategy::grid_view() const {
  GridView v;
  v.sizes = size_grid();
  const int m = static_cast<int>(v.sizes.size());
  std::map<TuningConfig, std::pair<bool, std::vector<std::vector<double>>>> by_config;
  for (const auto& e : evaluations_) {
    auto& [failed, cells] = by_config[space_->canonical(e.config)];
    cells.resize(m);
    failed = failed || e.failed;
    for (std::size_t i = 0; i < e.msg_sizes.size() && i < e.latency_us.size(); ++i) {
      auto it = std::lower_bound(v.sizes.begin(), v.sizes.end(), e.msg_sizes[i]);
      if (it == v.sizes.end() || *it != e.msg_sizes[i]) continue;
      double lat = e.latency_us[i];
      if (std::isfinite(lat) && lat > 0) cells[it - v.sizes.begin()].push_back(std::log(lat));
    }
  }
  if (!prior_evaluations_.empty()) v.reused_runs = add_warm_start_rows(v.sizes, by_config);
  if (settings_.pool_default_alias) pool_default_with_alias(v.sizes, by_config);
  // Data rows first (configurations with any measurement), then penalty rows.
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& [config, entry] : by_config) {
      bool any = false;
      for (const auto& cell : entry.second) any = any || !cell.empty();
      bool is_penalty = !any;  // failed runs with partial data keep their data
      if ((pass == 0) == is_penalty) continue;
      v.rows.push_back(config);
      v.penalty.push_back(is_penalty);
      v.logs.push_back(entry.second);
    }
  v.data_rows = static_cast<int>(std::count(v.penalty.begin(), v.penalty.end(), false));
  const int n = static_cast<int>(v.rows.size());
  if (m == 0 || v.data_rows == 0) return v;

  // Per-size standardisation over the data rows' cell means.
  Eigen::MatrixXd cell_mean = Eigen::MatrixXd::Constant(n, m, std::nan(""));
  for (int j = 0; j < v.data_rows; ++j)
    for (int s = 0; s < m; ++s)
      if (!v.logs[j][s].empty()) {
        double sum = 0;
        for (double x : v.logs[j][s]) sum += x;
        cell_mean(j, s) = sum / v.logs[j][s].size();
      }
  v.center.resize(m);
  v.scale.resize(m);
  for (int s = 0; s < m; ++s) {
    double sum = 0, sum2 = 0;
    int count = 0;
    for (int j = 0; j < v.data_rows; ++j)
      if (std::isfinite(cell_mean(j, s))) sum += cell_mean(j, s), ++count;
    double mean = count ? sum / count : 0.0;
    for (int j = 0; j < v.data_rows; ++j)
      if (std::isfinite(cell_mean(j, s)))
        sum2 += (cell_mean(j, s) - mean) * (cell_mean(j, s) - mean);
    v.center[s] = mean;
    v.scale[s] = count >= 2 ? std::max(kScaleFloor, std::sqrt(sum2 / count)) : 1.0;
  }

  GridData& d = v.data;
  d.size_coord.resize(m);
  d.size_log2.resize(m);
  for (int s = 0; s < m; ++s) d.size_log2[s] = std::log2(std::max<double>(1, v.sizes[s]));
  double lo = std::log2(std::max<double>(1, v.sizes.front()));
  double hi = std::log2(std::max<double>(1, v.sizes.back()));
  for (int s = 0; s < m; ++s)
    d.size_coord[s] = hi > lo ? (std::log2(std::max<double>(1, v.sizes[s])) - lo) / (hi - lo) : 0.0;
  d.scale = v.scale;
  d.z.setZero(n, m);
  d.repeats.setOnes(n);
  d.within_ss.setZero(n, m);
  d.within_dof.setZero(n, m);
  for (int j = 0; j < n; ++j) d.configs.push_back(encoder_.encode(v.rows[j]));
  for (int j = 0; j < v.data_rows; ++j) {
    double offset = 0;
    int observed = 0, min_runs = std::numeric_limits<int>::max();
    for (int s = 0; s < m; ++s) {
      if (!std::isfinite(cell_mean(j, s))) continue;
      double z = (cell_mean(j, s) - v.center[s]) / v.scale[s];
      d.z(j, s) = z;
      offset += z;
      ++observed;
      min_runs = std::min<int>(min_runs, static_cast<int>(v.logs[j][s].size()));
      double ss = 0;
      for (double x : v.logs[j][s]) ss += (x - cell_mean(j, s)) * (x - cell_mean(j, s));
      d.within_ss(j, s) = ss / (v.scale[s] * v.scale[s]);
      d.within_dof(j, s) = static_cast<double>(v.logs[j][s].size()) - 1.0;
    }
    // A truncated run: missing sizes take the row's average standardised level.
    for (int s = 0; s < m; ++s)
      if (!std::isfinite(cell_mean(j, s))) d.z(j, s) = offset / observed;
    d.repeats[j] = min_runs;
  }
  for (int j = v.data_rows; j < n; ++j)
    for (int s = 0; s < m; ++s)
      d.z(j, s) = d.z.topRows(v.data_rows).col(s).maxCoeff() + kFailurePenalty / v.scale[s];
  return v;
}

// ---------------------------------------------------------------------------------------------

BayesStrategy::BayesStrategy(const SearchSpace& space, const StrategyOptions& options)
    : space_(&space),
      options_(options),
      settings_(BayesSettings::from_json(options.settings)),
      encoder_(space) {
  if (options_.stop_rule.empty()) options_.stop_rule = "ei";
  if (options_.stop_rule != "ei" && options_.stop_rule != "thesis" &&
      options_.stop_rule != "budget")
    throw std::invalid_argument("unknown stop rule '" + options_.stop_rule + "'");
  max_evaluations_ = options_.budget > 0 ? options_.budget : 150;
  // Under the fractional budget (the default) the design is lean: one configuration per
  // algorithm (the categorical kernel needs each algorithm seen once), the chain at its
  // smallest and largest fan-out (a fan-out is a tree shape: fan-out 2 says little about the
  // flat tree), no replicate of the default; the runs saved go to the acquisition, which pays
  // off more (bench/README.md).
  const bool fraction_budget = options_.budget <= 0 && options_.stop_rule == "ei" &&
                               settings_.budget_fraction > 0 &&
                               space.size() > static_cast<std::size_t>(settings_.small_space);
  const bool lean_design =
      fraction_budget && settings_.initial_points <= 0 && options_.warm_start_points.empty();
  int n = settings_.initial_points > 0 ? settings_.initial_points
          : lean_design                ? lean_design_size(space, settings_.design_fanouts)
                                       : default_initial_design_size(space);
  Rng rng(mix_seed(options_.seed, 0));
  LatinHypercubeOptions lhs;
  lhs.cover_fanouts = lean_design && settings_.design_fanouts;
  design_ = latin_hypercube_design(space, n, rng, lhs);
  // Warm start (re-tuning after a small change; options.warm_start_*): the default, then the
  // earlier campaign's per-size bests, then a third of the usual space-filling design; the
  // earlier hyper-parameters start the first fit (and shape it: they are one of its starts).
  if (!options_.warm_start_points.empty()) {
    std::vector<TuningConfig> warm;
    auto add = [&](const TuningConfig& c) {
      const TuningConfig point = space.canonical(c);
      if (space.contains(point) && std::find(warm.begin(), warm.end(), point) == warm.end())
        warm.push_back(point);
    };
    add(TuningConfig{});
    for (const auto& c : options_.warm_start_points) add(c);
    // Without the earlier runs (another strategy made them) a little exploration is needed.
    const bool have_runs =
        options_.warm_start_state.is_object() && options_.warm_start_state.contains("evaluations");
    const int explore = have_runs ? 0 : std::max(2, n / 3);
    const std::size_t target = warm.size() + static_cast<std::size_t>(explore);
    if (explore > 0)
      for (const auto& c : latin_hypercube_design(space, explore + 1, rng))
        if (warm.size() < target) add(c);
    design_ = warm;
  }
  if (options_.warm_start_state.is_object() && options_.warm_start_state.contains("evaluations"))
    for (const auto& j : options_.warm_start_state["evaluations"])
      prior_evaluations_.push_back(j.get<Evaluation>());
  if (options_.warm_start_state.is_object() && options_.warm_start_state.contains("theta") &&
      options_.warm_start_state["theta"].is_array()) {
    auto t = options_.warm_start_state["theta"].get<std::vector<double>>();
    if (static_cast<Eigen::Index>(t.size()) == KroneckerGp::default_theta().size())
      theta_ = Eigen::Map<Eigen::VectorXd>(t.data(), static_cast<Eigen::Index>(t.size()));
  }
  // The replicate gives the noise model data from the start; a design that already covers the
  // whole space (small spaces) skips it so that bo never costs more than exhaustive.
  if (settings_.repeat_default && !lean_design && space.contains(TuningConfig{}) &&
      !design_.empty() && design_.front().is_default() && design_.size() < space.size())
    design_.insert(design_.begin() + 1, TuningConfig{});
  // A small space is measured once, in the exhaustive strategy's order (a warm start keeps its
  // own design: it exists to measure less than everything).
  small_mode_ = settings_.small_space > 0 &&
                space.size() <= static_cast<std::size_t>(settings_.small_space) &&
                options_.warm_start_points.empty();
  if (small_mode_) {
    design_ = space.points();
    if (options_.budget <= 0) max_evaluations_ = static_cast<int>(space.size());
  } else if (fraction_budget) {
    // A warm start with the earlier campaign's runs already has the landscape's shape, tree
    // shapes included: 40 % (same regret as cold on the re-tuning benchmark, bench/README.md).
    const double share =
        settings_.budget_fraction * (prior_evaluations_.empty() ? 1.0 : kWarmBudgetShare);
    const int fraction =
        static_cast<int>(std::floor(share * static_cast<double>(space.size()) + 1e-9));
    max_evaluations_ =
        std::min(max_evaluations_, std::max(fraction, static_cast<int>(design_.size()) + 1));
  }
}

int BayesStrategy::reused_runs() const {
  return prior_evaluations_.empty() ? 0 : grid_view().reused_runs;
}

void BayesStrategy::observe(const Evaluation& evaluation) {
  Evaluation e = evaluation;
  e.config = space_->canonical(e.config);
  auto it = pending_.find(e.config);
  if (it != pending_.end()) pending_.erase(it);
  evaluations_.push_back(e);
  observations_.add(e);
}

bool BayesStrategy::budget_exhausted() const {
  if (static_cast<int>(evaluations_.size()) >= max_evaluations_) return true;
  if (options_.budget_seconds > 0) {
    double seconds = 0;
    for (const auto& e : evaluations_)
      seconds += options_.cost.run_seconds(e.msg_sizes, e.latency_us);
    if (seconds >= options_.budget_seconds) return true;
  }
  return false;
}

bool BayesStrategy::thesis_rule_met() const {
  // Geometric mean over sizes of the best latency so far, after each evaluation.
  const auto sizes = size_grid();
  std::vector<double> best(sizes.size(), std::numeric_limits<double>::infinity());
  std::vector<double> history;
  for (const auto& e : evaluations_) {
    for (std::size_t i = 0; i < e.msg_sizes.size() && i < e.latency_us.size(); ++i) {
      auto it = std::lower_bound(sizes.begin(), sizes.end(), e.msg_sizes[i]);
      if (it == sizes.end() || *it != e.msg_sizes[i]) continue;
      double lat = e.latency_us[i];
      if (std::isfinite(lat) && lat > 0) {
        auto& b = best[it - sizes.begin()];
        b = std::min(b, std::log(lat));
      }
    }
    double sum = 0;
    int count = 0;
    for (double b : best)
      if (std::isfinite(b)) sum += b, ++count;
    history.push_back(count ? sum / count : std::numeric_limits<double>::infinity());
  }
  const std::size_t t = history.size();
  if (t >= 150) return true;
  const std::size_t window = 15;
  if (t < design_.size() + window) return false;
  return history[t - 1 - window] - history[t - 1] < -std::log(0.99);
}

bool BayesStrategy::done() const {
  if (stopped_ || budget_exhausted()) return true;
  if (options_.stop_rule == "thesis" && thesis_rule_met()) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// suggest(), in four pieces: candidate generation, the model (hyper-parameters), the
// acquisition (log-EI per candidate and size, sizes still open = the stop rule), batch
// selection (greedy Kriging believer).

namespace {

// Kriging believer: rows for configurations not observed yet, at the posterior mean.
void append_fantasies(GridData& data, const KroneckerGp& gp,
                      const std::vector<EncodedConfig>& enc) {
  if (enc.empty()) return;
  Eigen::MatrixXd mu;
  gp.predict(enc, &mu, nullptr);
  const int old = static_cast<int>(data.configs.size()), add = static_cast<int>(enc.size());
  data.configs.insert(data.configs.end(), enc.begin(), enc.end());
  data.z.conservativeResize(old + add, Eigen::NoChange);
  data.z.bottomRows(add) = mu;
  data.repeats.conservativeResize(old + add);
  data.repeats.tail(add).setOnes();
  data.within_ss.conservativeResize(old + add, Eigen::NoChange);
  data.within_ss.bottomRows(add).setZero();
  data.within_dof.conservativeResize(old + add, Eigen::NoChange);
  data.within_dof.bottomRows(add).setZero();
}

}  // namespace

std::vector<TuningConfig> BayesStrategy::candidate_points(
    const std::vector<TuningConfig>& batch) const {
  // Never evaluated, not pending, not already in this batch.
  std::set<TuningConfig> taken(pending_.begin(), pending_.end());
  taken.insert(batch.begin(), batch.end());
  for (const auto& e : evaluations_) taken.insert(space_->canonical(e.config));
  std::vector<TuningConfig> candidates;
  for (const auto& p : space_->points())
    if (!taken.count(p)) candidates.push_back(p);
  return candidates;
}

GridData BayesStrategy::fit_hyperparameters(const GridView& view, Rng& rng) {
  // Multi-start when the data doubled, warm refit when it grew. Fits and predictions use the
  // data with outlier cells winsorised under the current hyper-parameters.
  const int n = static_cast<int>(view.rows.size());
  auto robust = [](GridData data, const Eigen::VectorXd& theta) {
    winsorize_outliers(data, theta);
    return data;
  };
  // Hyper-parameters are fitted on at most kFitRows rows: bounded decision time.
  auto fit = [](const GridData& data, const std::vector<Eigen::VectorXd>& starts, int iterations) {
    return fit_grid_gp(subset_rows(data, kFitRows), starts, iterations);
  };
  if (!theta_ || n >= 2 * full_fit_rows_) {
    const bool first_fit = !theta_;
    std::vector<Eigen::VectorXd> starts;
    if (theta_) starts.push_back(*theta_);
    starts.push_back(KroneckerGp::default_theta());
    const Eigen::VectorXd lb = KroneckerGp::lower_bounds(), ub = KroneckerGp::upper_bounds();
    Eigen::VectorXd jitter = KroneckerGp::default_theta();
    for (int i = 0; i < jitter.size(); ++i)
      jitter[i] = std::clamp(jitter[i] + (rng.uniform() * 2 - 1) * 1.5, lb[i], ub[i]);
    starts.push_back(jitter);
    theta_ = fit(first_fit ? view.data : robust(view.data, *theta_), starts, 40);
    // The first fit saw the outliers: fit once more on the winsorised data.
    if (first_fit) theta_ = fit(robust(view.data, *theta_), {*theta_}, 30);
    full_fit_rows_ = fitted_rows_ = n;
  } else if (n >= fitted_rows_ * settings_.refit_growth && n > fitted_rows_) {
    theta_ = fit(robust(view.data, *theta_), {*theta_}, 30);
    fitted_rows_ = n;
  }
  return robust(view.data, *theta_);
}

// The acquisition's inputs that do not change within a batch.
struct BayesStrategy::AcquisitionContext {
  const GridView* view = nullptr;
  Eigen::VectorXd incumbent;  // per size, log latency
  Eigen::VectorXd noise_var;  // per size, log units
  double share = 1;           // measurement share of the noise
};

Eigen::MatrixXd BayesStrategy::log_ei(const AcquisitionContext& ctx,
                                      const Eigen::MatrixXd& mean_std,
                                      const Eigen::MatrixXd& var_std) {
  const GridView& view = *ctx.view;
  Eigen::MatrixXd out(mean_std.rows(), mean_std.cols());
  for (int i = 0; i < mean_std.rows(); ++i)
    for (int s = 0; s < mean_std.cols(); ++s) {
      double mu = view.center[s] + view.scale[s] * mean_std(i, s);
      // An unmeasured configuration also has its own discrepancy, unknown until run.
      double var =
          view.scale[s] * view.scale[s] * var_std(i, s) + (1.0 - ctx.share) * ctx.noise_var[s];
      out(i, s) = log_expected_improvement(mu, std::sqrt(var), ctx.incumbent[s]);
    }
  return out;
}

std::vector<int> BayesStrategy::open_sizes(const Eigen::MatrixXd& log_ei,
                                           const Eigen::VectorXd& noise_var) const {
  // A size closes when its best EI falls below max(ei_floor, ei_noise_fraction x noise sd).
  std::vector<int> open;
  for (int s = 0; s < log_ei.cols(); ++s) {
    double threshold =
        std::max(settings_.ei_floor, settings_.ei_noise_fraction * std::sqrt(noise_var[s]));
    if (log_ei.col(s).maxCoeff() >= std::log(threshold)) open.push_back(s);
  }
  return open;
}

void BayesStrategy::select_batch(const AcquisitionContext& ctx, GridData data,
                                 std::unique_ptr<KroneckerGp> gp,
                                 const std::vector<TuningConfig>& candidates,
                                 const std::vector<EncodedConfig>& cand_enc,
                                 const Eigen::MatrixXd& mean_std, Eigen::MatrixXd ei,
                                 const std::vector<int>& open, int want,
                                 std::vector<TuningConfig>& out) const {
  // Greedy on the summed log-EI over the open sizes; each pick is fantasised at its posterior
  // mean (believer: means do not move, variances shrink). gp: the model on `data`.
  const int nc = static_cast<int>(candidates.size());
  Eigen::MatrixXd var_std;
  std::vector<bool> chosen(nc, false);
  while (static_cast<int>(out.size()) < want) {
    int best = -1;
    double best_value = kNegInf;
    for (int i = 0; i < nc; ++i) {
      if (chosen[i]) continue;
      double acq = kNegInf;
      for (int s : open) acq = log_add_exp(acq, ei(i, s));
      if (best < 0 || acq > best_value) best = i, best_value = acq;
    }
    if (best < 0) break;
    chosen[best] = true;
    out.push_back(candidates[best]);
    if (static_cast<int>(out.size()) >= want) break;
    append_fantasies(data, *gp, {cand_enc[best]});
    gp = std::make_unique<KroneckerGp>(data, *theta_);
    gp->predict(cand_enc, nullptr, &var_std);
    ei = log_ei(ctx, mean_std, var_std);
  }
}

std::vector<TuningConfig> BayesStrategy::suggest(int max_count) {
  ++suggest_calls_;
  std::vector<TuningConfig> out;
  if (max_count <= 0 || done()) {
    if (!stopped_ && done()) {
      stopped_ = true;
      stop_reason_ = budget_exhausted() ? "budget" : "thesis rule";
    }
    return out;
  }
  Rng rng(mix_seed(options_.seed, suggest_calls_));
  const int room = max_evaluations_ - static_cast<int>(evaluations_.size() + pending_.size());
  const int want = std::min(max_count, room);
  if (want <= 0) return out;

  while (design_next_ < design_.size() && static_cast<int>(out.size()) < want)
    out.push_back(design_[design_next_++]);
  auto finish = [&]() {
    for (const auto& c : out) pending_.insert(c);
    return out;
  };
  if (static_cast<int>(out.size()) == want) return finish();

  std::vector<TuningConfig> candidates = candidate_points(out);
  if (candidates.empty()) {
    if (out.empty() && pending_.empty()) stopped_ = true, stop_reason_ = "space exhausted";
    return finish();
  }

  GridView view = grid_view();
  if (view.data_rows < kMinModelRows || view.sizes.empty()) {
    rng.shuffle(candidates);
    for (const auto& c : candidates) {
      if (static_cast<int>(out.size()) >= want) break;
      out.push_back(c);
    }
    return finish();
  }

  view.data = fit_hyperparameters(view, rng);

  std::vector<EncodedConfig> cand_enc;
  for (const auto& c : candidates) cand_enc.push_back(encoder_.encode(c));
  const int m = static_cast<int>(view.sizes.size());

  // Fantasise the runs not observed yet (pending, and design points in this batch).
  GridData data = view.data;
  KroneckerGp observed_gp(data, *theta_);
  {
    std::vector<EncodedConfig> unobserved;
    for (const auto& c : pending_)
      if (view.row_of(c) < 0) unobserved.push_back(encoder_.encode(c));
    for (const auto& c : out)
      if (view.row_of(c) < 0) unobserved.push_back(encoder_.encode(c));
    append_fantasies(data, observed_gp, unobserved);
  }

  // Noise-aware incumbent per size: the lowest posterior value among evaluated
  // configurations (their own runs count for what the measurement noise allows).
  AcquisitionContext ctx;
  ctx.view = &view;
  ctx.share = observed_gp.measurement_share();
  Eigen::MatrixXd cell_mean, cell_var;
  observed_gp.observed_cell_posterior(ctx.share, &cell_mean, &cell_var);
  ctx.incumbent.resize(m);
  for (int s = 0; s < m; ++s)
    ctx.incumbent[s] =
        view.center[s] + view.scale[s] * cell_mean.topRows(view.data_rows).col(s).minCoeff();
  ctx.noise_var = observed_gp.noise_log_variance();

  Eigen::MatrixXd mean_std, var_std;
  auto gp = std::make_unique<KroneckerGp>(data, *theta_);
  gp->predict(cand_enc, &mean_std, &var_std);
  Eigen::MatrixXd ei = log_ei(ctx, mean_std, var_std);

  std::vector<int> open = open_sizes(ei, ctx.noise_var);
  if (open.empty()) {
    if (options_.stop_rule == "ei") {
      if (out.empty() && pending_.empty()) {
        stopped_ = true;
        stop_reason_ = "expected improvement below noise at every size";
      }
      return finish();
    }
    for (int s = 0; s < m; ++s) open.push_back(s);
  }
  select_batch(ctx, std::move(data), std::move(gp), candidates, cand_enc, mean_std, std::move(ei),
               open, want, out);
  return finish();
}

std::vector<BayesStrategy::SizeDecision> BayesStrategy::decide() const {
  std::vector<SizeDecision> out;
  GridView view = grid_view();
  if (view.data_rows == 0) return out;
  const int m = static_cast<int>(view.sizes.size());
  const int rows = view.data_rows;
  const bool have_model = theta_ && rows >= kMinModelRows;
  Eigen::MatrixXd mean, var;
  Eigen::VectorXd noise_sd = Eigen::VectorXd::Constant(m, 0.1);
  if (have_model) {
    winsorize_outliers(view.data, *theta_);
    KroneckerGp gp(view.data, *theta_);
    const double share = gp.measurement_share();
    gp.observed_cell_posterior(share, &mean, &var);
    noise_sd = (share * gp.noise_log_variance()).cwiseSqrt();
  }
  const std::string mode = have_model ? settings_.final_score : "median";
  for (int s = 0; s < m; ++s) {
    std::vector<int> measured;
    for (int j = 0; j < rows; ++j)
      if (!view.logs[j][s].empty()) measured.push_back(j);
    if (measured.empty()) continue;
    auto mu = [&](int j) { return view.center[s] + view.scale[s] * mean(j, s); };
    auto sd2 = [&](int j) { return view.scale[s] * view.scale[s] * var(j, s); };
    auto med = [&](int j) { return median(view.logs[j][s]); };
    auto runs = [&](int j) { return static_cast<double>(view.logs[j][s].size()); };
    // Score (log latency) and the standard deviation of its error, per measured configuration.
    auto score = [&](int j) { return mode == "median" ? med(j) : mu(j); };
    auto score_sd = [&](int j) {
      return mode == "median" ? noise_sd[s] / std::sqrt(runs(j)) : std::sqrt(sd2(j));
    };
    std::vector<int> pool = measured;
    if (mode == "hybrid") {  // contenders by posterior, then scored by their median
      int best = measured.front();
      for (int j : measured)
        if (mu(j) < mu(best)) best = j;
      pool.clear();
      for (int j : measured)
        if (mu(j) - mu(best) <= settings_.finalist_z * std::sqrt(sd2(j) + sd2(best)) + 1e-12)
          pool.push_back(j);
    }
    std::stable_sort(pool.begin(), pool.end(), [&](int a, int b) { return score(a) < score(b); });
    const int best = pool.front();
    // Within noise of the best is a tie: the default wins a tie, else the configuration with
    // fewer knobs, else the better score.
    std::vector<int> ties;
    for (int j : pool)
      if (score(j) - score(best) <= settings_.tie_z * std::hypot(score_sd(j), score_sd(best)))
        ties.push_back(j);
    auto knobs = [&](int j) { return (view.rows[j].segsize > 0) + (view.rows[j].fanout > 0); };
    int pick = best;
    for (int j : ties) {
      if (view.rows[j].is_default()) {
        pick = j;
        break;
      }
      if (knobs(j) < knobs(pick)) pick = j;
    }
    SizeDecision d;
    d.msg_size = view.sizes[s];
    d.pick = view.rows[pick];
    d.pick_latency_us = std::exp(med(pick));
    d.ranked.push_back(view.rows[pick]);
    for (int j : ties)
      if (j != pick) d.ranked.push_back(view.rows[j]);
    d.contenders.push_back(view.rows[pick]);
    if (mode != "median") {
      int top = measured.front();
      for (int j : measured)
        if (mu(j) < mu(top)) top = j;
      for (int j : measured)
        if (j != pick &&
            mu(j) - mu(top) <= settings_.finalist_z * std::sqrt(sd2(j) + sd2(top)) + 1e-12)
          d.contenders.push_back(view.rows[j]);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<TuningConfig> BayesStrategy::finalists(int per_size) const {
  std::set<TuningConfig> picked;
  if (small_mode_) {  // as exhaustive: the best medians per size
    for (std::int64_t size : size_grid()) {
      const auto order = observations_.ranked(size);
      for (int i = 0; i < per_size && i < static_cast<int>(order.size()); ++i)
        picked.insert(order[i]);
    }
    return {picked.begin(), picked.end()};
  }
  const auto decisions = decide();
  if (!settings_.finalist_cover || per_size <= 0) {
    for (const auto& d : decisions)
      for (int k = 0; k < per_size && k < static_cast<int>(d.ranked.size()); ++k)
        picked.insert(d.ranked[k]);
    return {picked.begin(), picked.end()};
  }
  // Greedy set cover of the sizes by their contenders; the default is re-measured anyway.
  auto covers = [](const SizeDecision& d, const TuningConfig& c) {
    return std::find(d.contenders.begin(), d.contenders.end(), c) != d.contenders.end();
  };
  std::vector<bool> covered(decisions.size(), false);
  if (observations_.evaluated(TuningConfig{}))
    for (std::size_t i = 0; i < decisions.size(); ++i)
      covered[i] = covers(decisions[i], TuningConfig{});
  while (true) {
    std::map<TuningConfig, std::pair<int, int>> gain;  // config -> (sizes covered, picks)
    for (std::size_t i = 0; i < decisions.size(); ++i) {
      if (covered[i]) continue;
      for (const auto& c : decisions[i].contenders) ++gain[c].first;
      ++gain[decisions[i].pick].second;
    }
    if (gain.empty()) break;
    auto best = gain.begin();  // most sizes, then most picks, then the lowest configuration
    for (auto it = gain.begin(); it != gain.end(); ++it)
      if (it->second > best->second) best = it;
    picked.insert(best->first);
    for (std::size_t i = 0; i < decisions.size(); ++i)
      covered[i] = covered[i] || covers(decisions[i], best->first);
  }
  for (const auto& d : decisions)
    for (int k = 1; k < per_size && k < static_cast<int>(d.ranked.size()); ++k)
      picked.insert(d.ranked[k]);
  return {picked.begin(), picked.end()};
}

std::vector<Choice> BayesStrategy::recommend() const {
  if (small_mode_) return observations_.best_per_size(size_grid());  // exhaustive's rule
  std::vector<Choice> out;
  for (const auto& d : decide()) {
    Choice c;
    c.msg_size = d.msg_size;
    c.config = d.pick;
    c.latency_us = d.pick_latency_us;
    c.default_us = observations_.median(TuningConfig{}, d.msg_size);
    out.push_back(c);
  }
  return out;
}

std::optional<std::vector<TuningConfig>> BayesStrategy::design_of(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("design") || !state.at("design").is_array())
    return std::nullopt;
  std::vector<TuningConfig> design;
  for (const auto& d : state.at("design")) {
    try {
      design.push_back(d.get<TuningConfig>());
    } catch (const std::exception&) {
    }
  }
  return design;
}

nlohmann::json BayesStrategy::state() const {
  nlohmann::json evals = nlohmann::json::array();
  for (const auto& e : evaluations_) evals.push_back(e);
  nlohmann::json pending = nlohmann::json::array();
  for (const auto& c : pending_) pending.push_back(c);
  nlohmann::json design = nlohmann::json::array();
  for (const auto& c : design_) design.push_back(c);
  nlohmann::json theta = nullptr;
  if (theta_) theta = std::vector<double>(theta_->data(), theta_->data() + theta_->size());
  return {{"strategy", name()},
          {"version", 1},
          {"seed", options_.seed},
          {"settings", settings_.to_json()},
          {"stop_rule", options_.stop_rule},
          {"design", design},
          {"design_next", design_next_},
          {"evaluations", evals},
          {"pending", pending},
          {"theta", theta},
          {"fitted_rows", fitted_rows_},
          {"full_fit_rows", full_fit_rows_},
          {"suggest_calls", suggest_calls_},
          {"stopped", stopped_},
          {"stop_reason", stop_reason_},
          // Derived from "evaluations"; kept for readers of the common state layout.
          {"observations", observations_.to_json()}};
}

void BayesStrategy::restore(const nlohmann::json& state) {
  check_state_is_for(state, name(), options_.seed);
  design_.clear();
  for (const auto& c : state.at("design")) design_.push_back(c.get<TuningConfig>());
  design_next_ = state.at("design_next").get<std::size_t>();
  evaluations_.clear();
  observations_ = Observations();
  for (const auto& j : state.at("evaluations")) {
    const auto e = j.get<Evaluation>();
    evaluations_.push_back(e);
    observations_.add(e);
  }
  pending_.clear();
  for (const auto& c : state.at("pending")) pending_.insert(c.get<TuningConfig>());
  theta_.reset();
  if (!state.at("theta").is_null()) {
    auto t = state.at("theta").get<std::vector<double>>();
    // A state saved by a model with other hyper-parameters is refitted from scratch.
    if (static_cast<Eigen::Index>(t.size()) == KroneckerGp::default_theta().size())
      theta_ = Eigen::Map<Eigen::VectorXd>(t.data(), static_cast<Eigen::Index>(t.size()));
  }
  fitted_rows_ = state.at("fitted_rows").get<int>();
  full_fit_rows_ = state.at("full_fit_rows").get<int>();
  suggest_calls_ = state.at("suggest_calls").get<std::uint64_t>();
  stopped_ = state.at("stopped").get<bool>();
  stop_reason_ = state.at("stop_reason").get<std::string>();
  options_.stop_rule = state.at("stop_rule").get<std::string>();
  settings_ = BayesSettings::from_json(state.at("settings"));
}

}  // namespace colltune
