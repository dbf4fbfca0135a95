// The search loop every campaign runs, whatever measures it: ask the strategy for a batch, have
// the batch measured, feed every evaluation back, until the strategy is done or the runner says
// stop. Then the finalists worth re-measuring. The campaign engine plugs in a runner that records
// each batch as a job in the store and runs it on a backend; the optimizer benchmark plugs in one
// that draws from a recorded landscape. Pure code: the loop itself does no I/O.
//
// One loop for both kinds of campaign: what it searches with is a Searcher, either a Strategy
// over one context (StrategySearch) or a ClusterStrategy over the comm sizes of a collective
// (ClusterSearch, whole-cluster mode). A batch item carries the context it measures, so a
// runner groups items by context into backend jobs (a single-context runner ignores it), and a
// measurement carries it back to the searcher. Batching, stopping, cancellation, resuming an
// interrupted batch and persistence (through the runner's hooks) therefore have one home.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "core/tuning_config.h"
#include "optimizer/cluster_strategy.h"
#include "optimizer/search_space.h"
#include "optimizer/strategy.h"

namespace colltune {

// One configuration to measure once, and where.
struct BatchItem {
  TuningConfig config;
  // The context (collective, comm size) the item measures, as the runner numbers them; 0 = the
  // loop's only context.
  std::int64_t context = 0;
};

struct SearchBatch {
  std::size_t number = 0;  // 1, 2, ... within this loop call; 0 = a resumed batch
  std::vector<BatchItem> items;
};

// One evaluation and the context it was measured in (BatchItem::context).
struct Measurement {
  std::int64_t context = 0;
  Evaluation evaluation;
};

// What the loop searches with. Contract as Strategy's (strategy.h): suggest() returns items to
// measure (empty = nothing more to ask), observe() takes evaluations in any order, state() is
// what a resume restores.
class Searcher {
 public:
  virtual ~Searcher() = default;
  virtual bool done() const = 0;
  virtual std::vector<BatchItem> suggest(int max_count) = 0;
  virtual void observe(const Measurement& measurement) = 0;
  virtual nlohmann::json state() const = 0;
};

// A Strategy over the loop's only context (items carry `context`; observe ignores it).
class StrategySearch : public Searcher {
 public:
  explicit StrategySearch(Strategy& strategy, std::int64_t context = 0)
      : strategy_(strategy), context_(context) {}
  bool done() const override { return strategy_.done(); }
  std::vector<BatchItem> suggest(int max_count) override;
  void observe(const Measurement& m) override { strategy_.observe(m.evaluation); }
  nlohmann::json state() const override { return strategy_.state(); }

 private:
  Strategy& strategy_;
  std::int64_t context_;
};

// A ClusterStrategy over several contexts, one per comm size: `contexts` numbers them (comm
// size -> the runner's context number). Items come in ascending comm size (suggestion order
// within a size), so a runner that makes one job per context runs the small sizes first.
// suggest() throws std::runtime_error when the strategy names a size not in `contexts`.
class ClusterSearch : public Searcher {
 public:
  ClusterSearch(ClusterStrategy& strategy, std::map<int, std::int64_t> contexts);
  bool done() const override { return strategy_.done(); }
  std::vector<BatchItem> suggest(int max_count) override;
  void observe(const Measurement& m) override;
  nlohmann::json state() const override { return strategy_.state(); }

 private:
  ClusterStrategy& strategy_;
  std::map<int, std::int64_t> context_of_;  // comm size -> context
  std::map<std::int64_t, int> size_of_;     // context -> comm size
};

// What measures a batch. Contract: run() measures every item once (a runner may add repeats)
// and returns the measurements in the order the searcher is to observe them; nullopt when it
// was interrupted (the loop then returns at once, observing nothing of that batch).
class BatchRunner {
 public:
  virtual ~BatchRunner() = default;

  // Asked before each batch: false stops the search (e.g. a time budget spent). Default: go on.
  virtual bool keep_searching() { return true; }
  // Asked before each batch too: true ends the loop as interrupted (e.g. Ctrl-C). Default: no.
  virtual bool interrupted() { return false; }

  // Asked once, before anything else: the measurements of a batch an earlier, interrupted loop
  // recorded but did not finish (the engine's jobs left running by a kill), finished now. They
  // are observed and batch_done() called (with batch number 0) as for a new batch. Empty =
  // nothing to resume (the default); nullopt = interrupted again.
  virtual std::optional<std::vector<Measurement>> resume() { return std::vector<Measurement>{}; }

  virtual std::optional<std::vector<Measurement>> run(const SearchBatch& batch) = 0;

  // After the strategy observed one evaluation (the benchmark follows the recommendation run
  // by run here).
  virtual void observed(const Evaluation& evaluation) { (void)evaluation; }
  // After the strategy observed a whole batch (the engine marks the job done with the
  // strategy's state here).
  virtual void batch_done(const SearchBatch& batch) { (void)batch; }
  // Once, when the search ended without an interruption (the strategy done, nothing more to
  // suggest, or keep_searching() said no): the searcher's state as the search left it. A last
  // suggest() that gave nothing may still have changed it (a model refitted to decide that), and
  // what follows the search reads it; the engine saves it so that a resume continues from it.
  virtual void search_ended(const nlohmann::json& state) { (void)state; }
};

enum class SearchEnd {
  strategy_done,  // done() or nothing more to suggest
  runner_stop,    // keep_searching() said no
  interrupted,    // interrupted() or run() returned nullopt
};

struct SearchLoopResult {
  SearchEnd end = SearchEnd::strategy_done;
  std::size_t batches = 0;
  std::vector<double> decision_seconds;  // time of each suggest() call that gave a batch
};

// Resumes what the runner left unfinished, then runs batches of up to `batch_size` suggestions
// until the searcher is done, the runner stops it, or it is interrupted. Batch numbers start at
// `first_batch_number`.
SearchLoopResult run_search_loop(Searcher& searcher, BatchRunner& runner, int batch_size,
                                 std::size_t first_batch_number = 1);
// The same for one Strategy (StrategySearch).
SearchLoopResult run_search_loop(Strategy& strategy, BatchRunner& runner, int batch_size,
                                 std::size_t first_batch_number = 1);

// The configurations the final phase re-measures: Open MPI's default and the strategy's
// `per_size` finalists. `space` (when given) canonicalises the finalists and includes the
// default only when it is in the space (recorded landscapes may lack it); without it the
// finalists are taken as they are and the default always included (a live campaign can always
// run Open MPI's own decision).
std::set<TuningConfig> final_candidates(const Strategy& strategy, int per_size,
                                        const SearchSpace* space = nullptr);

}  // namespace colltune
