// The warm start of a whole-cluster search (optimizer/cluster_warm_start.h): the earlier picks
// are re-measured first, then the earlier runs of the configurations not re-measured reach the
// model shifted by the change seen on those measured in both, and the budget counts new runs.
#include "optimizer/cluster_warm_start.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/algorithm_table.h"

namespace colltune {
namespace {

Evaluation eval(const TuningConfig& c, double us) { return {c, {1024}, {us}, false}; }

struct Fixture {
  ClusterStrategyOptions options;
  ClusterWarmStart warm;
  const TuningConfig binomial{5, 0, 0};
  const TuningConfig pipeline{3, 8192, 0};

  Fixture() {
    options.msg_sizes = {1024};
    options.sizes = {{4, 1, 4, 0}, {16, 1, 16, 0}};
    warm.points[4] = {TuningConfig::default_decision(), binomial};
    warm.prior[4] = {eval(TuningConfig::default_decision(), 100), eval(binomial, 50),
                     eval(pipeline, 80)};
  }
  std::unique_ptr<WarmStartedClusterStrategy> make(int budget,
                                                   const std::string& strategy = "nearest") const {
    ClusterStrategyOptions inner = options;
    inner.budget = budget + static_cast<int>(warm.prior_runs());
    return std::make_unique<WarmStartedClusterStrategy>(
        make_cluster_strategy(strategy, Collective::bcast, AlgorithmTable::builtin_4_1(), inner),
        warm, budget);
  }
};

TEST(ClusterWarmStart, ReMeasuresThePicksThenReusesTheEarlierRunsShifted) {
  Fixture f;
  auto s = f.make(10);
  // The warm points alone, even when more is asked; nothing more until they are observed.
  const auto first = s->suggest(4);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].comm_size, 4);
  EXPECT_TRUE(first[0].config.is_default());
  EXPECT_EQ(first[1].config, f.binomial);
  EXPECT_TRUE(s->suggest(4).empty());
  EXPECT_FALSE(s->done());
  // The cluster got 10 % slower on both re-measured points.
  s->observe(4, eval(TuningConfig::default_decision(), 110));
  s->observe(4, eval(f.binomial, 55));

  // A copy restored from the state behaves alike from here on.
  auto copy = f.make(10);
  copy->restore(s->state());
  const auto next = s->suggest(3);
  EXPECT_EQ(next.size(), copy->suggest(3).size());
  for (const auto& n : next) EXPECT_TRUE(n.comm_size == 4 || n.comm_size == 16);

  // Only the configuration not re-measured was reused, at 80 us x 1.1.
  const auto summary = s->summary();
  EXPECT_EQ(summary.at("reused_runs"), 1) << summary.dump();
  // Per comm size, as the engine's final phase counts them in its cap.
  EXPECT_EQ(s->reused_runs(4), 1);
  EXPECT_EQ(s->reused_runs(16), 0);
  EXPECT_EQ(copy->reused_runs(4), 1);  // restored with the state
  ASSERT_EQ(summary.at("shift").size(), 1u);
  EXPECT_NEAR(summary.at("shift")[0].at("mean_log_shift").get<double>(), std::log(1.1), 1e-9);
  bool seen = false;
  const nlohmann::json state = s->state();
  for (const auto& o : state.at("inner").at("observed"))
    if (o.at("comm_size") == 4 && o.at("config").get<TuningConfig>() == f.pipeline) {
      seen = true;
      EXPECT_NEAR(o.at("rows")[0].at("latency_us")[0].get<double>(), 88.0, 1e-9);
    }
  EXPECT_TRUE(seen) << state.dump();
  EXPECT_EQ(copy->summary(), summary);

  // The budget counts new runs only: 10, whatever the earlier campaign ran.
  int runs = 2;
  for (auto batch = next; !batch.empty() && !s->done(); batch = s->suggest(3))
    for (const auto& b : batch) {
      s->observe(b.comm_size, eval(b.config, 70));
      ++runs;
    }
  EXPECT_TRUE(s->done());
  EXPECT_EQ(runs, 10);
}

// Under a node-second budget the re-measured points are runs like the search's own: the first
// goes alone, the others while what is left pays for them at what the runs cost (3 node-seconds
// each here), and the points that do not fit are left out and counted. Before, all four went out
// in the first batch whatever the budget (12 node-seconds against 1).
TEST(ClusterWarmStart, ReMeasuresOnlyWhatANodeSecondBudgetPaysFor) {
  for (const char* strategy : {"nearest", "bo-cluster"})
    for (double budget : {1.0, 7.0, 100.0}) {
      SCOPED_TRACE(std::string(strategy) + " " + std::to_string(budget));
      Fixture f;
      f.options.budget_node_seconds = budget;
      f.options.calls_per_run[1024] = 1000;  // as campaigns price runs (per configuration)
      f.warm.points[16] = {TuningConfig::default_decision(), f.pipeline};
      f.warm.prior.clear();  // a budget reuses no earlier runs (campaign/retune_warm_start.h)
      auto s = f.make(0, strategy);
      EXPECT_TRUE(std::isfinite(s->node_seconds_left()));
      auto run = [&](const ClusterSuggestion& c) {
        Evaluation e = eval(c.config, 100);
        e.seconds = 3;
        s->observe(c.comm_size, e);
      };
      const auto first = s->suggest(8);
      ASSERT_EQ(first.size(), 1u);
      EXPECT_EQ(first[0].comm_size, 4);
      EXPECT_TRUE(first[0].config.is_default());
      EXPECT_LT(s->node_seconds_left(), budget);  // the pending point is priced
      run(first[0]);
      EXPECT_DOUBLE_EQ(s->node_seconds_left(), budget - 3);
      // A copy restored from the state agrees on what is left and on what it sends next.
      auto copy = f.make(0, strategy);
      copy->restore(s->state());
      EXPECT_DOUBLE_EQ(copy->node_seconds_left(), s->node_seconds_left());
      double spent = 3;
      for (int round = 0; round < 100 && !s->done(); ++round) {
        const auto batch = s->suggest(8);
        if (round == 0) {
          EXPECT_EQ(copy->suggest(8).size(), batch.size());
        }
        if (batch.empty()) break;
        for (const auto& b : batch) {
          run(b);
          spent += 3;
        }
      }
      EXPECT_TRUE(s->done());
      EXPECT_LE(spent, budget + 3);  // within one run (nearest stops once it reached it)
      const auto summary = s->summary();
      int sent = 0;
      for (const auto& r : summary.at("remeasured"))
        sent += static_cast<int>(r.at("configs").size());
      EXPECT_EQ(sent + summary.at("not_remeasured").get<int>(), 4) << summary.dump();
      if (budget == 1.0) {
        EXPECT_EQ(sent, 1);
        EXPECT_EQ(s->stop_reason().rfind("budget: node-seconds", 0), 0u) << s->stop_reason();
      }
      if (budget == 7.0) {
        EXPECT_EQ(sent, 2);
        // bo-cluster sends what its price fits; nearest one more run once under the budget.
        EXPECT_EQ(spent, std::string(strategy) == "nearest" ? 9 : 6);
      }
      if (budget == 100.0) {
        EXPECT_EQ(sent, 4);
      }
    }
}

}  // namespace
}  // namespace colltune
