// "bo-cluster": the whole-cluster Bayesian search (cluster_strategy.h), one model over
// (configuration x message size x communicator size).
//
//  - Surrogate: ClusterGp (cluster_gp.h) on log latency: rows are (configuration, comm size)
//    pairs, columns the message sizes; the row kernel is a product of a Matern 5/2 kernel on
//    log2 P with (a part every configuration shares + a configuration part: categorical
//    algorithm x Matern 5/2 on the scaled log2 segment size and fan-out), plus a part of the
//    configuration effect private to each comm size, over a linear trend in log2 P per
//    message size whose slope is uncertain (cluster_gp.h). A configuration is encoded in its
//    canonical form at each comm size (a chain fan-out is clamped to P - 1), so the same tree shape
//    is the same point. Hyper-parameters: MAP (L-BFGS-B) on at most max_fit_rows rows, refitted
//    when the rows grew by refit_growth since the last fit, warm-started from the last fit.
//  - Initial design: a Latin hypercube over the configurations of the largest size (one per
//    algorithm, chain fan-out extremes covered, latin_hypercube.h), each point assigned a comm
//    size by a Latin hypercube over the sizes' log2 order; plus the default at the smallest,
//    middle and largest size (the model needs the default's trend in P for its confidence).
//    Under a node-second budget the design must fit design_budget_fraction of it at the
//    planned prices (no run yet): with per-configuration prices, the size's price scaled by
//    the analytic cost model's ratio of the configuration to the size's median configuration
//    (algorithm_cost_model.h, typical machine coefficients), else the size's price the caller
//    gave (without one, the strategy's estimate has no unit and the design is not fitted); the
//    dearest point moves to the next smaller size where its configuration exists, or is
//    dropped when it cannot; stop_reason() and state() say so. The design then runs cheapest
//    first; once runs were observed, each remaining point is priced by the pricing surrogate
//    (below) and skipped when spent + pending + its price would pass the design's share (said
//    too): a linear reduce drawn at the largest size is neither planned nor run blind.
//    A campaign never spends its whole budget on the design.
//  - Acquisition (cost-aware): a candidate (c, P) is worth
//        sum over sizes P' of corr(P, P')^2 x sum over message sizes s of EI(c, P', s)
//    divided by cost(c, P)^alpha: the expected improvement it has where it is run plus where
//    it informs (corr = the fitted comm-size kernel), per unit cost ("EI per second", Snoek et
//    al. 2012). cost(c, P) = the run's predicted node-seconds, when calls_per_run is given:
//    (overhead(P) + sum over s of calls(s) x exp(mu + min(var, 1)/2)) x nodes(P), with mu and
//    var the posterior at (c, P, s) of the pricing surrogate: the same GP (same hyper-
//    parameters, observed runs) with the log of the analytic cost model's latency of (c, P, s)
//    in its prior mean (ClusterRow::offset; machine coefficients fitted to the observed runs,
//    then a factor per algorithm calibrated on its runs, calibration()),
//    so that a configuration's price scales in P as the cost model says from where it and its
//    neighbours were observed; overhead(P) = the median over the observed runs at P (else at
//    any size) of observed seconds - calls x measured latencies. Without calls_per_run, or
//    for a collective the cost model does not cover, the search's own surrogate prices
//    (cost_model_prices false: the same, the older pricing); without calls_per_run the size's
//    price (ClusterSize::run_cost or comm_size x log2 comm_size, in node-seconds once runs
//    reported their seconds: timed_run_price, optimizer/run_prices.h). alpha falls from 1 to
//    0 as the budget (evaluations or node-seconds, whichever is further spent) is used
//    ("EI-cool", Lee et al. 2020): plain EI per unit cost starves the expensive sizes, a run
//    at the smallest size being always far cheaper. EI is in log-latency units against the
//    lowest posterior mean at (P', s) over the configurations of that size. Evaluated,
//    pending and failed pairs are never suggested again. Under a node-second budget, the best
//    candidate whose price fits what is left of it (spent + pending prices) is picked; none
//    fits = stop ("budget: node-seconds"). A pick after a batch's first joins it only when the
//    batch fits at its prices times what runs cost over their prices (batch_price_quantile),
//    and at a size never run only as the batch's one run there unless the batch's runs at
//    such sizes fit what is left at blind_price_factor times their prices; else the batch ends.
//  - Budget accounting: spent = sum over the observed runs of Evaluation::seconds x nodes(P)
//    (the size's price for a run reporting 0 seconds); a pending run counts at the price it
//    had when it was picked (the size's price for design runs, made before any model). With a
//    reserve (ClusterStrategyOptions::reserve), the budget the search may spend is
//    budget_node_seconds less what the reserve holds back for the strategy as it stands
//    (search_budget()), judged when a batch is asked for.
//  - Batches: Kriging believer (each pick is added as a fantasy at its posterior mean). While
//    nothing usable has been observed yet (the whole design pending), random pairs: an empty
//    answer means "nothing more to ask".
//  - Stop: the budgets (evaluations, 150 by default; node-seconds) or, after the design, when
//    no candidate has an EI above max(ei_floor, ei_noise_fraction x noise sd) at any (comm
//    size, message size): the model expects no improvement above the noise anywhere ("ei").
//  - The default is Open MPI's fixed decision, one algorithm per (P, message size)
//    (SearchSpace::default_alias, core/fixed_decision.h): with default_alias (the default
//    setting), the acquisition reads, at a size P where the default was run, the row of each
//    alias a not run at P itself conditioned on the default's runs at the message sizes where
//    the default runs a (its other message sizes move through the message-size kernel). So
//    a configuration the default already ran there is not run again for those sizes, and one
//    the default showed fast at some sizes is tried at the neighbouring ones. recommend()
//    ranks with those posterior means but computes the confidence with the model's own
//    variances: carried across an algorithm's cliff (Rabenseifner below P x 4 bytes on the
//    sim) the conditioned variances made a predicted pick 200x off confident. The fitted
//    model itself keeps the default as a row of its own.
//  - recommend(P): at every message size the configuration with the lowest posterior mean
//    among P's configurations that were run at some size (and the default). measured = that
//    configuration was run at P. Confidence = P(config faster than the default) under the
//    posterior (independent marginals; 1 for a measured pick whose runs' median beats the
//    default's measured median at P; 0.5 when the pick is the default itself). A predicted
//    pick below min_confidence falls back to the default and keeps the confidence the
//    rejected pick had, so a reader sees how close it came.
//
// Settings (ClusterStrategyOptions::settings, all optional): initial_points (int, 0 = auto),
// design_defaults (true), ei_noise_fraction (0.3), ei_floor (0.002), refit_growth (1.25),
// max_fit_rows (60), design_budget_fraction (1/3), batch_price_quantile (0.9, 0 or in (0, 1]),
// blind_price_factor (3, >= 1), default_alias (true), cost_model_prices
// (true), calibrate_algorithms (true), cost_model_mean (false: the cost model in the search's
// own surrogate too; tried, not kept, docs/whole-cluster.md), cost_model_nodes (true: the cost
// model's node level in the prices, docs/whole-cluster.md "The node level"), cost_model_memory
// (false: and its node memory; measured, not kept).
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <set>

#include "optimizer/algorithm_cost_model.h"
#include "optimizer/cluster_gp.h"
#include "optimizer/cluster_strategy.h"
#include "optimizer/run_prices.h"
#include "optimizer/search_space.h"

namespace colltune {

struct ClusterBayesSettings {
  int initial_points = 0;
  bool design_defaults = true;
  double ei_noise_fraction = 0.3;
  double ei_floor = 0.002;
  double refit_growth = 1.25;
  int max_fit_rows = 60;
  double design_budget_fraction = 1.0 / 3;  // share of budget_node_seconds the design may use
  // Under a node-second budget, a run joins a batch beside others only when the batch fits what
  // is left with every price multiplied by this quantile of what the runs so far cost over
  // their prices when picked (at least 1), and at a size never run only as its batch's one run
  // there (but see blind_price_factor); the first run of a batch needs its price to fit. 0 =
  // the prices alone, any number of runs at a size never run (before 2026-11-28).
  double batch_price_quantile = 0.9;
  // A size never run takes more than one run of a batch while the batch's runs at sizes never
  // run, at this many times their prices, fit what is left of the budget: a price there is an
  // extrapolation, 1.9-3.6x under at 1024 simulated ranks from one run at 2 (a large number =
  // always one run there, as on 2026-11-27 evening; 1 = the prices trusted).
  double blind_price_factor = 3;
  // Price runs with the analytic cost model (algorithm_cost_model.h) as the prior mean of the
  // pricing surrogate, and plan the design at its prices; false = the older pricing (the
  // surrogate alone, the design at the sizes' prices), kept as an ablation.
  bool cost_model_prices = true;
  // The cost model in the prior means with a factor per algorithm fitted to its runs
  // (calibration()); false = the machine coefficients alone, kept as an ablation.
  bool calibrate_algorithms = true;
  // The search's own surrogate (EI, picks, confidence) with the cost model in its prior mean
  // too (for the collectives it covers; with or without per-configuration prices).
  bool cost_model_mean = false;
  // The cost model with its node level at sizes that span several nodes (ClusterSize::nodes,
  // ::ppn; ranks in order on the nodes): what crosses a node and shares its NIC costs more. It
  // describes the simulated and recorded landscapes better (docs/whole-cluster.md "The node
  // level"); false = one level everywhere.
  bool cost_model_nodes = true;
  // With cost_model_nodes, the cost model's node memory too (its shared_bytes, on one node as
  // on several): what a node's ranks copy at once shares its memory. It prices recursive
  // doubling at the top of the simulators right, but the campaigns do not gain and one
  // overran its total budget (docs/whole-cluster.md "The node's memory"): off, kept to measure.
  bool cost_model_memory = false;
  bool default_alias = true;  // the default's runs at P are runs of its alias (Open MPI's decision)

  static ClusterBayesSettings from_json(const nlohmann::json& j);  // throws on unknown keys
};

class ClusterBayesStrategy : public ClusterStrategy {
 public:
  ClusterBayesStrategy(Collective collective, const AlgorithmTable& table,
                       const ClusterStrategyOptions& options);

  std::string name() const override { return "bo-cluster"; }
  std::vector<ClusterSuggestion> suggest(int max_count) override;
  void observe(int comm_size, const Evaluation& evaluation) override;
  bool done() const override;
  int max_evaluations() const override { return max_evaluations_; }
  // "budget: N runs", "budget: node-seconds", "ei" or "space exhausted", followed by the
  // design note when there is one.
  std::string stop_reason() const override {
    const std::string note = design_note();
    return stop_reason_.empty() || note.empty() ? stop_reason_ : stop_reason_ + "; " + note;
  }
  // Empty, or how the initial design was shrunk to fit the node-second budget (and cut short
  // when its observed runs reached design_budget_fraction of it).
  std::string design_note() const;
  double node_seconds_left() const override;
  std::vector<TuningConfig> finalists(int comm_size, int per_size) const override;
  std::vector<ClusterChoice> recommend(const std::vector<int>& comm_sizes,
                                       double min_confidence) const override;
  VersusDefault versus_default(int comm_size, const std::set<TuningConfig>& configs) const override;
  nlohmann::json state() const override;
  void restore(const nlohmann::json& state) override;
  double run_price(int comm_size, const TuningConfig& config) const override {
    return price(comm_size, config);
  }
  // The pricing surrogate's price over the message sizes min_size..max_size (one launch); the
  // whole run's price when runs are not priced per configuration or nothing was observed yet.
  double span_price(int comm_size, const TuningConfig& config, std::int64_t min_size,
                    std::int64_t max_size) const override;

  // Introspection for benchmarks.
  int evaluations() const { return static_cast<int>(evaluations_.size()); }
  bool design_done() const { return design_next_ >= design_.size(); }  // every point sent or cut
  // Node-seconds spent: observed seconds x nodes per run (size_price() for runs reporting 0).
  double node_seconds() const;
  // A size's relative cost: ClusterSize::run_cost, else comm_size x log2 comm_size (no unit).
  double run_cost(int comm_size) const;
  // A run's node-seconds at `comm_size` from its relative cost and what the observed runs that
  // reported their seconds cost (timed_run_price): what a run costs where runs are not priced
  // per configuration, or before the cost model can price one.
  double size_price(int comm_size) const;
  // The price one run of `config` at `comm_size` would be charged before it runs (node-seconds):
  // the planned price before any run, then the pricing surrogate's (docs/whole-cluster.md).
  double price(int comm_size, const TuningConfig& config) const;
  std::optional<Eigen::VectorXd> hyperparameters() const { return theta_; }
  // The posterior the acquisition reads for `configs` at `comm_size` (rows; columns = the
  // message sizes, log latency): the model's (refitted when the observations outgrew the last
  // fit), with the default's aliases tied in. False when nothing was observed yet.
  bool search_posterior(int comm_size, const std::vector<TuningConfig>& configs,
                        Eigen::MatrixXd* mean, Eigen::MatrixXd* var) const;

 private:
  struct Observed {
    int comm_size = 0;
    Evaluation evaluation;
    // The node-seconds it was priced at when picked, when that price was in seconds (a run
    // was observed with its seconds before); 0 = unknown (not picked here, or no unit yet).
    double priced = 0;
  };
  // Per comm size, the observed runs that reported their seconds.
  std::map<int, TimedRuns> timed_runs() const;
  // size_price() with the timed runs already gathered (`timed`: timed_runs()).
  double size_price(int comm_size, const std::map<int, TimedRuns>& timed) const;
  using Pair = std::pair<int, TuningConfig>;  // (comm size, canonical configuration)

  const SearchSpace& space_at(int comm_size) const;  // cached, any size >= 2
  int nodes_of(int comm_size) const;                 // ClusterSize::nodes, at least 1
  // The cost model's ranks per node at a size: ClusterSize::ppn, or the ranks spread evenly
  // over its nodes; on one node the size itself with cost_model_memory (its memory shared),
  // else 0 (one level), as with cost_model_nodes off.
  int ranks_per_node(int comm_size) const;
  // The cost model's terms at a size (ranks_per_node()), without the node memory's when
  // cost_model_memory is off.
  std::optional<CostTerms> cost_terms(const TuningConfig& config, int comm_size,
                                      std::int64_t msg_size) const;
  // The model row of a configuration at a size; with `offset`, its prior mean carries the log of
  // the cost model's latency at every message size (machine coefficients fitted to the runs).
  ClusterRow row(int comm_size, const TuningConfig& config, bool offset = false) const;
  std::vector<ClusterRow> rows_for(const ClusterGp& gp, const std::vector<Pair>& pairs) const;
  // True when the cost model covers the collective and per-configuration prices are on.
  bool cost_model_on() const;
  // Machine coefficients of the cost model fitted to every complete observed run (the typical
  // ones before any); cached per number of observations.
  const MachineCoefficients& machine() const;
  // Per algorithm, what machine() still misses (AlgorithmCalibration): the offsets (row())
  // are the cost model's log latency plus this log factor, so the pricing surrogate falls
  // back, far from an algorithm's runs, to the model as calibrated on that algorithm's runs,
  // not to the shared coefficients alone. Cached per number of observations.
  const AlgorithmCalibration& calibration() const;
  // Seconds of one run of `config` at `comm_size` by the cost model alone: calls x modelled
  // latency summed over the message sizes (no launch overhead).
  double modelled_run_seconds(int comm_size, const TuningConfig& config,
                              const MachineCoefficients& machine) const;
  // The price of a design point before any run, with the typical machine coefficients: the
  // size's price scaled by the cost model's ratio of this configuration to the size's median
  // configuration (or, with no size price given, the cost model's seconds x nodes); the size's
  // price when the cost model is off.
  double planned_price(int comm_size, const TuningConfig& config) const;
  void make_design();
  // Moves the dearest design points to smaller sizes (drops those that cannot move) until the
  // design's price fits design_budget_fraction of the node-second budget; `taken` = the pairs
  // of the design.
  void fit_design_to_budget(std::set<Pair>& taken);
  // The model on everything observed plus `fantasies` (rows at their posterior mean), with
  // `theta` (default: the last fitted hyper-parameters, else the prior means).
  // `offsets`: rows carry the cost model (the pricing surrogate, or every surrogate with
  // cost_model_mean).
  std::optional<ClusterGp> model(const std::vector<Pair>& fantasies,
                                 const std::vector<Eigen::VectorXd>& fantasy_values,
                                 const Eigen::VectorXd* theta = nullptr) const;
  std::optional<ClusterGp> model(const std::vector<Pair>& fantasies,
                                 const std::vector<Eigen::VectorXd>& fantasy_values,
                                 const Eigen::VectorXd* theta, bool offsets) const;
  // The surrogate that prices runs: with the cost model in its prior mean when cost_model_on().
  std::optional<ClusterGp> pricing_model() const;
  // MAP hyper-parameters on everything observed, warm-started from the last fit, when there is
  // no fit yet or the rows grew by refit_growth since it; nullopt otherwise (or < 3 rows).
  // `rows` receives the number of rows the fit saw.
  // Fitted once per model_state(): recommend() and search_posterior() ask on every call (the
  // final phases once per comm size, after a search that ended on its budget and so never
  // refitted its last runs; under a node-second budget the reserve too, per comm size).
  std::optional<Eigen::VectorXd> stale_fit(int* rows) const;
  std::optional<Eigen::VectorXd> fit_if_stale(int* rows) const;  // stale_fit() without its cache
  void maybe_refit();
  // What recommend() and versus_default() read at one comm size: the runs there (per
  // configuration, per message size), the configurations that may be picked there (run
  // somewhere, not failed there, and the default) and, with a model, their posterior (rows of
  // mean / var, log latency; the default's aliases tied to its runs for the means).
  struct SizePosterior {
    std::map<TuningConfig, std::vector<std::vector<double>>> runs;
    std::vector<TuningConfig> configs;
    Eigen::MatrixXd mean, var;
    int def = 0;  // the default's row (configs.size() when it is not a candidate)
    // The median of the runs of `c` at message size `s` there (NaN: none).
    double measured_median(const TuningConfig& c, int s) const;
    // Configuration `i` against the default at message size `s`, as recommend() reports a pick
    // (a model is needed; comm_size and msg_size left for the caller).
    ClusterChoice versus_default(int i, int s) const;
  };
  // `gp`: the model (nullptr: none, no posterior).
  SizePosterior size_posterior(const ClusterGp* gp, int comm_size) const;
  // Acquisition over every candidate pair of the campaign's sizes; best first.
  struct Scored {
    Pair pair;
    double value = 0;   // per unit cost
    double max_ei = 0;  // largest EI over the message sizes at its own size (log units)
    double price = 0;   // predicted node-seconds of the run
  };
  // `pricing` prices the candidates (nullptr: `gp` itself).
  std::vector<Scored> acquisition(const ClusterGp& gp, const ClusterGp* pricing,
                                  const std::set<Pair>& excluded) const;
  // The stop reason when the budget is spent: "budget: N runs" when the runs reached the cap,
  // else "budget: node-seconds".
  std::string budget_reason() const;
  // The runs made and pending have reached max_evaluations_.
  // What the search may spend: budget_node_seconds less the reserve
  // (ClusterStrategyOptions::reserve of this strategy as it stands).
  double search_budget() const;
  bool run_cap_reached() const;
  bool budget_spent() const;
  // Predicted node-seconds of running each pair (rows of mean / var = its posterior at every
  // message size); the size's price when calls_per_run does not cover the message sizes.
  // With `span`, only the message sizes in it are counted (the launch overhead in full).
  std::vector<double> prices(
      const std::vector<Pair>& pairs, const Eigen::MatrixXd& mean, const Eigen::MatrixXd& var,
      std::optional<std::pair<std::int64_t, std::int64_t>> span = std::nullopt) const;
  double pending_node_seconds() const;  // sum of the pending runs' prices
  // What runs cost over their prices when picked: the batch_price_quantile of that ratio over
  // the observed runs priced in seconds, at least 1 (1 when there are none).
  double batch_price_factor() const;
  std::set<int> timed_sizes() const;  // the comm sizes of timed_runs()
  // Mean log latency per message size over the complete runs of `config` at `comm_size`;
  // returns the number of runs (0: none, `mean_log` untouched).
  int cell_means(int comm_size, const TuningConfig& config, Eigen::VectorXd* mean_log) const;
  // Ties the default's aliases to its runs at `comm_size` (default_alias, header comment): rows
  // [offset, offset + configs.size()) of mean / var are `configs` at that size, as predicted
  // by `gp`; the rows of the aliases not run at that size are conditioned.
  void tie_default_alias(const ClusterGp& gp, int comm_size,
                         const std::vector<TuningConfig>& configs, int offset,
                         Eigen::MatrixXd& mean, Eigen::MatrixXd& var) const;
  // True when options_.calls_per_run covers every message size (per-configuration prices).
  bool prices_configurations() const;
  // Per comm size: the median over its observed runs of seconds - sum of calls x measured
  // latency (the launch and set-up time of a run); sizes without one get the median over all.
  std::map<int, double> launch_overheads() const;

  Collective collective_;
  const AlgorithmTable* table_;
  ClusterStrategyOptions options_;
  ClusterBayesSettings settings_;
  std::vector<int> algorithms_;  // union of algorithm ids over the sizes (category order)
  std::optional<ConfigEncoder> encoder_;
  std::optional<SearchSpace> largest_;
  mutable std::map<int, std::unique_ptr<SearchSpace>> spaces_;
  // What the model derived from the observations depends on: (observations, rows of the last
  // hyper-parameter fit). reserve_, span_pricing_ and stale_fit_ hold while it is unchanged
  // (restore resets them).
  using ModelState = std::pair<std::size_t, int>;
  ModelState model_state() const { return {evaluations_.size(), fitted_rows_}; }
  // The cost model fitted to the observed runs: machine coefficients, then what they miss
  // per algorithm; cached with the number of observations it was fitted to (reset by restore).
  struct CostFit {
    MachineCoefficients machine;
    AlgorithmCalibration calibration;
  };
  const CostFit& cost_fit() const;
  mutable std::optional<std::pair<std::size_t, CostFit>> cost_fit_;
  // search_budget()'s reserve, with the (observations, fitted rows) it was priced at (reset by
  // restore).
  mutable std::optional<std::pair<ModelState, double>> reserve_;
  // pricing_model() for price() and span_price(), with the (observations, fitted rows) it was
  // built at (reset by restore).
  mutable std::optional<std::pair<ModelState, std::optional<ClusterGp>>> span_pricing_;
  // stale_fit()'s answer (rows the fit saw, the fit or none), with the (observations, fitted
  // rows) it was computed at (reset by restore).
  mutable std::optional<std::pair<ModelState, std::pair<int, std::optional<Eigen::VectorXd>>>>
      stale_fit_;
  std::map<int, double> median_model_seconds_;  // per size, over its configurations (design)
  int max_evaluations_ = 150;

  std::vector<ClusterSuggestion> design_;
  std::size_t design_next_ = 0;
  std::vector<Observed> evaluations_;
  std::multimap<Pair, double> pending_;  // runs handed out, with their node-second price
  std::optional<Eigen::VectorXd> theta_;
  int fitted_rows_ = 0;
  bool stopped_ = false;
  std::string stop_reason_;
  std::string design_note_;
  int design_cut_ = 0;  // design runs never handed out: the observed design reached its share
};

}  // namespace colltune
