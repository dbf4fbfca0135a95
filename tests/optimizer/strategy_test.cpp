#include "optimizer/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/rng.h"
#include "optimizer/bayes_strategy.h"

namespace colltune {
namespace {

const AlgorithmTable& table() { return AlgorithmTable::builtin_4_1(); }

std::vector<std::int64_t> sizes() {
  std::vector<std::int64_t> out;
  for (std::int64_t s = 4; s <= (1 << 20); s *= 2) out.push_back(s);
  return out;
}

// A bcast-like landscape: latency grows with size; binomial (6) best for small messages,
// chain (2) with 64 KiB segments and 3 chains best for large ones; small segments are costly.
double truth(const TuningConfig& c, std::int64_t size) {
  double base = 2.0 + size * 1e-3;
  double factor = 1.0 + 0.15 * std::abs(c.algorithm - 5);
  if (c.algorithm == 0) factor = 1.1;
  if (c.algorithm == 6 && size <= 4096) factor = 0.7;
  if (c.algorithm == 2 && size >= 65536) factor = 0.5 + 0.05 * std::abs(c.fanout - 3);
  if (c.segsize > 0) {
    double segments = std::max(1.0, static_cast<double>(size) / c.segsize);
    factor *= 1.0 + 0.02 * segments * (size >= 65536 ? 0.2 : 1.0);
    if (c.algorithm == 2 && size >= 65536)
      factor *= 1.0 + 0.1 * std::abs(std::log2(c.segsize) - 16);
  }
  return base * factor;
}

Evaluation evaluate(const TuningConfig& c, Rng& rng, double cv) {
  Evaluation e;
  e.config = c;
  for (auto s : sizes()) {
    e.msg_sizes.push_back(s);
    double u = rng.uniform() + rng.uniform() + rng.uniform() - 1.5;  // ~N(0, 0.25)
    e.latency_us.push_back(truth(c, s) * std::exp(cv * 2.0 * u));
  }
  return e;
}

StrategyOptions options(std::uint64_t seed) {
  StrategyOptions o;
  o.seed = seed;
  o.msg_sizes = sizes();
  return o;
}

TEST(Factory, KnowsEveryStrategy) {
  SearchSpace space(Collective::bcast, 8, table());
  for (const auto& name : strategy_names())
    EXPECT_EQ(make_strategy(name, space, options(1))->name(), name);
  EXPECT_THROW(make_strategy("nope", space, options(1)), std::invalid_argument);
  StrategyOptions bad = options(1);
  bad.settings = {{"no_such_setting", 1}};
  EXPECT_THROW(make_strategy("bo", space, bad), std::invalid_argument);
}

// Runs `batches` rounds of suggest(4)/observe on the synthetic landscape.
void drive(Strategy& s, Rng& rng, int batches) {
  for (int b = 0; b < batches && !s.done(); ++b)
    for (const auto& c : s.suggest(4)) s.observe(evaluate(c, rng, 0.05));
}

TEST(StrategyState, RestoreGivesIdenticalSuggestions) {
  SearchSpace space(Collective::bcast, 8, table());
  for (const std::string name : {"bo", "bo-per-size", "random", "exhaustive"}) {
    auto a = make_strategy(name, space, options(42));
    Rng rng(1);
    drive(*a, rng, 5);
    // Through text, as the daemon stores it.
    nlohmann::json saved = nlohmann::json::parse(a->state().dump());
    auto b = make_strategy(name, space, options(42));
    b->restore(saved);
    EXPECT_EQ(b->state(), a->state()) << name;
    for (int round = 0; round < 3; ++round) {
      auto sa = a->suggest(4);
      auto sb = b->suggest(4);
      ASSERT_EQ(sa, sb) << name << " round " << round;
      Rng ra(100 + round), rb(100 + round);
      for (const auto& c : sa) a->observe(evaluate(c, ra, 0.05));
      for (const auto& c : sb) b->observe(evaluate(c, rb, 0.05));
    }
    EXPECT_EQ(a->state().dump(), b->state().dump()) << name;
    EXPECT_THROW(make_strategy(name, space, options(43))->restore(saved), std::invalid_argument);
  }
}

TEST(BayesStrategy, NeverRepeatsAConfigurationExceptTheDefaultReplicate) {
  SearchSpace space(Collective::bcast, 8, table());
  auto s = make_strategy("bo", space, options(7));
  Rng rng(2);
  std::map<TuningConfig, int> seen;
  while (!s->done()) {
    auto batch = s->suggest(4);
    if (batch.empty()) break;
    for (const auto& c : batch) {
      ++seen[c];
      EXPECT_TRUE(space.contains(c));
      s->observe(evaluate(c, rng, 0.05));
    }
  }
  for (const auto& [c, n] : seen) EXPECT_EQ(n, c.is_default() ? 2 : 1) << to_string(c);
  EXPECT_LT(seen.size(), space.size() / 2);  // stopped long before exhausting the space
}

TEST(BayesStrategy, FindsTheOptimumPerSizeWithAFractionOfTheSpace) {
  SearchSpace space(Collective::bcast, 8, table());
  BayesStrategy s(space, options(3));
  Rng rng(5);
  int runs = 0;
  while (!s.done()) {
    auto batch = s.suggest(4);
    if (batch.empty()) break;
    for (const auto& c : batch) s.observe(evaluate(c, rng, 0.03)), ++runs;
  }
  // Finalists: each size's pick first, so one per size is a compact set (picks are shared by
  // neighbouring sizes), and a larger per_size only adds configurations tied with the best.
  const auto one = s.finalists(1);
  const auto two = s.finalists(2);
  EXPECT_LE(one.size(), 6u);
  EXPECT_GE(two.size(), one.size());
  for (const auto& c : one) EXPECT_TRUE(std::find(two.begin(), two.end(), c) != two.end());
  for (const auto& c : s.recommend())
    EXPECT_TRUE(std::find(one.begin(), one.end(), c.config) != one.end());
  for (const auto& c : one) s.observe(evaluate(c, rng, 0.03));
  auto choices = s.recommend();
  ASSERT_EQ(choices.size(), sizes().size());
  double regret = 0;
  for (const auto& c : choices) {
    double best = 1e300;
    for (const auto& p : space.points()) best = std::min(best, truth(p, c.msg_size));
    regret += truth(c.config, c.msg_size) / best - 1.0;
  }
  regret /= choices.size();
  EXPECT_LT(regret, 0.05);
  EXPECT_LT(runs, static_cast<int>(space.size()) / 2);
}

TEST(BayesStrategy, FailedConfigurationsAreNotRetried) {
  SearchSpace space(Collective::bcast, 8, table());
  BayesStrategy s(space, options(9));
  Rng rng(4);
  std::set<TuningConfig> failed;
  for (int b = 0; b < 8 && !s.done(); ++b)
    for (const auto& c : s.suggest(4)) {
      Evaluation e = evaluate(c, rng, 0.05);
      if (c.algorithm == 4) {  // split_binary_tree "crashes": no data
        e.failed = true;
        e.latency_us.assign(e.latency_us.size(), std::nan(""));
        failed.insert(c);
      }
      ASSERT_FALSE(failed.count(c) && !e.failed);
      s.observe(e);
    }
  for (const auto& c : s.suggest(4)) EXPECT_FALSE(failed.count(c));
  for (const auto& c : s.recommend()) EXPECT_NE(c.config.algorithm, 4);
}

TEST(BayesStrategy, BatchesAreDistinctAndRespectTheBudget) {
  SearchSpace space(Collective::bcast, 8, table());
  StrategyOptions o = options(11);
  o.budget = 18;
  o.stop_rule = "budget";
  BayesStrategy s(space, o);
  Rng rng(6);
  int runs = 0;
  while (!s.done()) {
    auto batch = s.suggest(4);
    if (batch.empty()) break;
    std::set<TuningConfig> unique(batch.begin(), batch.end());
    EXPECT_EQ(unique.size(), batch.size() - (batch.size() > 1 && batch[0] == batch[1] ? 1 : 0));
    for (const auto& c : batch) s.observe(evaluate(c, rng, 0.05)), ++runs;
  }
  EXPECT_EQ(runs, 18);
}

TEST(PerSizeStrategy, EachSizeLearnsAndNamesItsSizes) {
  SearchSpace space(Collective::gather, 8, table());
  StrategyOptions o = options(5);
  o.msg_sizes = {1024, 65536};
  auto s = make_strategy("bo-per-size", space, o);
  auto batch = s->suggest(4);
  ASSERT_FALSE(batch.empty());
  for (const auto& c : batch) {
    auto wanted = s->msg_sizes_wanted(c);
    EXPECT_FALSE(wanted.empty());
    for (auto w : wanted) EXPECT_TRUE(w == 1024 || w == 65536);
  }
}

}  // namespace
}  // namespace colltune
