// The plan of the paired final phase (docs/final-choice.md), shared by the campaign engine,
// which runs it on a backend, and the optimizer benchmarks, which draw it from a landscape:
// which candidate each message size tests against Open MPI's default, how many runs the phase
// may spend, and which candidates are still undecided after a look. Pure code.
#pragma once

#include <cstdint>
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
// Sizes without a nominee are absent: the default stands there.
std::map<std::int64_t, TuningConfig> final_nominees(const std::vector<Choice>& picks,
                                                    const std::vector<TuningConfig>& finalists,
                                                    const SearchLatencies& search,
                                                    const SearchSpace& space);

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

// A node-second budget over the whole campaign (whole-cluster: cluster.total_node_seconds,
// docs/whole-cluster.md) holds back, before the search, one first look of `nominees` nominees
// at every listed size, each run priced at that size's `run_prices` entry (node-seconds of one
// run); the search gets the rest.
double final_phase_reserve(const std::vector<double>& run_prices, int nominees);

// What a look at one size may spend under such a budget (`left`) and what one of its runs costs
// (`run_price`, priced as a whole run at this size: a look over fewer message sizes costs
// less).
struct FinalLookBudget {
  double left = 0;
  double run_price = 0;
  bool fits(int rounds, int configs) const;
};

// The budget of a look at one size, the sizes' final phases running one after the other,
// smallest first: what the campaign has not spent yet (`unspent`) less the first looks of the
// sizes after this one (`prices_after`: one run's price at each; `nominees` nominees each).
FinalLookBudget final_look_budget(double unspent, double run_price,
                                  const std::vector<double>& prices_after, int nominees);

// The `open` nominees a look of `rounds` rounds tests under `budget`: all of them when the look
// fits, else as many as fit beside the default, those nominated at the most message sizes
// first (`nominated`); none when not even one does. A nominee left out stays untested and the
// default stands at its sizes.
std::set<TuningConfig> affordable_nominees(const std::map<std::int64_t, TuningConfig>& nominated,
                                           const std::set<TuningConfig>& open, int rounds,
                                           const FinalLookBudget& budget);

// The message sizes a look measures: from the smallest to the largest size an `open` nominee
// is nominated for (nullopt when none is). Outside that span the default stands whatever a run
// says, so a run there only costs: each run used to measure every size, and the largest sizes,
// where the default often stays, dominate a run's time.
std::optional<std::pair<std::int64_t, std::int64_t>> look_size_span(
    const std::map<std::int64_t, TuningConfig>& nominated, const std::set<TuningConfig>& open);

// What the final phase at a comm size a whole-cluster search ran may nominate: the strategy's
// finalists there (configurations run there, best first), then its picks there that are not
// the default and that it is confident (>= min_confidence) beat the default, run there or not.
// The paired test is their verification: a measured size is never served worse than a size
// the model predicts, where such a pick is written untested.
std::vector<TuningConfig> cluster_final_candidates(const ClusterStrategy& strategy, int comm_size,
                                                   int per_size, double min_confidence);

// The nominees still open after a look: at some size they are nominated for, their interval
// (`intervals`, per candidate, one per entry of `msg_sizes`) is missing or still_open().
std::set<TuningConfig> open_nominees(
    const std::map<std::int64_t, TuningConfig>& nominated,
    const std::vector<std::int64_t>& msg_sizes,
    const std::map<TuningConfig, std::vector<PairedInterval>>& intervals, double min_gain);

}  // namespace colltune
