// "bo": Bayesian optimisation over the conditional coll_tuned space, joint over message sizes.
//
//  - Initial design: mixed-space Latin Hypercube (latin_hypercube.h), default decision first;
//    the default is run twice (a replicate for the noise model) unless the design already
//    covers the whole space.
//  - Surrogate: KroneckerGp on per-size standardised log latency (categorical algorithm x
//    Matern 5/2 on log2 segment size and fan-out, plus each configuration's own effect, x
//    Matern 5/2 on log2 message size, a segment-count mean term, learned per-size noise;
//    docs/bo-model.md). One run fills a whole row, so every job
//    informs every size. Cells slower than their leave-one-out prediction by > 2.5 sd are
//    winsorised (one-sided: interference only slows runs down). Hyper-parameters: MAP by
//    multi-start L-BFGS-B when the number of evaluated configurations doubled, a warm-started
//    refit when it grew by `refit_growth`, none between; fitted on at most 40 rows.
//  - Repeats split the model's noise into measurement noise and discrepancy (measurement_share
//    in kronecker_gp.h): an evaluated configuration's value is its own runs combined with the
//    leave-one-out prediction; an unevaluated one carries the discrepancy as extra variance.
//  - Acquisition: per size, log-EI in log-latency units against a noise-aware incumbent (the
//    lowest posterior value among evaluated configurations), summed over the sizes still
//    open. A size closes when its best EI falls below max(ei_floor, ei_noise_fraction x noise
//    sd). Batches by Kriging believer (fantasised rows at the posterior mean). Evaluated and
//    pending configurations are never suggested again (the default's replicate aside).
//  - Stop ("ei", the default): every size closed; or budgets (evaluations, benchmark seconds);
//    "thesis": <= 150 evaluations and < 1 % improvement of the geometric-mean best over 15;
//    "budget": budgets only. Without a budget at most 150 evaluations, and under "ei" at most
//    max(floor(budget_fraction x space size), initial design + 1): one job that informs every
//    size makes a small fraction of the space enough (bench/README.md "Optimizer" measures
//    it); 40 % of that under a warm start that has the earlier campaign's runs. Under
//    that budget (no explicit budget, no warm start, initial_points unset) the
//    design is lean: one configuration per algorithm and, with design_fanouts (the default),
//    the chain at its smallest and its largest fan-out (latin_hypercube.h cover_fanouts), no
//    replicate of the default.
//  - The default is not a point of its own: at each size it runs the configuration Open MPI's
//    fixed decision picks there (that algorithm, segment size 0, fan-out 0; core/
//    fixed_decision.h). With pool_default_alias (the default) the two share their runs at that
//    size, so each is known from both (not for algorithms with a fan-out: fan-out 0 is not a
//    point of the space).
//  - Small spaces (<= small_space configurations, e.g. algorithm-only sweeps): a model cannot
//    beat simply measuring everything there, so bo makes one pass over the space in the
//    exhaustive strategy's order and picks like it (lowest median per size; finalists ranked
//    by median): it never costs more than exhaustive and picks the same.
//  - Final choice per size (recommend): the lowest posterior value of an evaluated
//    configuration; a gap within tie_z posterior standard deviations is a tie, won by the
//    default, else by the configuration with fewer knobs. final_score "median" ranks by the
//    median of the runs instead (noise from the model), "hybrid" takes the posterior
//    contenders (within finalist_z sd) and ranks them by median. finalists(k): per size the
//    pick, then up to k-1 configurations tied with the best. tie_z is 0 by default: on these
//    noisy landscapes preferring the default within the posterior's noise cost regret, and
//    the campaign engine applies the default preference on its re-measured finalists
//    (optimizer/final_choice.h). finalists(k) with finalist_cover (the default) is a cheap
//    final phase: the fewest configurations such that every size has one of its contenders
//    (within finalist_z posterior sd of its best) among them, the default counting as
//    already measured (the engine re-measures it anyway); greedy set cover, preferring each
//    size's pick; k > 1 adds each size's next k-1 ranked configurations.
//
// Settings (StrategyOptions::settings, all optional): initial_points (int, 0 = auto),
// repeat_default (bool), ei_noise_fraction (0.3), ei_floor (0.002), refit_growth (1.25),
// final_score ("posterior", "hybrid", "median"), tie_z (0), finalist_z (1),
// small_space (12; 0 = off), budget_fraction (0.2; 0 = off), finalist_cover (true),
// design_fanouts (true), pool_default_alias (true).
#pragma once

#include <Eigen/Dense>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/rng.h"
#include "optimizer/config_encoding.h"
#include "optimizer/kronecker_gp.h"
#include "optimizer/observations.h"
#include "optimizer/strategy.h"

namespace colltune {

struct BayesSettings {
  int initial_points = 0;
  bool repeat_default = true;
  double ei_noise_fraction = 0.3;
  double ei_floor = 0.002;
  double refit_growth = 1.25;
  std::string final_score = "posterior";
  double tie_z = 0.0;
  double finalist_z = 1.0;
  bool finalist_cover = true;
  int small_space = 12;
  double budget_fraction = 0.2;
  bool design_fanouts = true;
  bool pool_default_alias = true;

  static BayesSettings from_json(const nlohmann::json& j);  // throws on unknown keys
  nlohmann::json to_json() const;
};

class BayesStrategy : public Strategy {
 public:
  BayesStrategy(const SearchSpace& space, const StrategyOptions& options);

  std::string name() const override { return "bo"; }
  std::vector<TuningConfig> suggest(int max_count) override;
  void observe(const Evaluation& evaluation) override;
  bool done() const override;
  int planned_evaluations() const override { return max_evaluations_; }
  std::vector<TuningConfig> finalists(int per_size) const override;
  std::vector<Choice> recommend() const override;
  // The earlier campaign's runs the model uses as data now (a warm start with runs).
  int reused_runs() const override;
  // The initial design in a state() of this strategy; nullopt when it has none (malformed).
  static std::optional<std::vector<TuningConfig>> design_of(const nlohmann::json& state);
  nlohmann::json state() const override;
  void restore(const nlohmann::json& state) override;

  // Introspection for benchmarks and dashboards.
  std::string stop_reason() const override { return stop_reason_; }
  std::optional<Eigen::VectorXd> hyperparameters() const { return theta_; }
  int evaluation_budget() const { return max_evaluations_; }
  // True when the space is small enough for one exhaustive pass (see above).
  bool small_space_mode() const { return small_mode_; }

  // Everything observed, arranged on the configuration x size grid (see the .cpp).
  struct GridView;

 private:
  GridView grid_view() const;
  // suggest() in pieces (see the .cpp): candidate generation, hyper-parameters (returns the
  // data winsorised under them), acquisition, the sizes still open (stop rule), batch.
  struct AcquisitionContext;
  std::vector<TuningConfig> candidate_points(const std::vector<TuningConfig>& batch) const;
  GridData fit_hyperparameters(const GridView& view, Rng& rng);
  static Eigen::MatrixXd log_ei(const AcquisitionContext& ctx, const Eigen::MatrixXd& mean_std,
                                const Eigen::MatrixXd& var_std);
  std::vector<int> open_sizes(const Eigen::MatrixXd& log_ei,
                              const Eigen::VectorXd& noise_var) const;
  void select_batch(const AcquisitionContext& ctx, GridData data, std::unique_ptr<KroneckerGp> gp,
                    const std::vector<TuningConfig>& candidates,
                    const std::vector<EncodedConfig>& cand_enc, const Eigen::MatrixXd& mean_std,
                    Eigen::MatrixXd ei, const std::vector<int>& open, int want,
                    std::vector<TuningConfig>& out) const;
  // Per size: the pick, then the configurations tied with the best (best score first).
  struct SizeDecision {
    std::int64_t msg_size = 0;
    TuningConfig pick;
    double pick_latency_us = 0;  // median of the pick's runs
    std::vector<TuningConfig> ranked;
    // Configurations within finalist_z posterior sd of the size's best (the pick included).
    std::vector<TuningConfig> contenders;
  };
  std::vector<SizeDecision> decide() const;
  std::vector<std::int64_t> size_grid() const;
  bool budget_exhausted() const;
  bool thesis_rule_met() const;

  const SearchSpace* space_;
  StrategyOptions options_;
  BayesSettings settings_;
  ConfigEncoder encoder_;
  int max_evaluations_ = 150;
  bool small_mode_ = false;

  std::vector<TuningConfig> design_;
  std::size_t design_next_ = 0;
  std::vector<Evaluation> evaluations_;  // in arrival order
  std::multiset<TuningConfig> pending_;
  std::optional<Eigen::VectorXd> theta_;
  int fitted_rows_ = 0;    // rows at the last (any) fit
  int full_fit_rows_ = 0;  // rows at the last multi-start fit
  std::uint64_t suggest_calls_ = 0;
  bool stopped_ = false;
  std::string stop_reason_;
  Observations observations_;

  // Warm start (StrategyOptions::warm_start_state): the earlier campaign's runs, used for the
  // configurations not measured yet here (see add_warm_start_rows in the .cpp).
  std::vector<Evaluation> prior_evaluations_;
  void pool_default_with_alias(
      const std::vector<std::int64_t>& sizes,
      std::map<TuningConfig, std::pair<bool, std::vector<std::vector<double>>>>& by_config) const;
  // Returns the number of earlier runs it added (those of configurations not measured here).
  int add_warm_start_rows(
      const std::vector<std::int64_t>& sizes,
      std::map<TuningConfig, std::pair<bool, std::vector<std::vector<double>>>>& by_config) const;
};

}  // namespace colltune
