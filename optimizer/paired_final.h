// The plan of the paired final phase (docs/final-choice.md), shared by the campaign engine,
// which runs it on a backend, and the optimizer benchmarks, which draw it from a landscape:
// which candidate each message size tests against Open MPI's default, how many runs the phase
// may spend, and which candidates are still undecided after a look. Pure code.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/tuning_config.h"
#include "optimizer/cluster_strategy.h"
#include "optimizer/paired_test.h"
#include "optimizer/search_space.h"
#include "optimizer/strategy.h"

namespace colltune {

// Latencies the search measured, per message size, per configuration (runs that ended ok).
using SearchLatencies = std::map<std::int64_t, std::map<TuningConfig, std::vector<double>>>;

// One nominee per message size, so that no size tests several: the strategy's pick there
// (`picks`) when it is one of `finalists` (the configurations the median method's final phase
// would re-measure, e.g. bo's finalist cover), else the finalist with the lowest search median
// there when that beats the default's search median. Never the default, nor the configuration
// Open MPI's fixed decision runs at that size (`space.default_alias`: the default itself).
// Then, with a model (`model`: the strategy's comparisons of the finalists with the default,
// Strategy::versus_default; empty = none), at each message size below the largest one a
// nominee is nominated at where none is: the nominee the model expects to gain the most over
// the default there (expected_gain), when it expects more than kExtendGain. The pick there is
// mostly the default or its alias, but the model may be unsure of that: at 4-16 B on 576 ranks of
// pise, recursive doubling was nominated only from 32 B up while the default ran an algorithm
// up to 46 % slower below (bench/README.md, "Nominees where the default is the pick"). Its
// runs measure those sizes anyway at little cost (a run's time is in its largest sizes; a
// look's span grows only downwards), so the look tests it there too. These sizes ride on the
// nominee's looks (`riders`, when given, receives them): they never keep it open
// (open_nominees), since there the model expects it to tie the default, and a tie is never
// decided.
// Sizes without a nominee are absent: the default stands there.
inline constexpr double kExtendGain = 0.01;
std::map<std::int64_t, TuningConfig> final_nominees(const std::vector<Choice>& picks,
                                                    const std::vector<TuningConfig>& finalists,
                                                    const SearchLatencies& search,
                                                    const SearchSpace& space,
                                                    const VersusDefault& model = {},
                                                    std::set<std::int64_t>* riders = nullptr);

// What a look at `pick` is expected to find over the default: E[max(0, default / pick - 1)],
// the log gain taken as normal with sd Choice::gain_sd (exp(mu + sd^2 / 2) Phi((mu + sd^2) /
// sd) - Phi(mu / sd), mu the log of the estimates' ratio); max(0, default / pick - 1) where
// the sd is 0; 0 without both estimates.
double expected_gain(const Choice& pick);

// The cap on the phase's runs: never more than the runs the search knew (`search_runs`, a warm
// start's reused runs included), nor than the median method's final phase made
// (`final_repeats` runs of the default and of each of the `nominees` distinct nominees); but
// never less than one look of two rounds (A/B then B/A) of the default and every nominee:
// fewer pairs cannot prove anything (a whole-cluster search may have run a comm size only
// once or twice).
int final_run_cap(int search_runs, int final_repeats, int nominees);

// The runs of a first look: two rounds (A B, then B A) of the default and each of `nominees`
// nominees, the fewest that can prove anything (final_run_cap's floor).
int first_look_runs(int nominees);

// A node-second budget over a whole campaign (whole-cluster: cluster.total_node_seconds,
// docs/whole-cluster.md): the search holds back the first looks of its nominees
// (first_look_reserve); when it ends, the first looks of all sizes are planned together
// (plan_first_looks), and each size's final phase runs its planned first look, then further
// looks while they fit beside the planned first looks of the sizes still to come.

// The node-seconds one run of `config` at a size costs over the message sizes from `min_size`
// to `max_size` (what a look measures: look_size_span).
using SpanPrice =
    std::function<double(const TuningConfig& config, std::int64_t min_size, std::int64_t max_size)>;

// The node-seconds of a look of `rounds` rounds testing `tested` (with the default), each run
// at its configuration's price over the span of the message sizes they are nominated at; 0
// when nothing is tested.
double look_cost(int rounds, const std::set<TuningConfig>& tested,
                 const std::map<std::int64_t, TuningConfig>& nominated, const SpanPrice& price);

// One size's first look to plan: its run price, its nominees (message size -> nominee) and
// what testing each is worth (first_look_values); and what a run is expected to cost when it
// runs (`expected_price`; empty = run_price), which the final phase checks each look against
// (FinalLookBudget), so that a look dearer than planned cannot take the money of the planned
// first looks still to come.
struct FirstLookCandidate {
  SpanPrice run_price;
  std::map<std::int64_t, TuningConfig> nominated;
  std::map<TuningConfig, double> values;
  SpanPrice expected_price;
};

// One size's first look as a whole-cluster strategy stands now: its nominees (final_nominees
// over the strategy's ungated picks at `comm_size` and its final candidates there with the
// model's comparisons of them, cluster_finalists with `per_size`, the sizes they ride on
// included; `latencies`: what its search measured there; `space`: that size's search space),
// their values (first_look_values, the sizes they ride on not counted), each
// run priced as a whole run of the default at the strategy's price (a look measures its
// nominees' span only; the money whole-run prices leave pays for second looks, measured in
// bench/README.md "A budget for the whole campaign"); each run expected to cost the strategy's
// price of its configuration over the span its look measures (span_price). The campaign and
// the benchmarks plan the first looks from these, and the search's reserve is their cost
// (first_look_reserve). The prices ask `strategy`, which must outlive the candidate.
FirstLookCandidate cluster_first_look(const ClusterStrategy& strategy, int comm_size, int per_size,
                                      const SearchLatencies& latencies, const SearchSpace& space);

// What a search under a budget for a whole campaign holds back for the first looks that follow
// it (ClusterStrategyOptions::reserve), the strategy as it stands: the sum, over the sizes of
// `comm_sizes` it has measured (`latencies(p)`: what its search measured at p, empty = not
// measured), of the first look of all the nominees there (cluster_first_look), or, when that
// costs more than `money` (what the campaign has not spent yet), of its most valuable nominees
// that `money` pays for, as plan_first_looks would take them. Each run of a look is held back
// at the strategy's price of a run of the default over the message sizes the look measures
// (span_price), not at the plan's whole run: held back at whole runs, the looks kept back
// money the final phases could not spend (a look measures its nominees' span only, and a
// size's looks are capped by the runs its search made there): in 31 of 80 simulated campaigns
// 11-47 % of the total was never spent (bench/README.md, "The search's reserve at what a look
// costs"). A look dearer than everything
// left would never run, and held back whole it stopped a search at 15 % of its budget
// (bench/README.md, "The search's reserve holds back only looks that can run"). A size not
// measured yet holds nothing: its prices would be extrapolated from other sizes, and after a
// first batch at the small sizes they were 3.4x too high at the largest (bench/README.md, "The
// search's reserve follows its nominees"), which ended a search after 1 % of its budget. The
// plan at the search's end prices every look with what the search learnt by then.
double first_look_reserve(const ClusterStrategy& strategy, const std::vector<int>& comm_sizes,
                          int per_size,
                          const std::function<SearchLatencies(int comm_size)>& latencies,
                          Collective collective, const AlgorithmTable& table, double money);

// What testing each nominee of one size is worth: the sum, over the message sizes it is
// nominated at, of the gain a look is expected to find there (expected_gain of the pick there,
// `picks`: the strategy's estimates), plus 0.001 per message size, so that among equal
// predictions more cells count more. Where the strategy is sure (gain_sd 0) the gain is
// default / pick - 1, what keeping the default costs if the pick is right; where it is unsure,
// the expectation above zero: the value of what the look would learn, since a look that finds
// no gain leaves the default. The sizes a nominee rides on (final_nominees) are not counted:
// valued, they measured no better (bench/README.md, "Nominees where the default is the pick"). With
// the predicted gain alone, an uncertain nominee at the largest size, predicted close to the
// default, was worth almost nothing and its look was left out of the plan (pise allreduce at 576
// ranks: no look in 10 of 20 campaigns, 33 % regret there; bench/README.md "What a look is worth").
std::map<TuningConfig, double> first_look_values(
    const std::map<std::int64_t, TuningConfig>& nominated, const std::vector<Choice>& picks);

// The nominees each size's first look tests when `money` node-seconds must pay for them all:
// every one when all fit; else those worth the most within the money, each size's look testing
// its most valuable nominees first (a knapsack over the sizes, each look priced by look_cost).
// A nominee left out stays untested and the default stands at its message sizes.
std::vector<std::set<TuningConfig>> plan_first_looks(const std::vector<FirstLookCandidate>& sizes,
                                                     double money);

// What a look at one size may spend (`left`: what the campaign has not spent yet, less the
// planned first looks of the sizes still to come), what its runs are expected to cost
// (FirstLookCandidate::expected_price), and the nominees its planned first look tests.
struct FinalLookBudget {
  double left = 0;
  SpanPrice run_price;
  std::set<TuningConfig> planned;
  // A leftover look (leftover_look_budget): every size's phase has run, and what they did not
  // spend pays for the first look of nominees no look tested, past the size's looks and cap.
  bool leftover = false;
};

// The first looks of the sizes' final phases, planned together: what each tests and what it
// costs at its run_price.
struct FirstLookPlan {
  std::vector<std::set<TuningConfig>> tested;
  std::vector<double> cost;
  // The planned first looks of the sizes after `k`.
  double after(std::size_t k) const;
};

// The plan of the first looks of `sizes` (in the order their final phases run) on `money`,
// what the campaign has not spent when the final phases start (plan_first_looks); a resume
// makes the same plan from the same inputs. Planned once: planned again before each size's
// phase, the money a look did not spend went to first looks of later sizes rather than to
// later looks, and it measured worse (bench/README.md, "The search's reserve follows its
// nominees").
FirstLookPlan plan_final_looks(const std::vector<FirstLookCandidate>& sizes, double money);

// The budget of size `k`'s looks under `plan`, with `unspent` node-seconds not spent yet:
// unspent less the planned first looks after it, each run at its expected price.
FinalLookBudget final_look_budget(const FirstLookPlan& plan,
                                  const std::vector<FirstLookCandidate>& sizes, std::size_t k,
                                  double unspent);

// After the final phases of every size under a budget for the whole campaign, the money the
// planned looks did not spend (the plan prices whole runs of the default, and a look measures
// only its nominees' span) pays, in the same order of sizes, for more looks at the sizes a
// nominee of which no look tested (the budget was short when their phase ran: at the largest
// size, first in the order, the looks planned for every smaller size were still held back):
// further looks for their undecided nominees within the size's planned looks and cap on runs,
// and a first look for the nominees no look tested past them (a nominee's first look spends
// none of the alpha its interval is given; the budget bounds it). Measured: bench/README.md,
// "The money the planned looks leave pays for more looks". `unspent`: what the campaign has
// not spent; nothing is held back for other sizes; every nominee of `size` may be tested.
FinalLookBudget leftover_look_budget(const FirstLookCandidate& size, double unspent);

// The `open` nominees with no pair at any size they are nominated for (`intervals`, per
// candidate measured, one per entry of `msg_sizes`): those a leftover look may test.
std::set<TuningConfig> untested_nominees(
    const std::map<std::int64_t, TuningConfig>& nominated,
    const std::vector<std::int64_t>& msg_sizes, const std::set<TuningConfig>& open,
    const std::map<TuningConfig, std::vector<PairedInterval>>& intervals);

// What a look that tests `looked` of the `open` nominees leaves for later, in a size's final
// phase under a campaign's node-second budget. A look within the size's planned looks and cap
// (`leftover_look` false) leaves out what it could not pay for: those stay untested
// (`unaffordable`). A leftover look (leftover_look_budget) marks the nominees it tests as given
// their leftover look (`leftover_looked`: once each, their runs may fail) and leaves the others
// to a leftover look of their own with the money then left: one look of nominees nominated far
// apart measures every message size between them for the default and each of them, so two
// looks can cost less than one (hpc64x128 allreduce at 1024 ranks: 15.0 and 21.6 node-seconds
// apart, 78.3 together; bench/README.md "A leftover look's nominees left out get a look of
// their own"). A leftover look that tests none leaves them all untested.
void record_look(const std::set<TuningConfig>& open, const std::set<TuningConfig>& looked,
                 bool leftover_look, std::set<TuningConfig>* unaffordable,
                 std::set<TuningConfig>* leftover_looked);

// The `open` nominees a look of `rounds` rounds tests under `budget`: on the first look
// (`first`) the planned ones only; of those, all when the look fits, else as many as fit, those
// nominated at the most message sizes first (`nominated`); none when not even one does.
std::set<TuningConfig> affordable_nominees(const std::map<std::int64_t, TuningConfig>& nominated,
                                           const std::set<TuningConfig>& open, int rounds,
                                           const FinalLookBudget& budget, bool first);

// The message sizes a look measures: from the smallest to the largest size an `open` nominee
// is nominated for (nullopt when none is). Outside that span the default stands whatever a run
// says, so a run there only costs: each run used to measure every size, and the largest sizes,
// where the default often stays, dominate a run's time.
std::optional<std::pair<std::int64_t, std::int64_t>> look_size_span(
    const std::map<std::int64_t, TuningConfig>& nominated, const std::set<TuningConfig>& open);

// What the final phase at a comm size a whole-cluster search ran may nominate: the strategy's
// finalists there (configurations run there, best first), then the configurations it ranks
// first there at some message size (its posterior-mean pick, run there or not) that are not
// the default and that it holds at least even odds (kNominateOdds) to beat the default. The
// paired test is their verification, so no confidence gate applies here: the gate
// (cluster.min_confidence) is for the sizes written untested. Gated at it, the model's best
// guesses at the sizes the search could afford only two or three runs at (the largest) were
// never tested, and the default stayed where they were right (bench/README.md, "The final
// phase tests the model's picks, not only its confident ones").
inline constexpr double kNominateOdds = 0.5;
std::vector<TuningConfig> cluster_final_candidates(const ClusterStrategy& strategy, int comm_size,
                                                   int per_size);

// The final candidates at `comm_size` (cluster_final_candidates) with the strategy's
// comparisons of them with the default there (ClusterStrategy::versus_default): what
// final_nominees takes at a comm size a whole-cluster search ran. `picks`: the strategy's
// ungated picks there (recommend({comm_size}, 0)) when the caller has them (null: asked).
struct ClusterFinalists {
  std::vector<TuningConfig> configs;
  VersusDefault model;
};
ClusterFinalists cluster_finalists(const ClusterStrategy& strategy, int comm_size, int per_size,
                                   const std::vector<ClusterChoice>* picks = nullptr);

// The nominees still open after a look: at some size they are nominated for, not one of
// `riders` (final_nominees), their interval (`intervals`, per candidate, one per entry of
// `msg_sizes`) is missing or still_open().
std::set<TuningConfig> open_nominees(
    const std::map<std::int64_t, TuningConfig>& nominated,
    const std::vector<std::int64_t>& msg_sizes,
    const std::map<TuningConfig, std::vector<PairedInterval>>& intervals, double min_gain,
    const std::set<std::int64_t>& riders = {});

}  // namespace colltune
