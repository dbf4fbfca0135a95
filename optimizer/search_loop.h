// The search loop every campaign runs, whatever measures it: ask the strategy for a batch, have
// the batch measured, feed every evaluation back, until the strategy is done or the runner says
// stop. Then the finalists worth re-measuring. The campaign engine plugs in a runner that records
// each batch as a job in the store and runs it on a backend; the optimizer benchmark plugs in one
// that draws from a recorded landscape. Pure code: the loop itself does no I/O.
//
// The seam for campaigns that span several contexts (one strategy over several comm sizes of a
// collective): a batch item carries the context it measures, so a runner can group items by
// context into backend jobs; a single-context runner ignores it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "core/tuning_config.h"
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
  std::size_t number = 0;  // 1, 2, ... within this loop call
  std::vector<BatchItem> items;
};

// What measures a batch. Contract: run() measures every item once (a runner may add repeats)
// and returns the evaluations in the order the strategy is to observe them; nullopt when it was
// interrupted (the loop then returns at once, observing nothing of that batch).
class BatchRunner {
 public:
  virtual ~BatchRunner() = default;

  // Asked before each batch: false stops the search (e.g. a time budget spent). Default: go on.
  virtual bool keep_searching() { return true; }
  // Asked before each batch too: true ends the loop as interrupted (e.g. Ctrl-C). Default: no.
  virtual bool interrupted() { return false; }

  virtual std::optional<std::vector<Evaluation>> run(const SearchBatch& batch) = 0;

  // After the strategy observed one evaluation (the benchmark follows the recommendation run
  // by run here).
  virtual void observed(const Evaluation& evaluation) { (void)evaluation; }
  // After the strategy observed a whole batch (the engine marks the job done with the
  // strategy's state here).
  virtual void batch_done(const SearchBatch& batch) { (void)batch; }
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

// Runs batches of up to `batch_size` suggestions until the strategy is done, the runner stops
// it, or it is interrupted. Batch numbers start at `first_batch_number`.
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
