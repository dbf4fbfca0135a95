// Issue #15, whole-cluster campaigns end to end on the sim backend: the input grammar
// (server/comm_sizes.h), the spec's "cluster" field, the fallback ClusterStrategy "nearest",
// one search per collective across its sizes, kill / resume, and a rules file from 2 ranks to
// the largest size that means the same in each Open MPI version's reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/cluster_rules.h"
#include "campaign/cluster_search.h"
#include "campaign/comm_sizes.h"
#include "campaign/event_sink.h"
#include "campaign/final_choice.h"
#include "campaign/report.h"
#include "campaign/rules_stage.h"
#include "campaign/sqlite.h"
#include "campaign/store.h"
#include "optimizer/cluster_nearest.h"
#include "rules/rules_reader.h"
#include "rules/rules_writer.h"
#include "runner/backend_factory.h"
#include "runner/fault_injection.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

// True in the sanitizer build (make check-asan), where a campaign runs 5-7x slower than in
// Release: the interrupted-campaign tests then interrupt a sample of the points the Release
// build (make check) interrupts every one of.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

std::string refusal(const std::function<void()>& f) {
  try {
    f();
    return {};
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

// ---- input ----

TEST(CommSizes, ListsDoublingAndSteps) {
  EXPECT_EQ(parse_comm_sizes("2,4,8,16,32"), (std::vector<int>{2, 4, 8, 16, 32}));
  EXPECT_EQ(parse_comm_sizes("2:64"), (std::vector<int>{2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(parse_comm_sizes("3:48"), (std::vector<int>{3, 6, 12, 24, 48}));
  EXPECT_EQ(parse_comm_sizes("2:8:1"), (std::vector<int>{2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(parse_comm_sizes("12,2:8:2"), (std::vector<int>{2, 4, 6, 8, 12}));
  EXPECT_EQ(parse_comm_sizes("5"), (std::vector<int>{5}));
}

TEST(CommSizes, RefusesAmbiguityDuplicatesAndSmallSizes) {
  EXPECT_NE(refusal([] { parse_comm_sizes("3:64"); }).find("does not reach 64"), std::string::npos);
  EXPECT_NE(refusal([] { parse_comm_sizes("2:9:2"); }).find("does not reach 9"), std::string::npos);
  EXPECT_NE(refusal([] { parse_comm_sizes("2,4,4"); }).find("4 given twice"), std::string::npos);
  EXPECT_NE(refusal([] { parse_comm_sizes("2:8,4"); }).find("4 given twice"), std::string::npos);
  EXPECT_NE(refusal([] { parse_comm_sizes("1,2"); }).find("below 2"), std::string::npos);
  EXPECT_NE(refusal([] { parse_comm_sizes("1:8"); }).find("below 2"), std::string::npos);
  EXPECT_NE(refusal([] { parse_comm_sizes("2:8:0"); }).find("step"), std::string::npos);
  EXPECT_NE(refusal([] { parse_comm_sizes("2;4"); }).find("not a whole number"), std::string::npos);
  EXPECT_NE(refusal([] { parse_comm_sizes("8:2"); }).find("ends below"), std::string::npos);
  EXPECT_NE(refusal([] { parse_comm_sizes(""); }).find("not a whole number"), std::string::npos);
}

TEST(CommSizes, NodesTimesPpnNeedsALayoutWhereSizesCollide) {
  // 1x16 and 16x1 are both 16 ranks: refused without a layout policy.
  const std::string why = refusal([] { plan_layouts("", "1,2,4,8,16", "1,16", ""); });
  EXPECT_NE(why.find("16 ranks can be 1x16, 16x1"), std::string::npos) << why;
  const auto packed = plan_layouts("", "1,2,4,8,16", "1,16", "packed");
  const auto spread = plan_layouts("", "1,2,4,8,16", "1,16", "spread");
  // 1x1 (one rank) is left out; sizes 2, 4, 8, 16, 32, 64, 128, 256.
  ASSERT_EQ(packed.size(), 8u);
  EXPECT_EQ(packed.front(), (CommLayout{2, 2, 1}));
  auto at16 = [](const std::vector<CommLayout>& v) {
    for (const auto& l : v)
      if (l.comm_size == 16) return l;
    return CommLayout{};
  };
  EXPECT_EQ(at16(packed), (CommLayout{16, 1, 16}));
  EXPECT_EQ(at16(spread), (CommLayout{16, 16, 1}));
  EXPECT_EQ(plan_layouts("", "", "", "2x16,4x16"),
            (std::vector<CommLayout>{{32, 2, 16}, {64, 4, 16}}));
  EXPECT_NE(refusal([] { plan_layouts("", "", "", "2x16,4x8"); }).find("two layouts of 32"),
            std::string::npos);
  EXPECT_NE(refusal([] { plan_layouts("4", "", "", "2x2"); }).find("replaces --np"),
            std::string::npos);
  EXPECT_NE(refusal([] { plan_layouts("", "1,2", "", ""); }).find("needs --ppn"),
            std::string::npos);
  EXPECT_NE(refusal([] { plan_layouts("2,4", "", "", "packed"); }).find("--layout"),
            std::string::npos);
  EXPECT_NE(refusal([] { plan_layouts("2,4", "3", "", ""); }).find("3 nodes for 2 ranks"),
            std::string::npos);
  EXPECT_EQ(plan_layouts("", "", "", ""), (std::vector<CommLayout>{{4, 1, 0}}));  // as before
}

// ---- spec ----

nlohmann::json cluster_spec_json(const std::vector<int>& sizes) {
  nlohmann::json contexts = nlohmann::json::array();
  for (const char* c : {"bcast", "reduce"})
    for (int p : sizes) contexts.push_back({{"collective", c}, {"comm_size", p}});
  return {{"backend", "sim"},
          {"contexts", contexts},
          {"sizes", "4:16K"},
          {"budget", 6},
          {"batch_size", 4},
          {"final_repeats", 2},
          {"cluster", {{"strategy", "nearest"}, {"min_confidence", 0.8}}}};
}

TEST(ClusterSpec, ParsesRoundTripsAndKeepsOldSpecsValid) {
  const CampaignSpec spec = parse_campaign_spec(cluster_spec_json({2, 4, 8}));
  EXPECT_TRUE(spec.cluster.enabled);
  EXPECT_EQ(spec.cluster.strategy, "nearest");
  EXPECT_EQ(parse_campaign_spec(to_json(spec)).cluster, spec.cluster);
  auto old = cluster_spec_json({4});
  old.erase("cluster");
  const CampaignSpec plain = parse_campaign_spec(old);
  EXPECT_FALSE(plain.cluster.enabled);
  EXPECT_FALSE(to_json(plain).contains("cluster"));  // an old reader still reads it
  auto bad = cluster_spec_json({2, 4});
  bad["contexts"].push_back({{"collective", "bcast"}, {"comm_size", 4}, {"nodes", 2}});
  EXPECT_NE(refusal([&] { parse_campaign_spec(bad); }).find("bcast P=4 is given twice"),
            std::string::npos);
  auto unknown = cluster_spec_json({2, 4});
  unknown["cluster"]["colour"] = 1;
  EXPECT_NE(refusal([&] { parse_campaign_spec(unknown); }).find("cluster.colour"),
            std::string::npos);
  auto low = cluster_spec_json({2, 4});
  low["cluster"]["min_confidence"] = 0.2;
  EXPECT_NE(refusal([&] { parse_campaign_spec(low); }).find("min_confidence"), std::string::npos);
  auto two_budgets = cluster_spec_json({2, 4});
  two_budgets["cluster"]["budget_node_seconds"] = 50;
  two_budgets["cluster"]["total_node_seconds"] = 100;
  EXPECT_NE(refusal([&] { parse_campaign_spec(two_budgets); }).find("give one node-second budget"),
            std::string::npos);
  two_budgets["cluster"].erase("budget_node_seconds");
  EXPECT_EQ(parse_campaign_spec(two_budgets).cluster.total_node_seconds, 100);
}

// ---- the fallback strategy ----

Evaluation eval(const TuningConfig& c, const std::vector<std::int64_t>& sizes,
                const std::vector<double>& us) {
  Evaluation e;
  e.config = c;
  e.msg_sizes = sizes;
  e.latency_us = us;
  return e;
}

TEST(NearestCluster, PredictsBetweenMeasuredSizesWithConfidence) {
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  ClusterStrategyOptions o;
  o.msg_sizes = {1024, 4096};
  o.sizes = {{4, 1, 4, 0}, {16, 1, 16, 0}};
  o.budget = 40;
  NearestClusterStrategy s(Collective::bcast, table, o);
  // The first suggestions are the default at each size, the cheaper size first.
  const auto first = s.suggest(2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].comm_size, 4);
  EXPECT_TRUE(first[0].config.is_default());
  EXPECT_EQ(first[1].comm_size, 16);
  const TuningConfig binomial{5, 0, 0};
  const TuningConfig chain{2, 1024, 2};
  for (int rep = 0; rep < 3; ++rep) {
    const double jitter = 1 + 0.01 * rep;
    s.observe(4, eval(TuningConfig::default_decision(), o.msg_sizes, {100 * jitter, 100 * jitter}));
    s.observe(4, eval(binomial, o.msg_sizes, {50 * jitter, 101 * jitter}));
    s.observe(16,
              eval(TuningConfig::default_decision(), o.msg_sizes, {200 * jitter, 200 * jitter}));
    s.observe(16, eval(binomial, o.msg_sizes, {90 * jitter, 150 * jitter}));
    s.observe(16, eval(chain, o.msg_sizes, {95 * jitter, 120 * jitter}));
  }
  const auto picks = s.recommend({4, 8, 16, 64}, 0.8);
  auto at = [&](int p, std::int64_t m) {
    for (const auto& c : picks)
      if (c.comm_size == p && c.msg_size == m) return c;
    return ClusterChoice{};
  };
  // Measured: the best median; the default where nothing beat it.
  EXPECT_TRUE(at(4, 1024).measured);
  EXPECT_EQ(at(4, 1024).config, binomial);
  EXPECT_TRUE(at(4, 4096).config.is_default());
  EXPECT_EQ(at(16, 4096).config, chain);
  // Between 4 and 16: both neighbours agree at 1 KiB -> binomial, confident.
  EXPECT_FALSE(at(8, 1024).measured);
  EXPECT_EQ(at(8, 1024).config, binomial);
  EXPECT_GT(at(8, 1024).confidence, 0.8);
  // They disagree at 4 KiB (default at 4, chain at 16): at most half the confidence -> default.
  EXPECT_TRUE(at(8, 4096).config.is_default());
  EXPECT_LE(at(8, 4096).confidence, 0.5);
  // Two octaves above the largest measured size: confidence quartered -> default.
  EXPECT_TRUE(at(64, 1024).config.is_default());
  EXPECT_NEAR(at(64, 1024).confidence, at(16, 1024).confidence > 0 ? 0.25 : 0, 0.02);
  // state / restore: the same picks and the same next suggestions.
  NearestClusterStrategy copy(Collective::bcast, table, o);
  copy.restore(s.state());
  EXPECT_EQ(copy.state(), s.state());
  const auto a = s.suggest(3), b = copy.suggest(3);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].comm_size, b[i].comm_size);
    EXPECT_EQ(a[i].config, b[i].config);
  }
  // A configuration that won at a neighbour is tried early at the other sizes.
  NearestClusterStrategy fresh(Collective::bcast, table, o);
  fresh.observe(16, eval(TuningConfig::default_decision(), o.msg_sizes, {200, 200}));
  fresh.observe(16, eval(chain, o.msg_sizes, {95, 120}));
  const auto next = fresh.suggest(2);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].comm_size, 4);
  EXPECT_TRUE(next[0].config.is_default());
  EXPECT_EQ(next[1].comm_size, 4);
  EXPECT_EQ(next[1].config, chain);
}

TEST(NearestCluster, RefusesBadOptions) {
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  ClusterStrategyOptions o;
  o.msg_sizes = {4};
  EXPECT_THROW(make_cluster_strategy("nearest", Collective::bcast, table, o),
               std::invalid_argument);
  o.sizes = {{1, 1, 1, 0}};
  EXPECT_THROW(make_cluster_strategy("nearest", Collective::bcast, table, o),
               std::invalid_argument);
  o.sizes = {{4, 1, 4, 0}, {4, 2, 2, 0}};
  EXPECT_THROW(make_cluster_strategy("nearest", Collective::bcast, table, o),
               std::invalid_argument);
  o.sizes = {{4, 1, 4, 0}};
  o.settings = {{"colour", 1}};
  EXPECT_THROW(make_cluster_strategy("nearest", Collective::bcast, table, o),
               std::invalid_argument);
  o.settings = nlohmann::json::object();
  EXPECT_THROW(make_cluster_strategy("nope", Collective::bcast, table, o), std::invalid_argument);
}

TEST(ClusterSearch, PredictionSizes) {
  EXPECT_EQ(cluster_prediction_sizes({2, 4, 8}, 8), (std::vector<int>{3, 5, 6, 7}));
  const auto large = cluster_prediction_sizes({2, 64, 1024}, 1024);
  EXPECT_EQ(large.front(), 4);
  EXPECT_TRUE(std::count(large.begin(), large.end(), 768));
  EXPECT_FALSE(std::count(large.begin(), large.end(), 1024));
  EXPECT_LT(large.size(), 30u);
}

// A predicted block's layout is one that holds it: the nearest measured size's nodes (at most
// one per rank) with the block's own rank count, in the file's comment, the report and the
// tracer's probe (before: the measured size's layout as it was, e.g. 8 nodes x 1 rank named for
// 12 ranks, 2 nodes x 1 rank for 3, and the report said only "from P=8").
TEST(ClusterRules, APredictedBlockNamesALayoutThatHoldsIt) {
  auto context = [](std::int64_t id, int comm_size, int nodes, int ppn) {
    ContextRecord c;
    c.id = id;
    c.campaign_id = 1;
    c.collective = Collective::bcast;
    c.comm_size = comm_size;
    c.nodes = nodes;
    c.ppn = ppn;
    c.state = ContextState::done;
    c.result = {{"picks", {{{"msg_size", 4}, {"best", TuningConfig{}}}}}};
    return c;
  };
  std::vector<ContextRecord> contexts = {context(1, 2, 2, 1), context(2, 8, 8, 1)};
  nlohmann::json predicted = nlohmann::json::array();
  for (int p : {3, 4, 5, 6, 7, 12})
    predicted.push_back({{"comm_size", p},
                         {"msg_size", 4},
                         {"best", TuningConfig{}},
                         {"confidence", 0.5},
                         {"latency_us", 2.0},
                         {"default_us", 2.0}});
  contexts[0].result["cluster"] = {{"strategy", "bo-cluster"},
                                   {"min_confidence", 0.8},
                                   {"measured", {2, 8}},
                                   {"max_comm_size", 12},
                                   {"predicted", predicted}};

  const ClusterRulesInput input = cluster_rules_input(contexts);
  auto comment = [&](int p) {
    for (const auto& c : input.comments)
      if (c.rfind("bcast P=" + std::to_string(p) + ": ", 0) == 0) return c;
    return std::string();
  };
  // 3 ranks cannot sit on 2 nodes x 1 rank: 3 ranks on those 2 nodes.
  EXPECT_NE(comment(3).find("layout of P=2 (2 nodes x 1 ranks), here 3 ranks on 2 nodes"),
            std::string::npos)
      << comment(3);
  // 5, 6 and 7 take 8's nodes, one rank each.
  EXPECT_NE(comment(6).find("layout of P=8 (8 nodes x 1 ranks), here 6 nodes x 1 ranks"),
            std::string::npos)
      << comment(6);
  // 12 ranks on 8 nodes (not "8 nodes x 1 ranks").
  EXPECT_NE(comment(12).find("layout of P=8 (8 nodes x 1 ranks), here 12 ranks on 8 nodes"),
            std::string::npos)
      << comment(12);
  ASSERT_FALSE(input.probes.empty());
  EXPECT_EQ(input.probes.front().comm_size, 3);
  EXPECT_EQ(input.probes.front().nodes, 2);

  // The report: next to layout_from (the measured size), the layout itself.
  const nlohmann::json report = cluster_report(contexts, AlgorithmTable::builtin_4_1());
  std::map<int, nlohmann::json> layout;
  for (const auto& p : report.at("predicted")) {
    layout[p.at("comm_size").get<int>()] = p.at("layout");
    const int p_size = p.at("comm_size").get<int>();
    const int nodes = p.at("layout").at("nodes").get<int>();
    EXPECT_LE(nodes, p_size) << p.dump();
    if (!p.at("layout").at("ppn").is_null()) {
      EXPECT_EQ(nodes * p.at("layout").at("ppn").get<int>(), p_size) << p.dump();
    }
  }
  EXPECT_EQ(layout.at(3), nlohmann::json::parse(R"({"nodes": 2, "ppn": null})"));
  EXPECT_EQ(layout.at(6), nlohmann::json::parse(R"({"nodes": 6, "ppn": 1})"));
  EXPECT_EQ(layout.at(12), nlohmann::json::parse(R"({"nodes": 8, "ppn": null})"));
}

// ---- end to end on the sim backend ----

// The sim, but every run of the jobs whose tag is in `failing` fails at launch (exit 1, no
// rows: a look whose runs all failed); other jobs run as on the sim.
class FailingJobs : public FaultInjectingBackend {
 public:
  FailingJobs(std::shared_ptr<Backend> inner, std::set<std::string> failing)
      : FaultInjectingBackend(inner, FaultInjectionOptions{.failure_rate = 1.0}),
        inner_(std::move(inner)),
        failing_(std::move(failing)) {}
  void run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) override {
    if (failing_.count(request.tag))
      FaultInjectingBackend::run(request, sink, cancel);
    else
      inner_->run(request, sink, cancel);
  }

 private:
  std::shared_ptr<Backend> inner_;
  std::set<std::string> failing_;
};

class WholeCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("colltune-whole-cluster-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    store_ = std::make_unique<Store>((dir_ / "store.db").string());
    backend_ = make_backend("sim", nlohmann::json::object());
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  RulesStageResult rules(std::int64_t id, const std::string& format) {
    JobExecutor executor(*store_, *backend_, nullptr);
    RulesStageOptions o;
    o.rules_path = dir_ / ("rules-" + format);
    o.work_dir = dir_;
    o.format = format;
    CancelFlag cancel;
    return finish_campaign_rules(*store_, executor, table_, id, o, cancel);
  }

  // The configuration the campaign meant at (collective, P, OSU size): the final pick at a
  // measured size, the predicted pick at a predicted one, the default above the largest size.
  TuningConfig intended(std::int64_t id, Collective coll, int p, std::int64_t msg) {
    for (const auto& c : store_->contexts(id)) {
      if (c.collective != coll) continue;
      if (c.comm_size == p) {
        for (const auto& pick : c.result.at("picks"))
          if (pick.at("msg_size").get<std::int64_t>() == msg) {
            const auto best = pick.at("best").get<TuningConfig>();
            // The file writes knobs an algorithm does not read as 0.
            const AlgorithmInfo* info = table_.at(coll).find(best.algorithm);
            if (!info || best.algorithm == 0) return TuningConfig::default_decision();
            return {best.algorithm, info->uses_segsize ? best.segsize : 0,
                    info->uses_fanout ? best.fanout : 0};
          }
        return TuningConfig::default_decision();
      }
      if (c.result.is_object() && c.result.contains("cluster"))
        for (const auto& pick : c.result.at("cluster").at("predicted"))
          if (pick.at("comm_size").get<int>() == p &&
              pick.at("msg_size").get<std::int64_t>() == msg) {
            const auto best = pick.at("best").get<TuningConfig>();
            const AlgorithmInfo* info = table_.at(coll).find(best.algorithm);
            if (!info || best.algorithm == 0) return TuningConfig::default_decision();
            return {best.algorithm, info->uses_segsize ? best.segsize : 0,
                    info->uses_fanout ? best.fanout : 0};
          }
    }
    return TuningConfig::default_decision();
  }

  // Reduce at 2, 4, 8 and 16 ranks, 4 B to 1 MiB, batches of `batch`, `node_seconds` as
  // `budget` (total_node_seconds: search and final phases; budget_node_seconds: the search
  // only): several batches of one job per size and several final looks, small enough for the
  // sanitizers.
  static CampaignSpec reduce_campaign(const std::string& budget = "total_node_seconds",
                                      int batch = 8, double node_seconds = 180) {
    nlohmann::json j = {{"backend", "sim"},
                        {"contexts", nlohmann::json::array()},
                        {"sizes", "4:1048576"},
                        {"budget", 0},
                        {"batch_size", batch},
                        {"final_repeats", 3},
                        {"cluster", {{"strategy", "bo-cluster"}, {budget, node_seconds}}}};
    for (int p : {2, 4, 8, 16})
      j["contexts"].push_back({{"collective", "reduce"}, {"comm_size", p}});
    return parse_campaign_spec(j);
  }

  // What a campaign did and decided: its jobs (tag, request, runs: configuration, latencies,
  // seconds) in the order they were created and every context's result.
  struct Job {
    std::string tag;
    nlohmann::json request;
    std::vector<std::tuple<TuningConfig, std::vector<double>, double>> runs;
    bool operator==(const Job&) const = default;
  };
  static std::pair<std::vector<Job>, std::vector<nlohmann::json>> read(Store& store,
                                                                       std::int64_t id) {
    std::vector<Job> jobs;
    for (const auto& job : store.jobs(id)) {
      Job j{job.tag, job.request, {}};
      for (const auto& run : store.runs_of_job(job.id)) {
        std::vector<double> rows;
        for (const auto& row : run.rows) rows.push_back(row.avg_us);
        j.runs.emplace_back(run.config, rows, observed_seconds(run.provenance));
      }
      jobs.push_back(std::move(j));
    }
    std::vector<nlohmann::json> results;
    for (const auto& c : store.contexts(id)) results.push_back(c.result);
    return {jobs, results};
  }

  // The same jobs, runs and results as `expected` (from read()).
  static void expect_same(
      const std::pair<std::vector<Job>, std::vector<nlohmann::json>>& got,
      const std::pair<std::vector<Job>, std::vector<nlohmann::json>>& expected) {
    const auto& [jobs, results] = expected;
    ASSERT_EQ(got.first.size(), jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i)
      EXPECT_TRUE(got.first[i] == jobs[i]) << jobs[i].tag << " / " << got.first[i].tag;
    ASSERT_EQ(got.second.size(), results.size());
    for (std::size_t i = 0; i < results.size(); ++i)
      EXPECT_TRUE(got.second[i] == results[i])
          << "context " << i << ": "
          << nlohmann::json::diff(results[i], got.second[i]).dump().substr(0, 2000);
  }

  // The store at `live` as a SIGKILL would leave it at this moment, written to `copy`: everything
  // committed and nothing else (VACUUM INTO from a connection of its own).
  static void copy_as_killed(const fs::path& live, const fs::path& copy) {
    sql::Database(live.string()).exec_script(("VACUUM INTO '" + copy.string() + "'").c_str());
  }

  // Runs `spec` once uninterrupted, then again interrupted inside those of its final jobs that
  // `interrupt_in` names (by index, in the order they started, and the comm sizes of all the
  // final jobs in that order; once one run of it is recorded)
  // and resumed: the same jobs, runs and results. `leftover`: the uninterrupted campaign has a
  // leftover look (true), runs its phases smallest first (false), or either (nullopt). The
  // interrupted campaigns share the search: each starts from a copy of the store taken as the
  // first final job started (copy_as_killed; the same campaign, so the same tags, which the
  // sim's noise follows), so it is also a campaign killed there and resumed, and each runs in
  // a store of its own (`name`-...).
  void check_interrupted_in_final_jobs(
      const CampaignSpec& spec, std::optional<bool> leftover, const std::string& name,
      const std::function<bool(std::size_t, const std::vector<int>&)>& interrupt_in) {
    const fs::path live = dir_ / (name + ".db");
    const fs::path at_final = dir_ / (name + "-at-the-final-phase.db");
    Store store(live.string());
    const auto whole = CampaignEngine::create_campaign(store, spec);
    std::vector<int> final_sizes;
    {
      StoreEventSink events(store, [&](const std::string& type, const nlohmann::json& p) {
        if (type != "job_started" || p.value("purpose", std::string()) != "final") return;
        if (final_sizes.empty()) copy_as_killed(live, at_final);
        final_sizes.push_back(p.at("comm_size").get<int>());
      });
      CancelFlag go_on;
      CampaignEngine engine(store, *backend_, table_, &events);
      ASSERT_EQ(engine.run(whole, go_on), EngineOutcome::completed) << engine.error();
    }
    // Under a total budget the phases run largest first, and a leftover look is a final job at
    // a size above the one before it; otherwise they run smallest first.
    if (leftover == true) {
      ASSERT_EQ(final_sizes.front(), 16);
      bool after_smaller = false;
      for (std::size_t i = 1; i < final_sizes.size(); ++i)
        after_smaller = after_smaller || final_sizes[i] > final_sizes[i - 1];
      ASSERT_TRUE(after_smaller) << "no leftover look in this campaign";
    } else if (leftover == false) {
      ASSERT_TRUE(std::is_sorted(final_sizes.begin(), final_sizes.end()));
    }
    const auto whole_campaign = read(store, whole);

    std::size_t interrupted = 0;
    for (std::size_t at = 0; at < final_sizes.size(); ++at)
      interrupted += interrupt_in(at, final_sizes);
    std::printf("[ figures  ] %s: interrupted in %zu of %zu final jobs\n", name.c_str(),
                interrupted, final_sizes.size());
    for (std::size_t at = 0; at < final_sizes.size(); ++at) {
      if (!interrupt_in(at, final_sizes)) continue;
      SCOPED_TRACE("interrupted in final job " + std::to_string(at + 1) + " of " +
                   std::to_string(final_sizes.size()) + " (" + std::to_string(final_sizes[at]) +
                   " ranks)");
      const fs::path path = dir_ / (name + "-interrupted-" + std::to_string(at) + ".db");
      fs::copy_file(at_final, path);
      Store other(path.string());
      const std::int64_t id = whole;
      {
        CancelFlag cancel;
        std::size_t finals = 0;
        int runs_in_job = 0;
        StoreEventSink events(other, [&](const std::string& type, const nlohmann::json& p) {
          if (p.value("purpose", std::string()) != "final") return;
          if (type == "job_started") ++finals;
          if (type == "run" && finals == at + 1 && ++runs_in_job == 1) cancel.cancel();
        });
        CampaignEngine engine(other, *backend_, table_, &events);
        ASSERT_EQ(engine.run(id, cancel), EngineOutcome::interrupted);
        ASSERT_EQ(finals, at + 1);
        ASSERT_EQ(runs_in_job, 1);
      }
      CancelFlag go_on;
      CampaignEngine engine(other, *backend_, table_);
      ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
      expect_same(read(other, id), whole_campaign);
    }
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Backend> backend_;
  const AlgorithmTable& table_ = AlgorithmTable::builtin_4_1();
};

TEST_F(WholeCluster, OneSearchPerCollectiveAndAFileFrom2RanksThatEveryReaderReadsAlike) {
  const CampaignSpec spec = parse_campaign_spec(cluster_spec_json({2, 4, 8}));
  CampaignEngine::check_admissible(*store_, *backend_, spec);
  const auto id = CampaignEngine::create_campaign(*store_, spec);
  std::vector<nlohmann::json> started, stopped;  // context_started, search_stopped events
  StoreEventSink events(*store_, [&](const std::string& type, const nlohmann::json& payload) {
    if (type == "context_started") started.push_back(payload);
    if (type == "search_stopped") stopped.push_back(payload);
  });
  CampaignEngine engine(*store_, *backend_, table_, &events);
  CancelFlag cancel;
  ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
  // Per collective: its whole-cluster search over the three sizes, then each size's final
  // phase, announced as such (a progress display must not show it as a search of its own);
  // the search's end is announced once, for all the sizes, with all their runs.
  ASSERT_EQ(stopped.size(), 2u);
  for (const auto& s : stopped) {
    EXPECT_EQ(s.at("comm_sizes"), nlohmann::json({2, 4, 8})) << s.dump();
    EXPECT_EQ(s.at("evaluations"), 18) << s.dump();
    EXPECT_EQ(s.at("stop_reason").get<std::string>().rfind("budget: 18 runs", 0), 0u) << s.dump();
  }
  ASSERT_EQ(started.size(), 2u * 4u);
  constexpr std::array<int, 3> kSizes = {2, 4, 8};
  for (std::size_t i = 0; i < started.size(); ++i) {
    if (i % 4 == 0) {
      EXPECT_EQ(started[i].at("comm_sizes"), nlohmann::json({2, 4, 8})) << started[i].dump();
      EXPECT_EQ(started[i].at("planned"), 18) << "the run budget, 6 per size";
    } else {
      EXPECT_EQ(started[i].at("phase"), "final") << started[i].dump();
      EXPECT_EQ(started[i].at("comm_size"), kSizes[i % 4 - 1]) << started[i].dump();
    }
  }

  // One search per collective: budget 6 per size x 3 sizes, spread over the sizes; every run
  // recorded on its size's context with that context's layout.
  const auto contexts = store_->contexts(id);
  std::map<Collective, int> search_runs;
  for (const auto& c : contexts) {
    EXPECT_EQ(c.state, ContextState::done);
    int runs = 0;
    for (const auto& job : store_->jobs(id))
      if (job.context_id == c.id && job.purpose == JobPurpose::search) {
        const BenchmarkRequest r = job.request.get<BenchmarkRequest>();
        EXPECT_EQ(r.comm_size, c.comm_size);
        EXPECT_EQ(r.nodes, c.nodes);
        runs += static_cast<int>(store_->runs_of_job(job.id).size());
      }
    EXPECT_GT(runs, 0) << name(c.collective) << " P=" << c.comm_size;
    search_runs[c.collective] += runs;
  }
  EXPECT_EQ(search_runs[Collective::bcast], 18);
  EXPECT_EQ(search_runs[Collective::reduce], 18);

  // The predictions: every size from 2 to 8 not run, per message size, with a confidence.
  const auto report = campaign_report(*store_, id, table_);
  std::set<std::pair<std::string, int>> predicted_sizes;
  for (const auto& p : report.at("predicted")) {
    EXPECT_EQ(p.at("source"), "predicted");
    EXPECT_TRUE(p.at("confidence").is_number());
    predicted_sizes.insert({p.at("collective").get<std::string>(), p.at("comm_size").get<int>()});
  }
  EXPECT_EQ(predicted_sizes, (std::set<std::pair<std::string, int>>{{"bcast", 3},
                                                                    {"bcast", 5},
                                                                    {"bcast", 6},
                                                                    {"bcast", 7},
                                                                    {"reduce", 3},
                                                                    {"reduce", 5},
                                                                    {"reduce", 6},
                                                                    {"reduce", 7}}));
  // Some predicted cells carry a tuned choice (the sim's landscapes differ enough from the
  // default), each with the model's confidence above the campaign's threshold.
  int tuned_predictions = 0;
  for (const auto& p : report.at("predicted"))
    if (p.at("best").at("algorithm").get<int>() != 0) {
      ++tuned_predictions;
      EXPECT_GE(p.at("confidence").get<double>(), 0.8) << p.dump();
    }
  EXPECT_GT(tuned_predictions, 0);
  for (const auto& r : report.at("results")) EXPECT_EQ(r.at("source"), "measured");
  ASSERT_EQ(report.at("cluster").size(), 2u);
  EXPECT_EQ(report.at("cluster")[0].at("max_comm_size"), 8);

  // The file for each version, read back by that version's reader: at every P from 2 to
  // beyond the largest size and every message size, Open MPI runs what the campaign meant.
  struct Target {
    std::string format;
    RulesDialect dialect;
  };
  // (The stage validates against the backend's Open MPI, 4.1.4 for the sim: it writes the
  // classic file; the v2 and JSON files are written from the same model.)
  const RulesStageResult stage = rules(id, "classic");
  ASSERT_TRUE(stage.error.empty()) << stage.error;
  EXPECT_NE(stage.content.find("PREDICTED"), std::string::npos);
  EXPECT_NE(stage.content.find("bcast above 8 ranks"), std::string::npos);
  EXPECT_NE(stage.content.find("measured on 1 node x 4 ranks"), std::string::npos);
  const RulesModel written = parse_rules(stage.content, RulesDialect::ompi_4_1);
  for (const auto& target :
       {Target{"classic", RulesDialect::ompi_4_1}, Target{"v2", RulesDialect::ompi_v2},
        Target{"json", RulesDialect::ompi_main}}) {
    const std::string text = write_rules(written, *parse_rules_format(target.format));
    const RulesReadResult read = read_rules_text(text, target.dialect);
    ASSERT_TRUE(read.loaded) << target.format << ": " << read.reason;
    for (Collective coll : {Collective::bcast, Collective::reduce})
      for (int p = 2; p <= 12; ++p)
        for (std::int64_t m : osu_message_sizes(coll, spec.min_size, spec.max_size))
          EXPECT_EQ(configured_choice(read.model, coll, p, m, read.semantics),
                    p > 8 ? TuningConfig::default_decision() : intended(id, coll, p, m))
              << target.format << " " << name(coll) << " P=" << p << " size " << m;
  }
  // The classic file read with main's range semantics would shift blocks: why main gets JSON.
  const RulesModel& model = written;
  int differs = 0;
  for (int p = 2; p <= 12; ++p)
    for (std::int64_t m : osu_message_sizes(Collective::reduce, spec.min_size, spec.max_size))
      differs +=
          configured_choice(model, Collective::reduce, p, m, LookupSemantics::ompi_4_1) !=
          configured_choice(model, Collective::reduce, p, m, LookupSemantics::ompi_main_classic);
  EXPECT_GT(differs, 0);
}

TEST_F(WholeCluster, ASizeTheBudgetNeverRanKeepsTheDefaultAndTheCampaignStillWritesItsFile) {
  // A node-second budget so small that the search runs only the cheap sizes: the largest is
  // never run, and the model is not confident there. The campaign must not fail after spending
  // the budget: that size keeps Open MPI's default, says why, and the file stays valid.
  nlohmann::json spec_json = cluster_spec_json({2, 4, 64});
  spec_json["contexts"] = nlohmann::json::array({{{"collective", "bcast"}, {"comm_size", 2}},
                                                 {{"collective", "bcast"}, {"comm_size", 4}},
                                                 {{"collective", "bcast"}, {"comm_size", 64}}});
  spec_json["cluster"] = {
      {"strategy", "bo-cluster"}, {"min_confidence", 0.999}, {"budget_node_seconds", 0.02}};
  const CampaignSpec spec = parse_campaign_spec(spec_json);
  const auto id = CampaignEngine::create_campaign(*store_, spec);
  CampaignEngine engine(*store_, *backend_, table_);
  CancelFlag cancel;
  ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
  std::set<int> never_run;
  for (const auto& c : store_->contexts(id)) {
    EXPECT_EQ(c.state, ContextState::done) << c.comm_size;
    if (!store_->runs_of_context(c.id, JobPurpose::search).empty()) continue;
    never_run.insert(c.comm_size);
    ASSERT_TRUE(c.result.contains("picks")) << c.result.dump();
    ASSERT_FALSE(c.result.at("picks").empty());
    for (const auto& pick : c.result.at("picks")) {
      EXPECT_TRUE(pick.at("best").get<TuningConfig>().is_default()) << pick.dump();
      EXPECT_NE(pick.value("note", std::string()).find("not run"), std::string::npos)
          << pick.dump();
    }
  }
  ASSERT_FALSE(never_run.empty()) << "the budget was meant to leave a size without runs";
  ASSERT_LT(never_run.size(), 3u) << "and to run some";
  // The report says which cells were never run, and why.
  const auto report = campaign_report(*store_, id, table_);
  int not_run_cells = 0;
  for (const auto& r : report.at("results"))
    if (never_run.count(r.at("comm_size").get<int>())) {
      EXPECT_EQ(r.at("source"), "not_run") << r.dump();
      EXPECT_NE(r.value("note", std::string()).find("budget"), std::string::npos) << r.dump();
      ++not_run_cells;
    } else {
      EXPECT_EQ(r.at("source"), "measured") << r.dump();
    }
  EXPECT_GT(not_run_cells, 0);
  // The file is valid, says which sizes were never run, and Open MPI runs its default there.
  const RulesStageResult stage = rules(id, "classic");
  ASSERT_TRUE(stage.error.empty()) << stage.error;
  for (int p : never_run)
    EXPECT_NE(stage.content.find("bcast P=" + std::to_string(p) + ": NOT RUN"), std::string::npos)
        << stage.content;
  const RulesReadResult read = read_rules_text(stage.content, RulesDialect::ompi_4_1);
  ASSERT_TRUE(read.loaded) << read.reason;
  for (int p : never_run)
    for (std::int64_t m : osu_message_sizes(Collective::bcast, spec.min_size, spec.max_size))
      EXPECT_EQ(configured_choice(read.model, Collective::bcast, p, m, read.semantics),
                TuningConfig::default_decision())
          << "P=" << p << " size " << m;
}

TEST_F(WholeCluster, AnInterruptedCampaignResumesWithoutLosingOrRepeatingRuns) {
  // The default model (bo-cluster): its state is what a resume continues from.
  nlohmann::json spec_json = cluster_spec_json({2, 4, 8});
  spec_json["cluster"]["strategy"] = "bo-cluster";
  const CampaignSpec spec = parse_campaign_spec(spec_json);
  const auto id = CampaignEngine::create_campaign(*store_, spec);
  CancelFlag cancel;
  int jobs_done = 0;
  {
    // Interrupted after the third search job of the first collective.
    StoreEventSink events(*store_, [&](const std::string& type, const nlohmann::json&) {
      if (type == "job_done" && ++jobs_done == 3) cancel.cancel();
    });
    CampaignEngine engine(*store_, *backend_, table_, &events);
    ASSERT_EQ(engine.run(id, cancel), EngineOutcome::interrupted);
  }
  // What was recorded before the interruption stays; the strategy's state is on the lead.
  std::size_t runs_before = 0;
  for (const auto& job : store_->jobs(id)) runs_before += store_->runs_of_job(job.id).size();
  EXPECT_GT(runs_before, 0u);
  const auto lead_state = store_->contexts(id).front().optimizer_state;
  ASSERT_TRUE(lead_state.is_object());
  EXPECT_EQ(lead_state.at("strategy"), "bo-cluster");

  CancelFlag go_on;
  CampaignEngine engine(*store_, *backend_, table_);
  ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
  // No run lost, none repeated: the search made exactly its budget per collective, each
  // (size, configuration) once.
  for (const auto& group : cluster_groups(store_->contexts(id))) {
    int runs = 0;
    std::set<std::pair<int, TuningConfig>> seen;
    for (const auto& c : group)
      for (const auto& run : store_->runs_of_context(c.id, JobPurpose::search)) {
        ++runs;
        EXPECT_TRUE(seen.insert({c.comm_size, run.config}).second)
            << name(c.collective) << " P=" << c.comm_size << " " << to_string(run.config);
      }
    EXPECT_EQ(runs, 18) << name(group.front().collective);
  }
  // And the file is valid and covers every size.
  const RulesStageResult stage = rules(id, "classic");
  ASSERT_TRUE(stage.error.empty()) << stage.error;
  const RulesReadResult read = read_rules_text(stage.content, RulesDialect::ompi_4_1);
  ASSERT_TRUE(read.loaded) << read.reason;
  for (int p = 2; p <= 9; ++p)
    for (std::int64_t m : osu_message_sizes(Collective::bcast, spec.min_size, spec.max_size))
      EXPECT_EQ(configured_choice(read.model, Collective::bcast, p, m, read.semantics),
                p > 8 ? TuningConfig::default_decision() : intended(id, Collective::bcast, p, m));
}

TEST_F(WholeCluster, ACampaignInterruptedInItsFinalPhasesUnderATotalBudgetResumesWithinIt) {
  // A budget for the whole campaign (search and final phases), interrupted in the middle of
  // its final phases: the resume plans the first looks of the sizes not started on what is
  // left, and the campaign still keeps to its budget and writes a valid file.
  nlohmann::json spec_json = cluster_spec_json({2, 4, 8});
  spec_json["cluster"]["strategy"] = "bo-cluster";
  spec_json["cluster"]["total_node_seconds"] = 60;
  spec_json.erase("budget");
  const CampaignSpec spec = parse_campaign_spec(spec_json);
  const auto id = CampaignEngine::create_campaign(*store_, spec);
  CancelFlag cancel;
  int final_jobs = 0;
  {
    StoreEventSink events(*store_, [&](const std::string& type, const nlohmann::json& p) {
      if (type == "job_started" && p.value("purpose", std::string()) == "final" &&
          ++final_jobs == 2)
        cancel.cancel();
    });
    CampaignEngine engine(*store_, *backend_, table_, &events);
    ASSERT_EQ(engine.run(id, cancel), EngineOutcome::interrupted);
  }
  ASSERT_EQ(final_jobs, 2) << "interrupted in the final phases";
  CancelFlag go_on;
  CampaignEngine engine(*store_, *backend_, table_);
  ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
  for (const auto& group : cluster_groups(store_->contexts(id))) {
    double spent = 0;
    int final_runs = 0;
    for (const auto& c : group)
      for (const auto& run : store_->runs_of_context(c.id)) {
        spent += observed_seconds(run.provenance) * std::max(1, c.nodes);
        final_runs += run.purpose == JobPurpose::final;
      }
    EXPECT_LE(spent, 60.0) << name(group.front().collective);
    EXPECT_GT(final_runs, 0) << name(group.front().collective);
  }
  const RulesStageResult stage = rules(id, "classic");
  ASSERT_TRUE(stage.error.empty()) << stage.error;
  EXPECT_TRUE(read_rules_text(stage.content, RulesDialect::ompi_4_1).loaded);
}

TEST_F(WholeCluster, ACampaignInterruptedInAnyFinalLookEndsAsIfNeverInterrupted) {
  // The final phases and the predictions read the model as the search left it. Under a budget
  // for the whole campaign, which nominees a look tests also depends on the plan of the first
  // looks, on what the looks before it left out for money, and (after every size's first pass)
  // on the money the planned looks left (leftover_look_budget). Interrupted inside any of its
  // final jobs (one run of it recorded), the campaign resumes and ends with the same jobs, runs
  // and results as one never interrupted (the sim's noise follows the job's tag), the leftover
  // look included; with a budget for the search only, too. Under the total, search batches of
  // 3 and 160 node-seconds: this campaign then has a leftover look (with batches of 8 and 180
  // it has none, as in TuneCliTest.WholeClusterMoneyThePlannedLooksLeftPaysForMoreLooks).
  // Under the sanitizers (kSanitized), in the first and the last final job and in every
  // leftover look only (phases largest first: a final job at a size above the one before it,
  // and not above the first).
  const auto any_or_sample = [](std::size_t at, const std::vector<int>& sizes) {
    return !kSanitized || at == 0 || at + 1 == sizes.size() ||
           (sizes[at] > sizes[at - 1] && sizes[at] <= sizes.front());
  };
  for (const char* budget : {"total_node_seconds", "budget_node_seconds"}) {
    SCOPED_TRACE(budget);
    const bool total = std::string(budget) == "total_node_seconds";
    check_interrupted_in_final_jobs(
        total ? reduce_campaign(budget, 3, 160) : reduce_campaign(budget), total, budget,
        any_or_sample);
  }
}

TEST_F(WholeCluster, ASizesFinalTestPoolsTheVarianceOfItsNeighbourSizesPairs) {
  // Without a budget for the whole campaign the sizes' final phases run smallest first, so each
  // size's test pools the variance of the same candidate's pairs at the size below it
  // (docs/final-choice.md, "Neighbouring communicator sizes"). Every interval the campaign
  // wrote is the one computed from the size's own pairs with those of the size below lent, and
  // the pooling changed some of them.
  const CampaignSpec spec = reduce_campaign("budget_node_seconds");
  const auto id = CampaignEngine::create_campaign(*store_, spec);
  {
    CampaignEngine engine(*store_, *backend_, table_);
    CancelFlag go_on;
    ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
  }
  const auto sizes = osu_message_sizes(Collective::reduce, spec.min_size, spec.max_size);
  auto final_data = [&](const ContextRecord& c) {
    return paired_final_data(store_->runs_of_context(c.id, JobPurpose::final), sizes);
  };
  const auto contexts = cluster_groups(store_->contexts(id)).at(0);
  ASSERT_EQ(contexts.size(), 4u);
  int checked = 0, changed = 0;
  for (std::size_t k = 1; k < contexts.size(); ++k) {
    const PairedFinalData own = final_data(contexts[k]), below = final_data(contexts[k - 1]);
    for (const auto& pick : contexts[k].result.at("picks")) {
      if (pick.at("candidate").is_null() || pick.at("ratio_high").is_null()) continue;
      const auto candidate = pick.at("candidate").get<TuningConfig>();
      const auto at = static_cast<std::size_t>(
          std::find(sizes.begin(), sizes.end(), pick.at("msg_size").get<std::int64_t>()) -
          sizes.begin());
      PairedTestOptions test;  // the looks of the Bonferroni split, from the stated confidence
      test.looks = static_cast<int>(std::lround(0.05 / (1 - pick.at("confidence").get<double>())));
      const auto pooled = paired_final_intervals(own, spec.min_gain, test, {below});
      const auto alone = paired_final_intervals(own, spec.min_gain, test);
      const double high = pick.at("ratio_high").get<double>();
      EXPECT_NEAR(high, pooled.at(candidate)[at].upper, 1e-9 * high)
          << contexts[k].comm_size << " ranks, " << sizes[at] << " B";
      ++checked;
      changed += std::abs(alone.at(candidate)[at].upper - high) > 1e-9 * high;
    }
  }
  std::printf("[ figures  ] %d intervals checked, %d changed by the pooling\n", checked, changed);
  EXPECT_GT(checked, 0);
  EXPECT_GT(changed, 0);
}

TEST_F(WholeCluster, ACampaignInterruptedInALookWhoseRunsAllFailedEndsAsIfNeverInterrupted) {
  // A look none of whose runs measured anything (the job's every run failed at launch) is
  // still a look: the pass counts it, its nominees stay untested, and its money is spent. A
  // campaign interrupted inside that look resumes and ends as the same campaign never
  // interrupted.
  const CampaignSpec spec = reduce_campaign();
  // The tags of the final jobs, from the campaign without failures (the tags follow the
  // campaign and the jobs before them, so the campaign with the failure has the same ones up
  // to the failing job).
  std::vector<std::string> final_tags;
  {
    const auto id = CampaignEngine::create_campaign(*store_, spec);
    CampaignEngine engine(*store_, *backend_, table_);
    CancelFlag go_on;
    ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
    for (const auto& job : store_->jobs(id))
      if (job.purpose == JobPurpose::final) final_tags.push_back(job.tag);
  }
  ASSERT_GE(final_tags.size(), 3u);
  const std::string failing = final_tags[1];
  backend_ = std::make_unique<FailingJobs>(
      std::shared_ptr<Backend>(make_backend("sim", nlohmann::json::object())),
      std::set<std::string>{failing});
  // Interrupted inside the look whose runs all fail (the second final job; a replay that
  // skipped such a look ended differently there).
  check_interrupted_in_final_jobs(spec, std::nullopt, "after-failed-look",
                                  [](std::size_t at, const std::vector<int>&) { return at == 1; });
  // The uninterrupted campaign had that look, all its runs failed, and final jobs followed it.
  Store store((dir_ / "after-failed-look.db").string());
  int failed = 0, finals_after = 0;
  bool seen = false;
  for (const auto& job : store.jobs(store.campaigns().front().id)) {
    if (job.purpose != JobPurpose::final) continue;
    if (seen) ++finals_after;
    if (job.tag != failing) continue;
    seen = true;
    for (const auto& run : store.runs_of_job(job.id)) {
      EXPECT_NE(run.outcome, RunOutcome::ok);
      ++failed;
    }
  }
  EXPECT_TRUE(seen);
  EXPECT_GT(failed, 0);
  EXPECT_GT(finals_after, 0) << "no final job after the failed look";
}

TEST_F(WholeCluster, ACampaignKilledInsideASearchBatchEndsAsIfNeverKilled) {
  // A search batch is one job per size, and the strategy's state after the batch includes the
  // runs of all of them. A daemon killed (SIGKILL) between two of the store's transactions
  // leaves what was committed; a restart must find the batch's jobs all finished with that
  // state, or none of them. Each job was once completed with the state in a transaction of its
  // own: killed in between, a restart ran the unfinished jobs' recorded runs through the
  // strategy a second time, and the campaign ended with other jobs and other predictions
  // (31 jobs instead of 34 here; `DaemonKill.AWholeClusterCampaign...` found it in 3 of 43 runs on
  // a loaded machine). The kill is emulated by copying the store as it stood (VACUUM INTO, from a
  // connection of its own: everything committed, nothing else) when the first job of the first
  // batch of more than one job was reported done; the copy is resumed and must end as the campaign
  // that was never stopped.
  const CampaignSpec spec = reduce_campaign();
  const fs::path live = dir_ / "killed-inside-a-batch.db";
  const fs::path copy = dir_ / "killed-inside-a-batch-copy.db";
  std::vector<std::int64_t> done;  // the search jobs reported done, in order
  std::int64_t id = 0;
  {
    Store store(live.string());
    id = CampaignEngine::create_campaign(store, spec);
    StoreEventSink events(store, [&](const std::string& type, const nlohmann::json& p) {
      if (type != "job_done") return;
      done.push_back(p.at("job_id").get<std::int64_t>());
      // The first batch is the default at the cheapest size alone; the second has one job
      // per size.
      if (done.size() == 2) copy_as_killed(live, copy);
    });
    CancelFlag go_on;
    CampaignEngine engine(store, *backend_, table_, &events);
    ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
  }
  Store store(live.string());
  const auto never_killed = read(store, id);
  ASSERT_GE(done.size(), 3u);
  Store killed(copy.string());
  // The copy was made inside a batch: the job reported done next was in it already.
  ASSERT_TRUE(killed.job(done[2]));
  CancelFlag go_on;
  CampaignEngine engine(killed, *backend_, table_);
  ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
  expect_same(read(killed, id), never_killed);
}

TEST_F(WholeCluster, ACampaignKilledAfterAnyCommitEndsAsIfNeverKilled) {
  // A SIGKILL leaves the store as its last commit left it, and some commits have no event
  // after them (a run recorded, a job marked submitted): the test above copies the store at an
  // event, this one after any commit. The campaign runs once; after each commit of its store
  // (Store::on_commit) the file may be copied as it stands (copy_as_killed), so that the copies
  // kept are a uniform sample of 4 of all its commits (reservoir sampling, seeded at
  // random: the seed and the commit are in the failure's trace). Each copy, resumed, must end
  // as the campaign never killed. COLLTUNE_COMMIT_SAMPLES=N keeps N copies (more than the
  // commits: every commit; docs/reliability.md has that run's figures).
  std::size_t samples = 4;
  if (const char* n = std::getenv("COLLTUNE_COMMIT_SAMPLES"); n && std::atoi(n) > 0)
    samples = static_cast<std::size_t>(std::atoi(n));
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("rng seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const CampaignSpec spec = reduce_campaign();
  const fs::path live = dir_ / "killed-after-a-commit.db";
  std::vector<std::pair<std::size_t, fs::path>> copies;  // (commit, copy), a uniform sample
  std::size_t commits = 0;
  std::int64_t id = 0;
  {
    Store store(live.string());
    store.on_commit([&] {
      ++commits;
      std::size_t slot = copies.size();
      if (copies.size() == samples) {
        slot = std::uniform_int_distribution<std::size_t>(0, commits - 1)(rng);
        if (slot >= samples) return;
        fs::remove(copies[slot].second);
      } else {
        copies.emplace_back();
      }
      const fs::path copy = dir_ / ("after-commit-" + std::to_string(commits) + ".db");
      copy_as_killed(live, copy);
      copies[slot] = {commits, copy};
    });
    id = CampaignEngine::create_campaign(store, spec);
    CancelFlag go_on;
    CampaignEngine engine(store, *backend_, table_);
    ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
    store.on_commit(nullptr);
  }
  Store store(live.string());
  const auto never_killed = read(store, id);
  ASSERT_GT(commits, 100u) << "the hook did not see the campaign's commits";
  ASSERT_EQ(copies.size(), std::min(samples, commits));
  std::sort(copies.begin(), copies.end());
  std::printf("[ figures  ] %zu commits, %zu copies resumed (rng seed %u)\n", commits,
              copies.size(), seed);
  for (const auto& [commit, path] : copies) {
    SCOPED_TRACE("killed after commit " + std::to_string(commit) + " of " +
                 std::to_string(commits));
    Store killed(path.string());
    CancelFlag go_on;
    CampaignEngine engine(killed, *backend_, table_);
    ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
    expect_same(read(killed, id), never_killed);
  }
}

TEST_F(WholeCluster, ReplaysTheRecordedOrnlSweepAcrossCommSizes) {
  // The recorded ORNL Peak sweep (bench/data/ornl-peak-other-sizes.csv, gather: 4 algorithm
  // ids, segment size and fan-out never varied) through the replay backend: one bo-cluster
  // search over 2, 4 and 8 ranks, configurations the sweep did not record come back
  // `unavailable` and are never asked again, and the file covers 2-8 ranks.
  backend_ = make_backend("replay", {{"dataset", std::string(COLLTUNE_SOURCE_DIR) +
                                                     "/bench/data/ornl-peak-other-sizes.csv"},
                                     {"where", {{"collective", "gather"}}}});
  nlohmann::json j = cluster_spec_json({2, 4, 8});
  j["backend"] = "replay";
  j["contexts"] = nlohmann::json::array();
  for (int p : {2, 4, 8}) j["contexts"].push_back({{"collective", "gather"}, {"comm_size", p}});
  j["sizes"] = "1:1M";
  j["budget"] = 8;
  j["cluster"] = {{"strategy", "bo-cluster"}, {"min_confidence", 0.8}};
  const CampaignSpec spec = parse_campaign_spec(j);
  CampaignEngine::check_admissible(*store_, *backend_, spec);
  const auto id = CampaignEngine::create_campaign(*store_, spec);
  CampaignEngine engine(*store_, *backend_, table_);
  CancelFlag cancel;
  ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
  std::map<int, int> replayed;  // comm size -> runs answered from the recording
  std::set<std::pair<int, TuningConfig>> unavailable;
  for (const auto& c : store_->contexts(id)) {
    EXPECT_EQ(c.state, ContextState::done);
    for (const auto& job : store_->jobs(id))
      if (job.context_id == c.id && job.purpose == JobPurpose::search)
        for (const auto& run : store_->runs_of_job(job.id)) {
          if (run.outcome == RunOutcome::ok) ++replayed[c.comm_size];
          if (run.outcome == RunOutcome::unavailable) {
            EXPECT_TRUE(unavailable.insert({c.comm_size, run.config}).second)
                << "asked twice for an unrecorded configuration at P=" << c.comm_size;
          }
        }
  }
  EXPECT_EQ(replayed.size(), 3u);
  EXPECT_FALSE(unavailable.empty());  // the search space has knobs the sweep never varied
  const auto report = campaign_report(*store_, id, table_);
  std::set<int> predicted;
  for (const auto& p : report.at("predicted")) predicted.insert(p.at("comm_size").get<int>());
  EXPECT_EQ(predicted, (std::set<int>{3, 5, 6, 7}));
  const RulesStageResult stage = rules(id, "classic");
  ASSERT_TRUE(stage.error.empty()) << stage.error;
  const RulesReadResult read = read_rules_text(stage.content, RulesDialect::ompi_4_1);
  ASSERT_TRUE(read.loaded) << read.reason;
  for (int p = 2; p <= 9; ++p)
    for (std::int64_t m : osu_message_sizes(Collective::gather, spec.min_size, spec.max_size))
      EXPECT_EQ(configured_choice(read.model, Collective::gather, p, m, read.semantics),
                p > 8 ? TuningConfig::default_decision() : intended(id, Collective::gather, p, m))
          << "P=" << p << " size " << m;
}

// Both kinds of campaign search through the same loop and job runner (optimizer/search_loop.h,
// campaign/search_jobs.h): a cancel in the middle of a batch leaves that batch's jobs recorded
// with the searcher's state, and the resume finishes exactly those jobs (only their missing
// runs) before asking for anything new. The same assertions hold for a per-context campaign and
// a whole-cluster one.
TEST_F(WholeCluster, AnInterruptedBatchResumesExactlyAsInAPerContextCampaign) {
  for (const bool whole_cluster : {false, true}) {
    SCOPED_TRACE(whole_cluster ? "whole-cluster" : "per-context");
    nlohmann::json spec_json = cluster_spec_json({2, 4, 8});
    // The Bayesian strategy of each kind (both keep their pending suggestions in their state).
    if (whole_cluster) {
      spec_json["cluster"]["strategy"] = "bo-cluster";
    } else {
      spec_json.erase("cluster");
      spec_json["strategy"] = "bo";
    }
    const CampaignSpec spec = parse_campaign_spec(spec_json);
    const auto id = CampaignEngine::create_campaign(*store_, spec);
    CancelFlag cancel;
    {
      // Cancelled at the first run of the second search batch: inside a job.
      int jobs_done = 0, runs_after = 0;
      StoreEventSink events(*store_, [&](const std::string& type, const nlohmann::json&) {
        if (type == "job_done") ++jobs_done;
        if (type == "run" && jobs_done >= 1 && ++runs_after == 1) cancel.cancel();
      });
      CampaignEngine engine(*store_, *backend_, table_, &events);
      ASSERT_EQ(engine.run(id, cancel), EngineOutcome::interrupted);
    }
    // The interrupted batch: its jobs exist, some of their runs are recorded, not all.
    std::map<std::int64_t, std::size_t> unfinished;  // job -> runs it is to make
    std::size_t recorded = 0, planned = 0;
    for (const auto& job : store_->jobs(id)) {
      if (job.state == JobState::done) continue;
      EXPECT_EQ(job.purpose, JobPurpose::search);
      const auto request = job.request.get<BenchmarkRequest>();
      unfinished[job.id] = request.configs.size() * static_cast<std::size_t>(request.repeats);
      recorded += store_->runs_of_job(job.id).size();
      planned += unfinished[job.id];
    }
    ASSERT_FALSE(unfinished.empty());
    EXPECT_GT(recorded, 0u);
    EXPECT_LT(recorded, planned);
    // The searcher's state after its suggestion is on the context that holds it (the
    // interrupted job's own, or the lead of its collective): every configuration of the
    // interrupted batch is pending there, so the resume observes it instead of asking again.
    std::size_t batch_configs = 0;
    for (const auto& [job_id, runs] : unfinished)
      batch_configs += store_->job(job_id)->request.at("configs").size();
    const std::int64_t job_context = store_->job(unfinished.begin()->first)->context_id;
    nlohmann::json state;
    for (const auto& group : cluster_groups(store_->contexts(id)))
      for (const auto& c : group)
        if (c.id == job_context)
          state = whole_cluster ? cluster_lead(group).optimizer_state : c.optimizer_state;
    ASSERT_TRUE(state.is_object());
    EXPECT_EQ(state.at("pending").size(), batch_configs) << state.at("pending").dump();

    CancelFlag go_on;
    CampaignEngine engine(*store_, *backend_, table_);
    ASSERT_EQ(engine.run(id, go_on), EngineOutcome::completed) << engine.error();
    // The interrupted jobs were finished, with exactly their own runs; nothing was measured
    // twice: the search made the very runs the same campaign makes uninterrupted (a store of
    // its own numbers its contexts alike, so the seeds agree), its budget of 6 per size.
    auto search_runs = [](Store& store, std::int64_t campaign) {
      std::multiset<std::tuple<std::string, int, TuningConfig>> runs;
      for (const auto& c : store.contexts(campaign)) {
        EXPECT_EQ(c.state, ContextState::done);
        for (const auto& run : store.runs_of_context(c.id, JobPurpose::search))
          runs.insert({std::string(name(c.collective)), c.comm_size, run.config});
      }
      return runs;
    };
    Store reference_store((dir_ / (whole_cluster ? "ref-cluster.db" : "ref.db")).string());
    const auto reference = CampaignEngine::create_campaign(reference_store, spec);
    CampaignEngine reference_engine(reference_store, *backend_, table_);
    ASSERT_EQ(reference_engine.run(reference, go_on), EngineOutcome::completed);
    const auto resumed = search_runs(*store_, id);
    EXPECT_EQ(resumed.size(), 36u);
    EXPECT_EQ(resumed, search_runs(reference_store, reference));
    store_ = std::make_unique<Store>((dir_ / (whole_cluster ? "b.db" : "a.db")).string());
  }
}

TEST_F(WholeCluster, SizesTheBackendCannotRunAreRefusedBeforeAnythingRuns) {
  // An OSU directory with the two benchmarks (admission only looks for them).
  fs::create_directories(dir_ / "osu");
  for (const char* b : {"osu_bcast", "osu_reduce"}) {
    std::ofstream(dir_ / "osu" / b) << "#!/bin/sh\n";
    fs::permissions(dir_ / "osu" / b, fs::perms::owner_all);
  }
  auto local = make_backend(
      "local", {{"osu_dir", (dir_ / "osu").string()}, {"cores", 2}, {"max_ranks_per_core", 4}});
  const CampaignSpec spec = parse_campaign_spec(cluster_spec_json({2, 4, 8, 16}));
  const std::string why = refusal([&] { CampaignEngine::check_admissible(*store_, *local, spec); });
  EXPECT_NE(why.find("P=16"), std::string::npos) << why;
  auto unknown = cluster_spec_json({2, 4});
  unknown["cluster"]["strategy"] = "oracle";
  const std::string no_strategy = refusal(
      [&] { CampaignEngine::check_admissible(*store_, *backend_, parse_campaign_spec(unknown)); });
  EXPECT_NE(no_strategy.find("unknown cluster strategy 'oracle'"), std::string::npos)
      << no_strategy;
  auto beyond = cluster_spec_json({2, 4});
  beyond["cluster"]["predict_up_to"] = 32;
  const std::string too_far = refusal(
      [&] { CampaignEngine::check_admissible(*store_, *local, parse_campaign_spec(beyond)); });
  EXPECT_NE(too_far.find("cluster.predict_up_to: P=32"), std::string::npos) << too_far;
  EXPECT_TRUE(store_->campaigns().empty());
}

}  // namespace
}  // namespace colltune
