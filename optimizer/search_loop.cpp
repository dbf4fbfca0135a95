#include "optimizer/search_loop.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace colltune {

std::vector<BatchItem> StrategySearch::suggest(int max_count) {
  std::vector<BatchItem> items;
  for (auto& c : strategy_.suggest(max_count)) items.push_back({std::move(c), context_});
  return items;
}

ClusterSearch::ClusterSearch(ClusterStrategy& strategy, std::map<int, std::int64_t> contexts)
    : strategy_(strategy), context_of_(std::move(contexts)) {
  for (const auto& [size, context] : context_of_) size_of_[context] = size;
}

std::vector<BatchItem> ClusterSearch::suggest(int max_count) {
  auto suggestions = strategy_.suggest(max_count);
  std::stable_sort(suggestions.begin(), suggestions.end(),
                   [](const ClusterSuggestion& a, const ClusterSuggestion& b) {
                     return a.comm_size < b.comm_size;
                   });
  std::vector<BatchItem> items;
  for (const auto& s : suggestions) {
    auto it = context_of_.find(s.comm_size);
    if (it == context_of_.end())
      throw std::runtime_error(strategy_.name() + " suggested P=" + std::to_string(s.comm_size) +
                               ", which is not a size of the campaign");
    items.push_back({s.config, it->second});
  }
  return items;
}

void ClusterSearch::observe(const Measurement& m) {
  auto it = size_of_.find(m.context);
  if (it == size_of_.end())
    throw std::runtime_error("an evaluation of context " + std::to_string(m.context) +
                             ", which is no size of the whole-cluster search");
  strategy_.observe(it->second, m.evaluation);
}

SearchLoopResult run_search_loop(Strategy& strategy, BatchRunner& runner, int batch_size,
                                 std::size_t first_batch_number) {
  StrategySearch searcher(strategy);
  return run_search_loop(searcher, runner, batch_size, first_batch_number);
}

SearchLoopResult run_search_loop(Searcher& searcher, BatchRunner& runner, int batch_size,
                                 std::size_t first_batch_number) {
  SearchLoopResult result;
  auto observe = [&](const std::vector<Measurement>& measurements, const SearchBatch& batch) {
    for (const auto& m : measurements) {
      searcher.observe(m);
      runner.observed(m.evaluation);
    }
    runner.batch_done(batch);
  };
  if (auto resumed = runner.resume(); !resumed) {
    result.end = SearchEnd::interrupted;
    return result;
  } else if (!resumed->empty()) {
    observe(*resumed, SearchBatch{});
  }
  std::size_t number = first_batch_number;
  while (!searcher.done()) {
    if (!runner.keep_searching()) {
      result.end = SearchEnd::runner_stop;
      runner.search_ended(searcher.state());
      return result;
    }
    if (runner.interrupted()) {
      result.end = SearchEnd::interrupted;
      return result;
    }
    const auto start = std::chrono::steady_clock::now();
    SearchBatch batch;
    batch.items = searcher.suggest(batch_size);
    const auto stop = std::chrono::steady_clock::now();
    if (batch.items.empty()) break;
    result.decision_seconds.push_back(std::chrono::duration<double>(stop - start).count());
    batch.number = number++;
    auto measurements = runner.run(batch);
    if (!measurements) {
      result.end = SearchEnd::interrupted;
      return result;
    }
    ++result.batches;
    observe(*measurements, batch);
  }
  result.end = SearchEnd::strategy_done;
  runner.search_ended(searcher.state());
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
