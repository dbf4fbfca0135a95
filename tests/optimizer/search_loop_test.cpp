#include "optimizer/search_loop.h"

#include <gtest/gtest.h>

#include "core/algorithm_table.h"

namespace colltune {
namespace {

std::unique_ptr<Strategy> random_strategy(const SearchSpace& space, int budget) {
  StrategyOptions options;
  options.seed = 5;
  options.budget = budget;
  options.msg_sizes = {4, 8};
  return make_strategy("random", space, options);
}

// Measures each item at a latency that depends on its algorithm only.
class CountingRunner : public BatchRunner {
 public:
  std::optional<std::vector<Measurement>> run(const SearchBatch& batch) override {
    numbers.push_back(batch.number);
    if (interrupt_at && batch.number == *interrupt_at) return std::nullopt;
    std::vector<Measurement> out;
    for (const auto& item : batch.items) {
      EXPECT_EQ(item.context, 0);
      out.push_back({0, {item.config, {4, 8}, {10.0 + item.config.algorithm, 20.0}, false}});
    }
    return out;
  }
  bool keep_searching() override { return !stop_after || numbers.size() < *stop_after; }
  void observed(const Evaluation&) override { ++observed_count; }
  void batch_done(const SearchBatch&) override { ++done_count; }

  std::vector<std::size_t> numbers;
  std::optional<std::size_t> interrupt_at, stop_after;
  int observed_count = 0, done_count = 0;
};

TEST(SearchLoop, RunsBatchesUntilTheStrategyIsDone) {
  SearchSpace space(Collective::bcast, 4, AlgorithmTable::builtin_4_1());
  auto strategy = random_strategy(space, 10);
  CountingRunner runner;
  const SearchLoopResult r = run_search_loop(*strategy, runner, 4, 7);
  EXPECT_EQ(r.end, SearchEnd::strategy_done);
  EXPECT_TRUE(strategy->done());
  EXPECT_EQ(r.batches, 3u);  // 4 + 4 + 2
  EXPECT_EQ(runner.numbers, (std::vector<std::size_t>{7, 8, 9}));
  EXPECT_EQ(runner.observed_count, 10);
  EXPECT_EQ(runner.done_count, 3);
  EXPECT_EQ(strategy->evaluations(), 10);
  EXPECT_EQ(r.decision_seconds.size(), 3u);
}

TEST(SearchLoop, TheRunnerStopsOrInterruptsIt) {
  SearchSpace space(Collective::bcast, 4, AlgorithmTable::builtin_4_1());
  {
    auto strategy = random_strategy(space, 40);
    CountingRunner runner;
    runner.stop_after = 2;
    const SearchLoopResult r = run_search_loop(*strategy, runner, 4);
    EXPECT_EQ(r.end, SearchEnd::runner_stop);
    EXPECT_EQ(r.batches, 2u);
    EXPECT_FALSE(strategy->done());
  }
  {
    auto strategy = random_strategy(space, 40);
    CountingRunner runner;
    runner.interrupt_at = 2;
    const SearchLoopResult r = run_search_loop(*strategy, runner, 4);
    EXPECT_EQ(r.end, SearchEnd::interrupted);
    EXPECT_EQ(r.batches, 1u);
    // Nothing of the interrupted batch was observed.
    EXPECT_EQ(runner.observed_count, 4);
    EXPECT_EQ(runner.done_count, 1);
    EXPECT_EQ(strategy->evaluations(), 4);
  }
}

TEST(SearchLoop, FinalCandidatesAreTheDefaultAndTheFinalists) {
  SearchSpace space(Collective::bcast, 4, AlgorithmTable::builtin_4_1());
  auto strategy = random_strategy(space, 8);
  CountingRunner runner;
  run_search_loop(*strategy, runner, 4);
  const auto candidates = final_candidates(*strategy, 1);
  EXPECT_TRUE(candidates.count(TuningConfig::default_decision()));
  for (const auto& c : strategy->finalists(1)) EXPECT_TRUE(candidates.count(c));
  EXPECT_EQ(final_candidates(*strategy, 1, &space).count(TuningConfig::default_decision()),
            space.contains(TuningConfig::default_decision()) ? 1u : 0u);
}

}  // namespace
}  // namespace colltune
