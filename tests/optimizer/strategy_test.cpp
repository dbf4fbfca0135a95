#include "optimizer/strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/fixed_decision.h"
#include "core/rng.h"
#include "optimizer/bayes_strategy.h"
#include "optimizer/latin_hypercube.h"

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
// The default runs what Open MPI's fixed decision runs for bcast on 8 ranks (unsegmented).
double truth(const TuningConfig& c, std::int64_t size) {
  if (c.algorithm == 0)
    return truth(TuningConfig{*fixed_decision_4_1(Collective::bcast, 8, size), 0, 0}, size);
  double base = 2.0 + size * 1e-3;
  double factor = 1.0 + 0.15 * std::abs(c.algorithm - 5);
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
    nlohmann::json other = saved;  // another strategy's state
    other["strategy"] = name == "random" ? "exhaustive" : "random";
    EXPECT_THROW(make_strategy(name, space, options(42))->restore(other), std::invalid_argument);
  }
}

// Runs a strategy to done() on the synthetic landscape; returns how often each configuration
// was suggested.
std::map<TuningConfig, int> run_to_done(Strategy& s, const SearchSpace& space, Rng& rng) {
  std::map<TuningConfig, int> seen;
  while (!s.done()) {
    auto batch = s.suggest(4);
    if (batch.empty()) break;
    for (const auto& c : batch) {
      ++seen[c];
      EXPECT_TRUE(space.contains(c));
      s.observe(evaluate(c, rng, 0.05));
    }
  }
  return seen;
}

TEST(BayesStrategy, NeverRepeatsAConfigurationExceptTheDefaultReplicate) {
  SearchSpace space(Collective::bcast, 8, table());
  // Default (lean design): no configuration twice.
  auto lean = make_strategy("bo", space, options(7));
  Rng rng(2);
  for (const auto& [c, n] : run_to_done(*lean, space, rng)) EXPECT_EQ(n, 1) << to_string(c);
  // The classic design (initial_points set) replicates the default once for the noise model.
  StrategyOptions classic = options(7);
  classic.settings = {{"initial_points", 12}};
  auto s = make_strategy("bo", space, classic);
  auto seen = run_to_done(*s, space, rng);
  for (const auto& [c, n] : seen) EXPECT_EQ(n, c.is_default() ? 2 : 1) << to_string(c);
  EXPECT_LT(seen.size(), space.size() / 2);  // stopped long before exhausting the space
}

// At 256 KiB on 4 ranks Open MPI's fixed decision runs the linear reduction: the default and
// (1, 0, 0) are one code path, and bo gives each the other's runs.
TEST(BayesStrategy, TheDefaultSharesItsRunsWithTheConfigurationItRuns) {
  SearchSpace space(Collective::reduce, 4, table());
  ASSERT_EQ(fixed_decision_4_1(Collective::reduce, 4, 262144), 1);
  auto run = [](const TuningConfig& c, double us) {
    Evaluation e;
    e.config = c;
    e.msg_sizes = {262144};
    e.latency_us = {us};
    return e;
  };
  const TuningConfig linear{1, 0, 0};
  for (bool pool : {true, false}) {
    StrategyOptions o = options(1);
    o.msg_sizes = {262144};
    o.settings = {{"pool_default_alias", pool}};
    BayesStrategy s(space, o);
    s.observe(run(TuningConfig{}, 40));
    s.observe(run(linear, 10));
    const auto picks = s.recommend();
    ASSERT_EQ(picks.size(), 1u);
    if (pool) {  // both are measured at 40 and 10: a tie, which the default wins
      EXPECT_TRUE(picks[0].config.is_default()) << to_string(picks[0].config);
      EXPECT_NEAR(picks[0].latency_us, 20, 1e-9);  // geometric middle of 40 and 10
    } else {
      EXPECT_EQ(picks[0].config, linear);
      EXPECT_NEAR(picks[0].latency_us, 10, 1e-9);
    }
  }
}

// Without an explicit budget bo spends at most budget_fraction of the space (but at least its
// design + 1), and its design measures every algorithm once, and the chain at its smallest
// and largest fan-out, before anything else.
TEST(BayesStrategy, DefaultBudgetIsAFractionOfTheSpace) {
  SearchSpace space(Collective::bcast, 6, table());
  std::set<int> algorithms, chain_fanouts;
  for (const auto& p : space.points()) {
    algorithms.insert(p.algorithm);
    if (p.algorithm == 2) chain_fanouts.insert(p.fanout);
  }
  ASSERT_GT(space.size(), 40u);
  const std::size_t design_size = algorithms.size() + 1;  // + the chain's second shape
  ASSERT_EQ(lean_design_size(space, true), static_cast<int>(design_size));
  for (std::uint64_t seed : {1, 2, 3}) {
    BayesStrategy s(space, options(seed));
    const int cap = std::max(static_cast<int>(space.size()) / 5, static_cast<int>(design_size) + 1);
    EXPECT_EQ(s.evaluation_budget(), cap);
    std::vector<TuningConfig> order;
    Rng rng(seed);
    while (!s.done()) {
      auto batch = s.suggest(4);
      if (batch.empty()) break;
      for (const auto& c : batch) order.push_back(c), s.observe(evaluate(c, rng, 0.05));
    }
    EXPECT_LE(static_cast<int>(order.size()), cap);
    ASSERT_GT(order.size(), design_size);
    std::set<int> design, design_fanouts;
    for (std::size_t i = 0; i < design_size; ++i) {
      design.insert(order[i].algorithm);
      if (order[i].algorithm == 2) design_fanouts.insert(order[i].fanout);
    }
    EXPECT_EQ(design, algorithms) << "seed " << seed;
    const std::set<int> extremes = {*chain_fanouts.begin(), *chain_fanouts.rbegin()};
    EXPECT_EQ(design_fanouts, extremes) << "seed " << seed;
    EXPECT_TRUE(order.front().is_default());
  }
  // An explicit budget or another stop rule turns the fraction off.
  StrategyOptions thesis = options(1);
  thesis.stop_rule = "thesis";
  EXPECT_EQ(BayesStrategy(space, thesis).evaluation_budget(), 150);
  StrategyOptions off = options(1);
  off.settings = {{"budget_fraction", 0}};
  EXPECT_EQ(BayesStrategy(space, off).evaluation_budget(), 150);
  StrategyOptions bad = options(1);
  bad.settings = {{"budget_fraction", 1.5}};
  EXPECT_THROW(BayesStrategy(space, bad), std::invalid_argument);
}

// A small space (algorithm-only, <= small_space points) is one pass in exhaustive's order and
// bo then picks exactly what exhaustive picks from the same runs: never more cost, same regret.
TEST(BayesStrategy, SmallSpaceIsOneExhaustivePass) {
  std::vector<TuningConfig> points;
  for (int a = 0; a <= 9; ++a) points.push_back(TuningConfig{a, 0, a == 2 ? 4 : 0});
  SearchSpace space(Collective::bcast, 16, table(), points);
  ASSERT_LE(space.size(), 12u);
  auto bo = make_strategy("bo", space, options(4));
  auto ex = make_strategy("exhaustive", space, options(4));
  ASSERT_TRUE(dynamic_cast<BayesStrategy&>(*bo).small_space_mode());
  std::vector<TuningConfig> bo_order, ex_order;
  Rng rng(8);
  while (!bo->done()) {
    auto batch = bo->suggest(4);
    auto batch_ex = ex->suggest(4);
    ASSERT_EQ(batch, batch_ex);
    if (batch.empty()) break;
    for (const auto& c : batch) {
      Evaluation e = evaluate(c, rng, 0.2);
      bo->observe(e);
      ex->observe(e);
      bo_order.push_back(c);
    }
  }
  EXPECT_EQ(bo_order, space.points());
  EXPECT_TRUE(ex->done());
  const auto a = bo->recommend(), b = ex->recommend();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].config, b[i].config);
  EXPECT_EQ(bo->finalists(2), ex->finalists(2));
  // Switched off, the same space gets the model-driven search.
  StrategyOptions off = options(4);
  off.settings = {{"small_space", 0}};
  EXPECT_FALSE(BayesStrategy(space, off).small_space_mode());
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
  // Finalists: a cover of the sizes (every size has a contender among them, the default counting
  // as measured), no larger than the distinct picks; a larger per_size only adds to it.
  const auto one = s.finalists(1);
  const auto two = s.finalists(2);
  std::set<TuningConfig> picks;
  for (const auto& c : s.recommend()) picks.insert(c.config);
  picks.erase(TuningConfig{});
  EXPECT_GE(one.size(), 1u);
  EXPECT_LE(one.size(), picks.size());
  EXPECT_GE(two.size(), one.size());
  for (const auto& c : one) EXPECT_TRUE(std::find(two.begin(), two.end(), c) != two.end());
  // Without the cover, finalists(1) is exactly each size's pick.
  StrategyOptions no_cover = options(3);
  no_cover.settings = {{"finalist_cover", false}};
  nlohmann::json state = s.state();
  state["settings"]["finalist_cover"] = false;
  BayesStrategy t(space, no_cover);
  t.restore(state);
  std::set<TuningConfig> all_picks;
  for (const auto& c : t.recommend()) all_picks.insert(c.config);
  const auto uncovered = t.finalists(1);
  EXPECT_EQ(std::set<TuningConfig>(uncovered.begin(), uncovered.end()), all_picks);
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

// A state saved by a version whose model had another number of hyper-parameters (the
// configuration's own effect added one, docs/bo-model.md) restores without them: the strategy
// fits afresh instead of failing on every later suggest().
TEST(BayesStrategy, RestoresAStateWithAnotherHyperParameterCount) {
  SearchSpace space(Collective::bcast, 8, table());
  BayesStrategy s(space, options(7));
  Rng rng(9);
  while (!s.hyperparameters() && !s.done())
    for (const auto& c : s.suggest(4)) s.observe(evaluate(c, rng, 0.05));
  ASSERT_TRUE(s.hyperparameters().has_value());
  ASSERT_FALSE(s.done());
  nlohmann::json state = s.state();
  auto theta = state["theta"].get<std::vector<double>>();
  theta.pop_back();  // the earlier model's vector
  state["theta"] = theta;
  BayesStrategy t(space, options(7));
  t.restore(state);
  EXPECT_FALSE(t.hyperparameters().has_value());
  std::vector<TuningConfig> batch;
  EXPECT_NO_THROW(batch = t.suggest(4));
  EXPECT_FALSE(batch.empty());
  ASSERT_TRUE(t.hyperparameters().has_value());
  EXPECT_EQ(t.hyperparameters()->size(), KroneckerGp::default_theta().size());
  EXPECT_EQ(t.recommend().size(), sizes().size());
}

// A warm start's earlier runs are data for the configurations not measured again; the strategy
// says how many it uses (the engine's final phase counts them with the search's own runs).
TEST(BayesStrategy, SaysHowManyEarlierRunsItUsesAsData) {
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  SearchSpace space(Collective::bcast, 8, table);
  StrategyOptions options;
  options.seed = 3;
  options.msg_sizes = {1024, 65536};
  auto eval = [&](const TuningConfig& c, double us) {
    return Evaluation{c, options.msg_sizes, {us, 40 * us}};
  };
  const TuningConfig a{6, 0, 0}, b{2, 65536, 2}, c{1, 0, 0};
  nlohmann::json prior = nlohmann::json::array();
  for (const auto& [config, us] : std::vector<std::pair<TuningConfig, double>>{
           {TuningConfig{}, 10}, {a, 8}, {a, 8.5}, {b, 12}, {c, 9}, {c, 9.5}, {c, 9.2}})
    prior.push_back(eval(config, us));
  Evaluation failed = eval(TuningConfig{5, 0, 0}, 1);
  failed.failed = true;
  prior.push_back(failed);  // a failed run is no data
  options.warm_start_points = {a};
  options.warm_start_state = {{"strategy", "bo"}, {"evaluations", prior}};
  auto strategy = make_strategy("bo", space, options);
  EXPECT_EQ(strategy->reused_runs(), 0);  // nothing re-measured yet: no shift, no data
  strategy->observe(eval(TuningConfig{}, 11));
  // The default was measured again: the other configurations' 6 runs are data.
  EXPECT_EQ(strategy->reused_runs(), 6);
  strategy->observe(eval(a, 8.8));
  EXPECT_EQ(strategy->reused_runs(), 4);  // a's two runs are replaced by its new one
  // Cold: none.
  StrategyOptions cold = options;
  cold.warm_start_points.clear();
  cold.warm_start_state = nullptr;
  auto plain = make_strategy("bo", space, cold);
  plain->observe(eval(TuningConfig{}, 11));
  EXPECT_EQ(plain->reused_runs(), 0);
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

// The API's convergence view tells design runs from acquisition runs through
// initial_design_of, not by reading a strategy's state JSON itself.
TEST(StrategyState, InitialDesignIsReadByTheStrategyThatWroteIt) {
  SearchSpace space(Collective::bcast, 8, table());
  auto bo = make_strategy("bo", space, options(3));
  const auto first = bo->suggest(64);
  const auto design = initial_design_of(bo->state());
  ASSERT_TRUE(design.has_value());
  ASSERT_FALSE(design->empty());
  // The design is what the strategy asks first.
  for (std::size_t i = 0; i < std::min(first.size(), design->size()); ++i)
    EXPECT_EQ(first[i], (*design)[i]) << i;
  auto random = make_strategy("random", space, options(3));
  EXPECT_FALSE(initial_design_of(random->state()).has_value());
  EXPECT_FALSE(initial_design_of(nlohmann::json("not a state")).has_value());
}

}  // namespace
}  // namespace colltune

namespace colltune {

// The strategies' saved runs share one JSON mapping (optimizer/evaluation_json.cpp): an
// unmeasured size survives as null -> NaN, states written before `failed` / `seconds` existed
// still load, and a run whose sizes and latencies disagree is refused instead of misread.
TEST(EvaluationJson, RoundTripsUnmeasuredSizesAndReadsOlderStates) {
  Evaluation e;
  e.config = TuningConfig{2, 1024, 4};
  e.msg_sizes = {4, 8, 16};
  e.latency_us = {1.5, std::nan(""), 3.25};
  e.failed = false;
  e.seconds = 0.75;
  const nlohmann::json j = e;
  EXPECT_TRUE(j.at("latency_us")[1].is_null()) << j.dump();
  const auto back = nlohmann::json::parse(j.dump()).get<Evaluation>();
  EXPECT_EQ(back.config, e.config);
  EXPECT_EQ(back.msg_sizes, e.msg_sizes);
  ASSERT_EQ(back.latency_us.size(), 3u);
  EXPECT_EQ(back.latency_us[0], 1.5);
  EXPECT_TRUE(std::isnan(back.latency_us[1]));
  EXPECT_EQ(back.latency_us[2], 3.25);
  EXPECT_EQ(back.seconds, 0.75);

  nlohmann::json old = j;
  old.erase("seconds");
  old.erase("failed");
  const auto older = old.get<Evaluation>();
  EXPECT_EQ(older.seconds, 0.0);
  EXPECT_FALSE(older.failed);

  nlohmann::json bad = j;
  bad["latency_us"] = {1.0};
  EXPECT_THROW((void)bad.get<Evaluation>(), std::invalid_argument);
}

}  // namespace colltune
