#include "optimizer/search_loop.h"

#include <gtest/gtest.h>

#include <string>

#include "core/algorithm_table.h"
#include "optimizer/cluster_strategy.h"

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
  void search_ended(const nlohmann::json& state) override { ended.push_back(state); }

  std::vector<std::size_t> numbers;
  std::optional<std::size_t> interrupt_at, stop_after;
  int observed_count = 0, done_count = 0;
  std::vector<nlohmann::json> ended;  // the states search_ended was given
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
  // Once, with the state the search ended with.
  ASSERT_EQ(runner.ended.size(), 1u);
  EXPECT_EQ(runner.ended.front(), strategy->state());
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
    ASSERT_EQ(runner.ended.size(), 1u);  // a search the runner stopped ended too
    EXPECT_EQ(runner.ended.front(), strategy->state());
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
    EXPECT_TRUE(runner.ended.empty()) << "an interrupted search did not end";
  }
}

// A runner over several contexts with a batch left unfinished by an earlier loop.
class ResumingRunner : public BatchRunner {
 public:
  std::optional<std::vector<Measurement>> resume() override {
    log.push_back("resume");
    return std::vector<Measurement>{{7, {TuningConfig{5, 0, 0}, {1024}, {50.0}, false}}};
  }
  std::optional<std::vector<Measurement>> run(const SearchBatch& batch) override {
    log.push_back("run " + std::to_string(batch.number));
    std::vector<Measurement> out;
    for (const auto& item : batch.items) {
      contexts.push_back(item.context);
      out.push_back({item.context, {item.config, {1024}, {100.0 - item.config.algorithm}, false}});
    }
    return out;
  }
  void batch_done(const SearchBatch& batch) override {
    log.push_back("done " + std::to_string(batch.number));
  }
  std::vector<std::string> log;
  std::vector<std::int64_t> contexts;
};

// The whole-cluster search goes through the same loop: the resumed batch is observed first
// (at the comm size of its context), items carry their context, small sizes first.
TEST(SearchLoop, AClusterStrategySearchesThroughTheSameLoop) {
  ClusterStrategyOptions o;
  o.msg_sizes = {1024};
  o.sizes = {{4, 1, 4, 0}, {16, 1, 16, 0}};
  o.budget = 9;
  auto cluster =
      make_cluster_strategy("nearest", Collective::bcast, AlgorithmTable::builtin_4_1(), o);
  ClusterSearch searcher(*cluster, {{4, 7}, {16, 9}});
  ResumingRunner runner;
  const SearchLoopResult r = run_search_loop(searcher, runner, 4, 3);
  EXPECT_EQ(r.end, SearchEnd::strategy_done);
  ASSERT_GE(runner.log.size(), 4u);
  EXPECT_EQ(runner.log[0], "resume");
  EXPECT_EQ(runner.log[1], "done 0");
  EXPECT_EQ(runner.log[2], "run 3");
  // The resumed run counts: 1 + 8 runs make the budget, the resumed one not asked again.
  EXPECT_EQ(runner.contexts.size(), 8u);
  EXPECT_EQ(cluster->state().at("observations").at("evaluations"), 9) << cluster->state().dump();
  for (std::size_t i = 1; i < 4; ++i)  // the first batch in ascending comm size
    EXPECT_LE(runner.contexts[i - 1], runner.contexts[i]);
  for (auto c : runner.contexts) EXPECT_TRUE(c == 7 || c == 9) << c;
  // An evaluation of a context the search does not cover is refused.
  EXPECT_THROW(searcher.observe({8, {TuningConfig{}, {1024}, {1.0}, false}}), std::runtime_error);
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
