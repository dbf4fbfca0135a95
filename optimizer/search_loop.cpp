#include "optimizer/search_loop.h"

#include <chrono>

namespace colltune {

SearchLoopResult run_search_loop(Strategy& strategy, BatchRunner& runner, int batch_size,
                                 std::size_t first_batch_number) {
  SearchLoopResult result;
  std::size_t number = first_batch_number;
  while (!strategy.done()) {
    if (!runner.keep_searching()) {
      result.end = SearchEnd::runner_stop;
      return result;
    }
    if (runner.interrupted()) {
      result.end = SearchEnd::interrupted;
      return result;
    }
    const auto start = std::chrono::steady_clock::now();
    const std::vector<TuningConfig> configs = strategy.suggest(batch_size);
    const auto stop = std::chrono::steady_clock::now();
    if (configs.empty()) break;
    result.decision_seconds.push_back(std::chrono::duration<double>(stop - start).count());
    SearchBatch batch;
    batch.number = number++;
    for (const auto& c : configs) batch.items.push_back({c, 0});
    auto evaluations = runner.run(batch);
    if (!evaluations) {
      result.end = SearchEnd::interrupted;
      return result;
    }
    ++result.batches;
    for (const auto& e : *evaluations) {
      strategy.observe(e);
      runner.observed(e);
    }
    runner.batch_done(batch);
  }
  result.end = SearchEnd::strategy_done;
  return result;
}

std::set<TuningConfig> final_candidates(const Strategy& strategy, int per_size,
                                        const SearchSpace* space) {
  std::set<TuningConfig> out;
  if (!space || space->contains(TuningConfig::default_decision()))
    out.insert(TuningConfig::default_decision());
  for (const auto& c : strategy.finalists(per_size)) out.insert(space ? space->canonical(c) : c);
  return out;
}

}  // namespace colltune
