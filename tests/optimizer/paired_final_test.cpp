// The paired final phase's plan (optimizer/paired_final.h): nominees, the run cap, the open
// nominees after a look, and what a whole-cluster size may nominate.
#include "optimizer/paired_final.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace colltune {
namespace {

const AlgorithmTable& table() { return AlgorithmTable::builtin_4_1(); }

TEST(PairedFinal, NominatesThePickWhenAFinalistElseTheFastestSearchedFinalistThatBeatsTheDefault) {
  const SearchSpace space(Collective::bcast, 16, table());
  const TuningConfig pick{6, 0, 0}, chain{2, 8192, 4}, pipeline{3, 8192, 0};
  const TuningConfig fixed = TuningConfig::default_decision();
  std::vector<Choice> picks = {{1024, pick, 10, 20}, {2048, pick, 10, 20}, {4096, fixed, 30, 30}};
  SearchLatencies search;
  search[2048][chain] = {15, 16, 17};
  search[2048][pipeline] = {12, 13, 14};  // the fastest finalist searched at 2048
  search[2048][fixed] = {20, 20, 20};
  search[4096][chain] = {31, 32, 33};  // slower than the default there: no nominee
  search[4096][fixed] = {30, 30, 30};

  // The pick is a finalist: it is the nominee wherever it is picked.
  auto n = final_nominees(picks, {pick, chain, pipeline}, search, space);
  EXPECT_EQ(n.at(1024), pick);
  EXPECT_EQ(n.at(2048), pick);
  EXPECT_EQ(n.count(4096), 0u);

  // Not a finalist: at 2048 the finalist with the lowest search median (it beats the
  // default's); at 1024 nothing was searched, so nothing is nominated.
  n = final_nominees(picks, {chain, pipeline}, search, space);
  EXPECT_EQ(n.count(1024), 0u);
  EXPECT_EQ(n.at(2048), pipeline);
  EXPECT_EQ(n.count(4096), 0u);

  // The default is never a nominee, even listed as a finalist.
  n = final_nominees({{4096, fixed, 30, 30}}, {fixed}, search, space);
  EXPECT_TRUE(n.empty());
}

TEST(PairedFinal, NeverNominatesTheConfigurationOpenMpisFixedDecisionRuns) {
  // Find a message size where the fixed decision runs a configuration of the space (its
  // "alias"): nominating it would test the default against itself.
  const SearchSpace space(Collective::allreduce, 8, table());
  std::int64_t size = 0;
  std::optional<TuningConfig> alias;
  for (std::int64_t m = 1; m <= (1 << 20) && !alias; m *= 2)
    if ((alias = space.default_alias(m))) size = m;
  ASSERT_TRUE(alias) << "no message size where allreduce P=8's fixed decision has an alias";
  const auto n = final_nominees({{size, *alias, 10, 20}}, {*alias}, {}, space);
  EXPECT_TRUE(n.empty());
}

TEST(PairedFinal, BelowItsLargestNominationANomineeRidesWhereTheModelExpectsAGain) {
  const SearchSpace space(Collective::bcast, 16, table());
  const TuningConfig fixed = TuningConfig::default_decision();
  const TuningConfig a{6, 0, 0}, b{3, 8192, 0}, never{2, 8192, 4};
  // The picks: the default at 4-16 B, 64 B and 256 B, a at 32 B, b at 128 B.
  const std::vector<Choice> picks = {{4, fixed, 10, 10},  {8, fixed, 10, 10},  {16, fixed, 10, 10},
                                     {32, a, 9, 10},      {64, fixed, 10, 10}, {128, b, 8, 10},
                                     {256, fixed, 10, 10}};
  // The model's comparisons of the finalists with the default: a is unsure at 4-8 B (worth
  // exp(0.125) Phi(0.5) - Phi(0) = 0.28 at 4 B), sure to lose at 16 B; b is expected to gain
  // more at 8 B and 64 B; neither beyond 128 B. `never` is not a nominee anywhere.
  VersusDefault model;
  model[a] = {{4, a, 10, 10, 0.5}, {8, a, 10, 10, 0.1},  {16, a, 20, 10, 0.01},
              {32, a, 9, 10, 0.1}, {64, a, 11, 10, 0.1}, {128, a, 12, 10, 0.1},
              {256, a, 5, 10, 0.5}};
  model[b] = {{4, b, 30, 10, 0.01}, {8, b, 9, 10, 0.3}, {16, b, 20, 10, 0.01}, {32, b, 10, 10, 0.1},
              {64, b, 9, 10, 0.1},  {128, b, 8, 10, 0}, {256, b, 5, 10, 0.5}};
  model[never] = {{16, never, 1, 10, 0}};
  EXPECT_NEAR(expected_gain(model[a][0]), 0.28350, 1e-4);
  EXPECT_GT(expected_gain(model[b][1]), expected_gain(model[a][1]));

  std::set<std::int64_t> riders;
  const auto n = final_nominees(picks, {a, b, never}, {}, space, model, &riders);
  EXPECT_EQ(n.at(4), a);
  EXPECT_EQ(n.at(8), b);       // the nominee expected to gain the most there
  EXPECT_EQ(n.count(16), 0u);  // neither is expected to gain there
  EXPECT_EQ(n.at(32), a);
  EXPECT_EQ(n.at(64), b);
  EXPECT_EQ(n.at(128), b);
  EXPECT_EQ(n.count(256), 0u);  // above the largest nomination: the look's span stays
  EXPECT_EQ(riders, (std::set<std::int64_t>{4, 8, 64}));
  // Without a model, the picks alone.
  EXPECT_EQ(final_nominees(picks, {a, b, never}, {}, space).size(), 2u);

  // A size a nominee rides on never keeps it open: a, proven at 32 B, is closed though its
  // interval at 4 B is undecided; b, undecided at 128 B, stays open.
  const std::vector<std::int64_t> sizes{4, 8, 16, 32, 64, 128, 256};
  PairedInterval undecided, proven;
  undecided.pairs = proven.pairs = 4;
  undecided.lower = 0.8;
  undecided.upper = 1.2;
  proven.lower = 0.5;
  proven.upper = 0.7;
  proven.verdict = PairedVerdict::faster;
  std::map<TuningConfig, std::vector<PairedInterval>> intervals;
  intervals[a] = {undecided, undecided, undecided, proven, undecided, undecided, undecided};
  intervals[b] = intervals[a];
  EXPECT_EQ(open_nominees(n, sizes, intervals, 0, riders), (std::set<TuningConfig>{b}));
  EXPECT_EQ(open_nominees(n, sizes, intervals, 0), (std::set<TuningConfig>{a, b}));
}

TEST(PairedFinal, TheCapIsNeverBelowOneLookOfTwoRoundsOfEveryNominee) {
  // Capped by the search's runs and by final_repeats x (1 + nominees)...
  EXPECT_EQ(final_run_cap(30, 3, 1), 6);
  EXPECT_EQ(final_run_cap(7, 3, 2), 7);
  // ... but a size the search ran twice still gets one A/B + B/A look of each nominee.
  EXPECT_EQ(final_run_cap(2, 3, 1), 4);
  EXPECT_EQ(final_run_cap(2, 3, 3), 8);
  EXPECT_EQ(final_run_cap(0, 3, 0), 2);
}

// A run price of 1 node-second per message size measured (sizes 4, 8, 16, ... bytes).
SpanPrice per_size_price() {
  return [](const TuningConfig&, std::int64_t lo, std::int64_t hi) {
    double sizes = 0;
    for (std::int64_t m = 4; m <= hi; m *= 2) sizes += m >= lo;
    return sizes;
  };
}

TEST(PairedFinal, ALookCostsItsRunsOverTheSpanOfItsNominees) {
  const TuningConfig a{1, 0, 0}, b{2, 0, 0};
  const std::map<std::int64_t, TuningConfig> nominated{{4, a}, {8, a}, {64, b}};
  EXPECT_EQ(first_look_runs(2), 6);
  // a alone: 2 rounds x (default + a) x 2 sizes (4-8 B).
  EXPECT_DOUBLE_EQ(look_cost(2, {a}, nominated, per_size_price()), 8);
  // a and b: 2 x 3 runs over 4-64 B (5 sizes).
  EXPECT_DOUBLE_EQ(look_cost(2, {a, b}, nominated, per_size_price()), 30);
  EXPECT_DOUBLE_EQ(look_cost(2, {}, nominated, per_size_price()), 0);
  // Each run at its configuration's price: b's runs cost 5 a size, the default's and a's 1.
  const SpanPrice dear_b = [](const TuningConfig& c, std::int64_t lo, std::int64_t hi) {
    return (c == TuningConfig{2, 0, 0} ? 5 : 1) * per_size_price()(c, lo, hi);
  };
  EXPECT_DOUBLE_EQ(look_cost(2, {a}, nominated, dear_b), 8);
  EXPECT_DOUBLE_EQ(look_cost(2, {a, b}, nominated, dear_b), 2 * (5 + 5 + 25));
}

TEST(PairedFinal, AShortBudgetTestsTheNomineesOfTheMostMessageSizesFirst) {
  const TuningConfig a{1, 0, 0}, b{2, 0, 0}, c{3, 0, 0};
  // b at 3 sizes, c at 2, a at 1 (4-128 B).
  const std::map<std::int64_t, TuningConfig> nominated{{4, a},  {8, b},  {16, b},
                                                       {32, b}, {64, c}, {128, c}};
  const std::set<TuningConfig> open{a, b, c};
  const SpanPrice flat = [](const TuningConfig&, std::int64_t, std::int64_t) { return 1.0; };
  // Two rounds, 1 node-second per run: the default and 3 nominees cost 8.
  EXPECT_EQ(affordable_nominees(nominated, open, 2, {8, flat, {}}, false), open);
  EXPECT_EQ(affordable_nominees(nominated, open, 2, {7.9, flat, {}}, false),
            (std::set<TuningConfig>{b, c}));
  EXPECT_EQ(affordable_nominees(nominated, open, 2, {4, flat, {}}, false),
            (std::set<TuningConfig>{b}));
  EXPECT_TRUE(affordable_nominees(nominated, open, 2, {3.9, flat, {}}, false).empty());
  EXPECT_TRUE(affordable_nominees(nominated, {}, 2, {100, flat, {}}, false).empty());
  // Priced by span, a narrower pair fits where a wider one does not: b (8-32 B) with c
  // (64-128 B) spans 5 sizes (2 x 3 x 5 = 30), b with a 4 (2 x 3 x 4 = 24).
  EXPECT_EQ(affordable_nominees(nominated, open, 2, {24, per_size_price(), {}}, false),
            (std::set<TuningConfig>{a, b}));
  // A first look tests what the plan gave it, and no more, however much is left.
  EXPECT_EQ(affordable_nominees(nominated, open, 2, {100, flat, {a, c}}, true),
            (std::set<TuningConfig>{a, c}));
  EXPECT_EQ(affordable_nominees(nominated, open, 2, {4, flat, {a, c}}, true),
            (std::set<TuningConfig>{c}));
}

TEST(PairedFinal, ANomineeIsWorthTheGainsPredictedWhereItIsNominated) {
  const TuningConfig a{1, 0, 0}, b{2, 0, 0};
  const std::map<std::int64_t, TuningConfig> nominated{{4, a}, {8, a}, {16, b}};
  // The strategy's estimates: 2x at 4 B, none at 8 B, unknown default at 16 B.
  const std::vector<Choice> picks{{4, a, 1.0, 2.0}, {8, a, 1.0, 0.9}, {16, b, 1.0, std::nan("")}};
  const auto values = first_look_values(nominated, picks);
  EXPECT_NEAR(values.at(a), 1.0 + 0.002, 1e-12);
  EXPECT_NEAR(values.at(b), 0.001, 1e-12);
  // Where the model is unsure (gain_sd: the sd of the log gain), a nominee is worth what a
  // look is expected to find, E[max(0, default / pick - 1)] with the log gain normal: a pick
  // predicted as fast as the default, sd 0.5, is worth exp(0.125) Phi(0.5) - Phi(0) = 0.2835;
  // one predicted 10 % slower with the same sd still 0.2158, not nothing.
  const std::map<std::int64_t, TuningConfig> unsure{{4, a}, {8, b}};
  const std::vector<Choice> model{{4, a, 1.0, 1.0, 0.5}, {8, b, 1.1, 1.0, 0.5}};
  const auto worth = first_look_values(unsure, model);
  EXPECT_NEAR(worth.at(a), 0.28350 + 0.001, 1e-4);
  const double mu = std::log(1.0 / 1.1);
  EXPECT_NEAR(worth.at(b),
              std::exp(mu + 0.125) * 0.5 * std::erfc(-(mu + 0.25) / 0.5 / std::sqrt(2.0)) -
                  0.5 * std::erfc(-mu / 0.5 / std::sqrt(2.0)) + 0.001,
              1e-12);
  EXPECT_NEAR(worth.at(b), 0.2158 + 0.001, 1e-4);
}

TEST(PairedFinal, TheFirstLooksArePlannedTogetherForTheMostValueWithinTheMoney) {
  const TuningConfig a{1, 0, 0}, b{2, 0, 0}, c{3, 0, 0};
  // A dear size (10 node-seconds a run) with one nominee worth 4, and a cheap one (1 a run)
  // with two, worth 3 and 1.
  const auto flat = [](double price) -> SpanPrice {
    return [price](const TuningConfig&, std::int64_t, std::int64_t) { return price; };
  };
  const std::vector<FirstLookCandidate> sizes{{flat(10), {{4, a}}, {{a, 4}}},
                                              {flat(1), {{4, b}, {8, c}}, {{b, 3}, {c, 1}}}};
  // Everything fits in 40 + 6: all of it.
  EXPECT_EQ(plan_first_looks(sizes, 46), (std::vector<std::set<TuningConfig>>{{a}, {b, c}}));
  // 45: the dear look (4 for 40) and the cheap one's first nominee (3 for 4) are worth 7; a
  // per-node-second greedy would take the cheap size's two (4 for 6) and then could not afford
  // the dear look.
  EXPECT_EQ(plan_first_looks(sizes, 45), (std::vector<std::set<TuningConfig>>{{a}, {b}}));
  // 39: the dear look does not fit; the cheap size gets both.
  EXPECT_EQ(plan_first_looks(sizes, 39), (std::vector<std::set<TuningConfig>>{{}, {b, c}}));
  EXPECT_EQ(plan_first_looks(sizes, 3), (std::vector<std::set<TuningConfig>>{{}, {}}));
  EXPECT_TRUE(plan_first_looks({}, 10).empty());
}

TEST(PairedFinal, ALookIsPlannedAtWholeRunPricesAndCheckedAtWhatItsRunsAreExpectedToCost) {
  const TuningConfig a{1, 0, 0}, b{2, 0, 0}, c{3, 0, 0};
  const auto flat = [](double price) -> SpanPrice {
    return [price](const TuningConfig&, std::int64_t, std::int64_t) { return price; };
  };
  // The dear size is planned at 10 a run, but its nominee's runs are expected to cost 30.
  std::vector<FirstLookCandidate> sizes{{flat(10), {{4, a}}, {{a, 4}}, flat(30)},
                                        {flat(1), {{4, b}, {8, c}}, {{b, 3}, {c, 1}}, {}}};
  const FirstLookPlan plan = plan_final_looks(sizes, 46);
  EXPECT_EQ(plan.tested, (std::vector<std::set<TuningConfig>>{{a}, {b, c}}));
  EXPECT_EQ(plan.cost, (std::vector<double>{40, 6}));
  EXPECT_DOUBLE_EQ(plan.after(0), 6);
  EXPECT_DOUBLE_EQ(plan.after(1), 0);
  // The dear look may spend what is left less the cheap size's planned look, at its expected
  // price: 2 x (30 + 30) does not fit in 40, so it tests nothing and the cheap look keeps its
  // money; the cheap size (no expected price) is checked at its run price.
  const FinalLookBudget dear = final_look_budget(plan, sizes, 0, 46);
  EXPECT_DOUBLE_EQ(dear.left, 40);
  EXPECT_EQ(dear.planned, (std::set<TuningConfig>{a}));
  EXPECT_TRUE(affordable_nominees(sizes[0].nominated, {a}, 2, dear, true).empty());
  const FinalLookBudget cheap = final_look_budget(plan, sizes, 1, 46);
  EXPECT_DOUBLE_EQ(cheap.left, 46);
  EXPECT_EQ(affordable_nominees(sizes[1].nominated, {b, c}, 2, cheap, true),
            (std::set<TuningConfig>{b, c}));
}

TEST(PairedFinal, ANomineeStaysOpenUntilItsIntervalDecidesEverySizeItIsNominatedFor) {
  const TuningConfig a{6, 0, 0}, b{2, 8192, 4};
  const std::vector<std::int64_t> sizes = {4, 8};
  const std::map<std::int64_t, TuningConfig> nominated = {{4, a}, {8, b}};
  PairedInterval faster;
  faster.pairs = 6, faster.ratio = 0.5, faster.lower = 0.45, faster.upper = 0.55;
  faster.verdict = PairedVerdict::faster;
  PairedInterval straddles;
  straddles.pairs = 2, straddles.ratio = 0.95, straddles.lower = 0.7, straddles.upper = 1.3;
  // b has no interval yet: open; a is decided at 4 (the only size it is nominated for).
  std::map<TuningConfig, std::vector<PairedInterval>> intervals = {{a, {faster, straddles}}};
  EXPECT_EQ(open_nominees(nominated, sizes, intervals, 0.0), (std::set<TuningConfig>{b}));
  intervals[b] = {straddles, straddles};
  EXPECT_EQ(open_nominees(nominated, sizes, intervals, 0.0), (std::set<TuningConfig>{b}));
  intervals[b] = {straddles, faster};
  EXPECT_TRUE(open_nominees(nominated, sizes, intervals, 0.0).empty());
}

// After every size's phase: a leftover look may spend all that is unspent, on any nominee, at
// the size's expected prices; the nominees it may give a first look are those with no pair.
TEST(PairedFinal, ALeftoverLookSpendsWhatIsUnspentOnTheNomineesNoLookTested) {
  const TuningConfig a{6, 0, 0}, b{2, 8192, 4}, c{3, 0, 0};
  FirstLookCandidate size;
  size.nominated = {{4, a}, {8, b}, {16, c}};
  size.run_price = [](const TuningConfig&, std::int64_t, std::int64_t) { return 10.0; };
  size.expected_price = [](const TuningConfig&, std::int64_t, std::int64_t) { return 3.0; };
  const FinalLookBudget budget = leftover_look_budget(size, 25);
  EXPECT_TRUE(budget.leftover);
  EXPECT_DOUBLE_EQ(budget.left, 25);
  EXPECT_DOUBLE_EQ(budget.run_price(a, 4, 8), 3.0);
  EXPECT_EQ(budget.planned, (std::set<TuningConfig>{a, b, c}));
  // Not a first look: every nominee may be tested; 2 rounds of the default and a, b, c at 3
  // each cost 24, within 25.
  EXPECT_EQ(affordable_nominees(size.nominated, {a, b, c}, 2, budget, false),
            (std::set<TuningConfig>{a, b, c}));

  const std::vector<std::int64_t> sizes = {4, 8, 16};
  PairedInterval none, two;
  two.pairs = 2;
  // a has pairs at its size; b's interval exists but without pairs (its runs failed); c has
  // no interval.
  const std::map<TuningConfig, std::vector<PairedInterval>> intervals = {{a, {two, none, none}},
                                                                         {b, {two, none, none}}};
  EXPECT_EQ(untested_nominees(size.nominated, sizes, {a, b, c}, intervals),
            (std::set<TuningConfig>{b, c}));
  EXPECT_EQ(untested_nominees(size.nominated, sizes, {a}, intervals), std::set<TuningConfig>{});
}

// Two untested nominees nominated far apart, as Rabenseifner (dear at the small size below it)
// and the nonoverlapping allreduce at 1024 ranks: one look of both measures every size between
// them for all three runs and does not fit; the leftover look tests the one nominated at more
// sizes, and the other, not marked untested for money, gets a leftover look of its own from
// what is then left. A look within the planned looks leaves its left-out nominees untested, as
// does a leftover look that tests none.
TEST(PairedFinal, ALeftoverLookLeavesTheNomineesItCannotPayForToALookOfTheirOwn) {
  const TuningConfig near{2, 0, 0}, far{6, 0, 0};
  FirstLookCandidate size;
  size.nominated = {{2048, near}, {4096, far}, {8192, far}};
  size.run_price = [&](const TuningConfig& c, std::int64_t lo, std::int64_t) {
    return c == far && lo <= 2048 ? 26.0 : 4.0;  // far is dear at 2048 B
  };
  const FinalLookBudget budget = leftover_look_budget(size, 60);
  const std::set<TuningConfig> both = {near, far};
  EXPECT_DOUBLE_EQ(look_cost(2, both, size.nominated, size.run_price), 2 * (4 + 4 + 26));
  EXPECT_DOUBLE_EQ(look_cost(2, {far}, size.nominated, size.run_price), 16);
  EXPECT_DOUBLE_EQ(look_cost(2, {near}, size.nominated, size.run_price), 16);
  const std::set<TuningConfig> paid = affordable_nominees(size.nominated, both, 2, budget, false);
  EXPECT_EQ(paid, std::set<TuningConfig>{far});  // nominated at two sizes
  std::set<TuningConfig> unaffordable, leftover_looked;
  record_look(both, paid, true, &unaffordable, &leftover_looked);
  EXPECT_TRUE(unaffordable.empty());
  EXPECT_EQ(leftover_looked, std::set<TuningConfig>{far});
  // The next leftover look, with 60 - 16 left, tests `near` alone.
  const FinalLookBudget after = leftover_look_budget(size, 44);
  EXPECT_EQ(affordable_nominees(size.nominated, {near}, 2, after, false),
            std::set<TuningConfig>{near});
  record_look({near}, {near}, true, &unaffordable, &leftover_looked);
  EXPECT_EQ(leftover_looked, both);
  // Had nothing been left for it: untested for money.
  std::set<TuningConfig> none_paid, none_looked;
  record_look({near}, {}, true, &none_paid, &none_looked);
  EXPECT_EQ(none_paid, std::set<TuningConfig>{near});
  EXPECT_TRUE(none_looked.empty());
  // A look within the size's planned looks: what it leaves out stays untested.
  std::set<TuningConfig> planned_out, planned_looked;
  record_look(both, {far}, false, &planned_out, &planned_looked);
  EXPECT_EQ(planned_out, std::set<TuningConfig>{near});
  EXPECT_TRUE(planned_looked.empty());
}

TEST(PairedFinal, ALookMeasuresFromTheSmallestToTheLargestSizeAnOpenNomineeIsNominatedFor) {
  const TuningConfig a{6, 0, 0}, b{2, 8192, 4};
  const std::map<std::int64_t, TuningConfig> nominated = {{8, a}, {64, b}, {256, a}, {4096, b}};
  EXPECT_EQ(look_size_span(nominated, {a, b}), (std::pair<std::int64_t, std::int64_t>{8, 4096}));
  // b decided: the sizes above a's largest are not measured any more (the default stands there).
  EXPECT_EQ(look_size_span(nominated, {a}), (std::pair<std::int64_t, std::int64_t>{8, 256}));
  EXPECT_EQ(look_size_span(nominated, {b}), (std::pair<std::int64_t, std::int64_t>{64, 4096}));
  EXPECT_FALSE(look_size_span(nominated, {}).has_value());
  EXPECT_FALSE(look_size_span({}, {a}).has_value());
}

// A whole-cluster strategy seen through its interface: it ran `observed` at the comm size and
// predicts `predicted` there with `confidence`.
class FixedClusterStrategy : public ClusterStrategy {
 public:
  FixedClusterStrategy(std::vector<TuningConfig> observed, TuningConfig predicted,
                       double confidence)
      : observed_(std::move(observed)), predicted_(predicted), confidence_(confidence) {}
  std::string name() const override { return "fixed"; }
  std::vector<ClusterSuggestion> suggest(int) override { return {}; }
  void observe(int, const Evaluation&) override {}
  bool done() const override { return true; }
  std::string stop_reason() const override { return "planned"; }
  std::vector<TuningConfig> finalists(int, int) const override { return observed_; }
  std::vector<ClusterChoice> recommend(const std::vector<int>& comm_sizes,
                                       double min_confidence) const override {
    std::vector<ClusterChoice> out;
    for (int p : comm_sizes) {
      ClusterChoice c;
      c.comm_size = p;
      c.msg_size = 1024;
      c.confidence = confidence_;
      c.config = confidence_ >= min_confidence ? predicted_ : TuningConfig::default_decision();
      out.push_back(c);
      for (ClusterChoice more : picks_) {
        more.comm_size = p;
        more.confidence = confidence_;
        if (confidence_ < min_confidence) more.config = TuningConfig::default_decision();
        out.push_back(more);
      }
    }
    return out;
  }
  // A further pick at every size: `config` at `msg_size`, estimated at `latency_us` against the
  // default's `default_us`.
  void add_pick(std::int64_t msg_size, TuningConfig config, double latency_us, double default_us) {
    ClusterChoice c;
    c.msg_size = msg_size;
    c.config = config;
    c.latency_us = latency_us;
    c.default_us = default_us;
    picks_.push_back(c);
  }
  nlohmann::json state() const override { return nlohmann::json::object(); }
  void restore(const nlohmann::json&) override {}
  double node_seconds_left() const override { return std::numeric_limits<double>::infinity(); }
  double run_price(int comm_size, const TuningConfig&) const override {
    const auto it = prices_.find(comm_size);
    return it == prices_.end() ? 1 : it->second;
  }
  // A run at `comm_size` costs `price` (else 1).
  void set_run_price(int comm_size, double price) { prices_[comm_size] = price; }
  double span_price(int comm_size, const TuningConfig& config, std::int64_t,
                    std::int64_t) const override {
    const auto it = span_factors_.find(config);  // a look measures fewer message sizes
    return 0.5 * run_price(comm_size, config) * (it == span_factors_.end() ? 1 : it->second);
  }
  // A run of `config` over a look's span costs `factor` times the default's.
  void set_span_factor(const TuningConfig& config, double factor) {
    span_factors_[config] = factor;
  }

 private:
  std::vector<TuningConfig> observed_;
  TuningConfig predicted_;
  double confidence_;
  std::map<int, double> prices_;
  std::map<TuningConfig, double> span_factors_;
  std::vector<ClusterChoice> picks_;
};

TEST(PairedFinal, AWholeClusterSizeNominatesThePickItRanksFirstWhetherRunThereOrNot) {
  const TuningConfig ran{6, 0, 0}, predicted{5, 0, 0};
  // Confident: the pick joins the finalists (after them), so the final phase verifies it.
  EXPECT_EQ(cluster_final_candidates(FixedClusterStrategy({ran}, predicted, 0.9), 1024, 2),
            (std::vector<TuningConfig>{ran, predicted}));
  // Below the campaign's gate (0.8, for the sizes written untested) but at even odds or better:
  // the paired test is its verification, so it is nominated too.
  EXPECT_EQ(cluster_final_candidates(FixedClusterStrategy({ran}, predicted, 0.6), 1024, 2),
            (std::vector<TuningConfig>{ran, predicted}));
  EXPECT_EQ(
      cluster_final_candidates(FixedClusterStrategy({ran}, predicted, kNominateOdds), 1024, 2),
      (std::vector<TuningConfig>{ran, predicted}));
  // The model holds the default more likely faster: only what ran there.
  EXPECT_EQ(cluster_final_candidates(FixedClusterStrategy({ran}, predicted, 0.4), 1024, 2),
            (std::vector<TuningConfig>{ran}));
  // Already a finalist: listed once.
  EXPECT_EQ(cluster_final_candidates(FixedClusterStrategy({predicted}, predicted, 0.9), 1024, 2),
            (std::vector<TuningConfig>{predicted}));
}

constexpr double kAll = std::numeric_limits<double>::infinity();  // money for every look

TEST(PairedFinal, TheSearchHoldsBackTheFirstLookOfEveryNomineeAtTheSizesItMeasured) {
  // A strategy that ran `ran` (confidently its pick: the linear bcast, which Open MPI's fixed
  // decision does not run at 1 KiB) at every size; each run costs 1.
  const TuningConfig ran{1, 0, 0};
  const FixedClusterStrategy strategy({ran}, ran, 0.9);
  const SearchSpace space(Collective::bcast, 16, table());
  const FirstLookCandidate look = cluster_first_look(strategy, 16, 2, {}, space);
  EXPECT_EQ(look.nominated, (std::map<std::int64_t, TuningConfig>{{1024, ran}}));
  EXPECT_EQ(look.values.size(), 1u);
  // Planned as whole runs of the default; expected to cost the span's price when it runs.
  EXPECT_DOUBLE_EQ(look.run_price(ran, 4, 1024), 1);
  EXPECT_DOUBLE_EQ(look.expected_price(ran, 4, 1024), 0.5);
  // Held back: 2 rounds of the default and the nominee (4 runs) at each measured size, each
  // at the default's price over the look's span (0.5), not at the plan's whole run (1); a size
  // without a measurement holds nothing.
  const SearchLatencies measured{{1024, {{ran, {5.0}}}}};
  auto latencies_at = [&](std::set<int> sizes) {
    return [=](int p) { return sizes.count(p) ? measured : SearchLatencies{}; };
  };
  EXPECT_DOUBLE_EQ(first_look_reserve(strategy, {8, 16, 32}, 2, latencies_at({8, 16, 32}),
                                      Collective::bcast, table(), kAll),
                   6);
  EXPECT_DOUBLE_EQ(first_look_reserve(strategy, {8, 16, 32}, 2, latencies_at({16}),
                                      Collective::bcast, table(), kAll),
                   2);
  EXPECT_DOUBLE_EQ(first_look_reserve(strategy, {8, 16, 32}, 2, latencies_at({}), Collective::bcast,
                                      table(), kAll),
                   0);
  // The nominee's own price over the span is 4 times the default's (extrapolated where it never
  // ran): each run is still held back at the default's.
  FixedClusterStrategy dear({ran}, ran, 0.9);
  dear.set_span_factor(ran, 4);
  EXPECT_DOUBLE_EQ(cluster_first_look(dear, 16, 2, {}, space).expected_price(ran, 4, 1024), 2);
  EXPECT_DOUBLE_EQ(first_look_reserve(dear, {8, 16, 32}, 2, latencies_at({16}), Collective::bcast,
                                      table(), kAll),
                   2);
  // The default picked everywhere: nothing to test, nothing held back.
  const FixedClusterStrategy plain({}, TuningConfig::default_decision(), 0.9);
  EXPECT_TRUE(cluster_first_look(plain, 16, 2, {}, space).nominated.empty());
  EXPECT_DOUBLE_EQ(first_look_reserve(plain, {8, 16}, 2, latencies_at({8, 16}), Collective::bcast,
                                      table(), kAll),
                   0);
}

TEST(PairedFinal, TheSearchHoldsBackOnlyTheLooksWhatIsLeftCanPayFor) {
  // Two nominees at every size: the linear bcast at 1 KiB (no predicted gain) and the chain at
  // 64 B (predicted 3x faster than the default there, the more valuable); runs at 32 ranks 20
  // times dearer. A look at both is 6 runs, at the chain alone 4, each held back at the
  // default's price over the look's span (half a whole run): 3, 3 and 60 in all.
  const TuningConfig linear{1, 0, 0}, chain{2, 0, 0};
  FixedClusterStrategy strategy({linear, chain}, linear, 0.9);
  strategy.add_pick(64, chain, 1.0, 3.0);
  strategy.set_run_price(32, 20);
  const SearchLatencies measured{{1024, {{linear, {5.0}}}}, {64, {{chain, {1.0}}}}};
  ASSERT_EQ(
      cluster_first_look(strategy, 32, 2, measured, SearchSpace(Collective::bcast, 32, table()))
          .nominated,
      (std::map<std::int64_t, TuningConfig>{{64, chain}, {1024, linear}}));
  auto reserve = [&](double money) {
    return first_look_reserve(
        strategy, {8, 16, 32}, 2, [&](int) { return measured; }, Collective::bcast, table(), money);
  };
  // Every look costs no more than what is left: all held back, whether or not they fit
  // together (when not, the search stops and the plan at its end chooses among them).
  EXPECT_DOUBLE_EQ(reserve(kAll), 66);
  EXPECT_DOUBLE_EQ(reserve(60), 66);
  // The look at 32 ranks costs more than is left: what is left would pay for the chain alone
  // there, so that is what is held back.
  EXPECT_DOUBLE_EQ(reserve(50), 3 + 3 + 40);
  // Not even that: the final phase would never run a look there, so nothing is held back for
  // it and the search goes on with what the other looks leave.
  EXPECT_DOUBLE_EQ(reserve(25), 6);
  // The small sizes' looks at the chain alone; then nothing.
  EXPECT_DOUBLE_EQ(reserve(2.5), 4);
  EXPECT_DOUBLE_EQ(reserve(1.5), 0);
  EXPECT_DOUBLE_EQ(reserve(0), 0);
}

}  // namespace
}  // namespace colltune
