// Warm start on the simulated backend: after a small change of the cluster (the network a bit
// slower), a re-tuning campaign that starts from the first campaign's results reaches the
// regret of a cold campaign on the changed cluster for at most half of its benchmark cost.
//
// Regret is measured on the noise-free model of the changed cluster: per (context, size), the
// latency of the pick over the best latency of the whole search space, minus 1; averaged.
// Cost is the campaign's benchmark seconds (virtual clock: what the runs would have taken).
#include "campaign/retune_warm_start.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/cluster_search.h"
#include "campaign/event_sink.h"
#include "campaign/job_executor.h"
#include "campaign/report.h"
#include "campaign/retune.h"
#include "campaign/rules_stage.h"
#include "campaign/store.h"
#include "core/algorithm_table.h"
#include "optimizer/search_space.h"
#include "rules/rules_reader.h"
#include "runner/sim_backend.h"
#include "tests/support/temp_dir.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Outcome {
  std::int64_t campaign_id = 0;
  double regret = 0;          // mean over (context, size)
  double seconds = 0;         // benchmark seconds (search + final)
  double search_seconds = 0;  // of the search alone
  std::int64_t runs = 0;
};

// The collectives compared (96 ranks each): bcast and reduce, or COLLTUNE_RETUNE_BENCH_COLLECTIVES
// (e.g. "bcast,allreduce") to measure others.
std::vector<std::string> bench_collectives() {
  const char* env = std::getenv("COLLTUNE_RETUNE_BENCH_COLLECTIVES");
  std::vector<std::string> out;
  std::string text = env && *env ? env : "bcast,reduce";
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

sim::ClusterProfile perturbed(sim::ClusterProfile p, double bandwidth_scale, double latency_scale) {
  json j = p.to_json();
  for (auto& piece : j["inter_node"]["pieces"]) {
    piece["bandwidth_gbps"] = piece["bandwidth_gbps"].get<double>() * bandwidth_scale;
    piece["latency_us"] = piece["latency_us"].get<double>() * latency_scale;
  }
  j["name"] = p.name + "-perturbed";
  return sim::ClusterProfile::from_json(j);
}

// The exhaustive optimum of a cell, per profile: every campaign has a backend (and a model cache)
// of its own, and the cold and warm campaigns of every seed share one truth. The key is the
// profile's name: the two profiles here are named apart (pise, pise-perturbed).
double best_latency_us(const sim::SimModel& truth, const SearchSpace& space, Collective collective,
                       int comm_size, std::int64_t size) {
  static std::map<std::tuple<std::string, Collective, int, std::int64_t>, double> cache;
  const auto key = std::make_tuple(truth.profile().name, collective, comm_size, size);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& p : space.points())
    best = std::min(best, truth.latency_us(collective, comm_size, p, size));
  return cache[key] = best;
}

double regret_of(Store& store, std::int64_t campaign_id, const sim::SimModel& truth,
                 const AlgorithmTable& table) {
  double sum = 0;
  int cells = 0;
  for (const auto& ctx : store.contexts(campaign_id)) {
    SearchSpace space(ctx.collective, ctx.comm_size, table);
    for (const auto& pick : ctx.result.at("picks")) {
      const auto size = pick.at("msg_size").get<std::int64_t>();
      const double best = best_latency_us(truth, space, ctx.collective, ctx.comm_size, size);
      const double chosen = truth.latency_us(ctx.collective, ctx.comm_size,
                                             pick.at("best").get<TuningConfig>(), size);
      sum += chosen / best - 1.0;
      ++cells;
    }
  }
  return cells ? sum / cells : std::nan("");
}

Outcome run_campaign(Store& store, const sim::ClusterProfile& profile, std::uint64_t seed,
                     std::int64_t warm_from) {
  SimBackendOptions options;
  options.seed = seed;
  SimBackend backend(profile, options);
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  json contexts = json::array();
  for (const auto& c : bench_collectives())
    contexts.push_back({{"collective", c}, {"comm_size", 96}});
  CampaignSpec spec = parse_campaign_spec({{"name", warm_from ? "warm" : "cold"},
                                           {"backend", "sim"},
                                           {"contexts", contexts},
                                           {"sizes", "64:1M"},
                                           {"strategy", "bo"},
                                           {"batch_size", 4},
                                           // The search is compared here (warm vs cold); the
                                           // final choice by the lowest median keeps that
                                           // comparison independent of the paired test's cap,
                                           // which follows the search's cost (final_phase_tests).
                                           {"final_method", "median"},
                                           {"seed", seed}});
  spec.warm_start_from = warm_from;
  const auto id = CampaignEngine::create_campaign(store, spec);
  CampaignEngine engine(store, backend, table);
  CancelFlag cancel;
  EXPECT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
  Outcome o;
  o.campaign_id = id;
  o.regret = regret_of(store, id, backend.model(), table);
  o.seconds = campaign_benchmark_seconds(store, id);
  o.runs = store.count_runs(id);
  for (const auto& ctx : store.contexts(id))
    for (const auto& run : store.runs_of_context(ctx.id, JobPurpose::search))
      o.search_seconds += run.provenance.end_time - run.provenance.start_time;
  for (const auto& ctx : store.contexts(id))
    std::printf("  campaign %lld %s: search %zu final %zu evaluations %d\n",
                static_cast<long long>(id), std::string(name(ctx.collective)).c_str(),
                store.runs_of_context(ctx.id, JobPurpose::search).size(),
                store.runs_of_context(ctx.id, JobPurpose::final).size(),
                ctx.result.value("evaluations", 0));
  return o;
}

// The pise sim before and after a small change of the cluster: its inter-node network 20 %
// slower (bandwidth x 0.8, latency x 1.2), noise seed 3.
struct ChangedPise {
  SimBackendOptions options = [] {
    SimBackendOptions o;
    o.seed = 3;
    return o;
  }();
  sim::ClusterProfile base = sim::load_profile("pise");
  SimBackend before{base, options};
  SimBackend after{perturbed(base, 0.8, 1.2), options};
};

// The strategies evaluate the warm points first (after the default).
TEST(RetuneWarmStart, StrategiesStartFromTheWarmPoints) {
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  SearchSpace space(Collective::bcast, 8, table);
  StrategyOptions options;
  options.seed = 5;
  options.msg_sizes = {1024, 1 << 20};
  const std::vector<TuningConfig> warm = {{6, 8192, 0}, {2, 65536, 2}, {1, 0, 0}};
  options.warm_start_points = warm;
  for (const char* name : {"random", "exhaustive", "bo"}) {
    auto strategy = make_strategy(name, space, options);
    auto first = strategy->suggest(5);
    ASSERT_EQ(first.size(), 5u) << name;
    // random: the default first; bo: the default and its replicate (its noise model's first
    // data); exhaustive: the warm points lead.
    const std::size_t offset = std::string(name) == "exhaustive" ? 0
                               : std::string(name) == "bo"       ? 2
                                                                 : 1;
    for (std::size_t i = 0; i < offset; ++i) EXPECT_TRUE(first[i].is_default()) << name;
    for (std::size_t i = 0; i < 3 && offset + i < first.size(); ++i)
      EXPECT_EQ(first[offset + i], space.canonical(warm[i])) << name << " #" << i;
  }
  // Without warm points, bo's design is its Latin hypercube (not these).
  options.warm_start_points.clear();
  auto cold = make_strategy("bo", space, options)->suggest(4);
  EXPECT_NE(std::vector<TuningConfig>(cold.begin() + 1, cold.end()),
            std::vector<TuningConfig>(warm.begin(), warm.end()));
}

// The warm points and prior of a context come from the earlier campaign's matching context.
TEST(RetuneWarmStart, ApplyWarmStartReadsTheEarlierCampaign) {
  const testing::TempDir dir("retune-warm-apply");
  {
    Store store(dir / "store.db");
    const CampaignSpec spec = parse_campaign_spec({{"backend", "sim"},
                                                   {"contexts",
                                                    {{{"collective", "bcast"}, {"comm_size", 8}},
                                                     {{"collective", "reduce"}, {"comm_size", 8}}}},
                                                   {"sizes", "4:1M"}});
    const auto earlier = CampaignEngine::create_campaign(store, spec);
    const auto contexts = store.contexts(earlier);
    store.save_context_result(contexts[0].id,
                              {{"picks",
                                {{{"msg_size", 4}, {"best", TuningConfig{}}},
                                 {{"msg_size", 1024}, {"best", TuningConfig{6, 0, 0}}},
                                 {{"msg_size", 1 << 20}, {"best", TuningConfig{2, 65536, 2}}},
                                 {{"msg_size", 1 << 19}, {"best", TuningConfig{2, 65536, 2}}}}}});
    store.save_optimizer_state(contexts[0].id, {{"strategy", "bo"}, {"theta", {1.0, 2.0}}});
    const auto later = CampaignEngine::create_campaign(store, spec);
    const auto now = store.contexts(later);
    StrategyOptions options;
    EXPECT_EQ(apply_warm_start(store, earlier, now[0], options), 2u);
    EXPECT_EQ(options.warm_start_points, (std::vector<TuningConfig>{{6, 0, 0}, {2, 65536, 2}}));
    EXPECT_EQ(options.warm_start_state.at("theta").size(), 2u);
    StrategyOptions none;
    EXPECT_EQ(apply_warm_start(store, earlier, now[1], none), 0u);  // reduce: nothing recorded
    EXPECT_EQ(apply_warm_start(store, 0, now[0], none), 0u);
    EXPECT_TRUE(none.warm_start_points.empty());
  }
}

// A whole-cluster campaign re-tuned after the cluster changed: `retune` starts the same
// whole-cluster campaign (sizes, layouts, predict_up_to, cluster strategy, budget), warm-started
// per comm size: it re-measures the earlier picks, reuses the earlier runs as data, needs fewer
// new runs than the first campaign, recomputes every prediction (saying which changed), and its
// file validates and covers every size from 2 ranks to predict_up_to.
TEST(RetuneWarmStart, AWholeClusterCampaignIsReTunedAsAWarmStartedWholeClusterCampaign) {
  const testing::TempDir dir("retune-warm-cluster");
  Store store(dir / "store.db");
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  ChangedPise sim;
  SimBackend& before = sim.before;
  SimBackend& after = sim.after;

  json contexts = json::array();
  for (const char* c : {"bcast", "reduce"})
    for (int p : {2, 4, 8}) contexts.push_back({{"collective", c}, {"comm_size", p}});
  const CampaignSpec spec = parse_campaign_spec(
      {{"name", "cluster nightly"},
       {"backend", "sim"},
       {"contexts", contexts},
       {"sizes", "4:16K"},
       {"budget", 40},
       {"batch_size", 4},
       {"final_repeats", 2},
       {"seed", 5},
       {"cluster", {{"strategy", "bo-cluster"}, {"min_confidence", 0.8}, {"predict_up_to", 12}}}});
  const auto first = CampaignEngine::create_campaign(store, spec);
  {
    CampaignEngine engine(store, before, table);
    CancelFlag cancel;
    ASSERT_EQ(engine.run(first, cancel), EngineOutcome::completed) << engine.error();
  }
  store.set_campaign_state(first, CampaignState::done);
  RulesVersionRecord r;
  r.campaign_id = first;
  r.format = "classic";
  r.content = "1\n";
  r.fingerprint = backend_fingerprint("sim", json::object(), before);
  store.add_rules_version(r);

  // The re-tune: the model changed, so the fingerprint did.
  RetuneOptions options;
  const RetuneDecision d = retune(
      store, options,
      [&](const std::string& backend) {
        EXPECT_EQ(backend, "sim");
        return backend_fingerprint("sim", json::object(), after);
      },
      [&](const json& s) {
        return *store.campaign(CampaignEngine::create_campaign(store, parse_campaign_spec(s)));
      });
  ASSERT_EQ(d.action, "retune") << d.message;
  const auto second = d.campaign->id;
  const CampaignSpec again = parse_campaign_spec(d.campaign->spec);
  EXPECT_EQ(again.warm_start_from, first);
  EXPECT_TRUE(again.cluster.enabled);
  EXPECT_EQ(d.campaign->spec.at("cluster"), store.campaign(first)->spec.at("cluster"));
  EXPECT_EQ(d.campaign->spec.at("contexts"), store.campaign(first)->spec.at("contexts"));
  {
    // Interrupted after its second search job (in the warm points), then resumed: the warm
    // start's own state comes back with the strategy's.
    CancelFlag cancel;
    int jobs_done = 0;
    StoreEventSink events(store, [&](const std::string& type, const json&) {
      if (type == "job_done" && ++jobs_done == 2) cancel.cancel();
    });
    CampaignEngine engine(store, after, table, &events);
    ASSERT_EQ(engine.run(second, cancel), EngineOutcome::interrupted);
    ASSERT_TRUE(store.contexts(second).front().optimizer_state.contains("warm_start"));
  }
  {
    CampaignEngine engine(store, after, table);
    CancelFlag cancel;
    ASSERT_EQ(engine.run(second, cancel), EngineOutcome::completed) << engine.error();
  }
  for (const auto& c : store.contexts(second)) {
    std::set<TuningConfig> seen;
    for (const auto& run : store.runs_of_context(c.id, JobPurpose::search))
      EXPECT_TRUE(seen.insert(run.config).second) << c.comm_size << " " << to_string(run.config);
  }

  auto search_runs = [&](std::int64_t id) {
    std::size_t n = 0;
    for (const auto& c : store.contexts(id))
      n += store.runs_of_context(c.id, JobPurpose::search).size();
    return n;
  };
  const std::size_t first_runs = search_runs(first), second_runs = search_runs(second);
  std::printf("whole-cluster re-tune: first campaign %zu search runs, warm re-tune %zu\n",
              first_runs, second_runs);
  EXPECT_LT(second_runs, first_runs);

  // Same sizes and layouts, same predicted blocks; the warm start reported per collective.
  const auto layouts = [&](std::int64_t id) {
    std::set<std::tuple<int, int, int, int>> out;
    for (const auto& c : store.contexts(id))
      out.insert({static_cast<int>(c.collective), c.comm_size, c.nodes, c.ppn});
    return out;
  };
  EXPECT_EQ(layouts(second), layouts(first));
  const auto blocks = [&](std::int64_t id) {
    std::set<std::tuple<int, int, std::int64_t>> out;
    for (const auto& group : cluster_groups(store.contexts(id)))
      for (const auto& p : cluster_lead(group).result.at("cluster").at("predicted"))
        out.insert({static_cast<int>(group.front().collective), p.at("comm_size").get<int>(),
                    p.at("msg_size").get<std::int64_t>()});
    return out;
  };
  EXPECT_EQ(blocks(second), blocks(first));
  for (const auto& group : cluster_groups(store.contexts(second))) {
    const auto& cluster = cluster_lead(group).result.at("cluster");
    EXPECT_EQ(
        cluster.at("layouts"),
        cluster_lead(cluster_groups(store.contexts(first))[0]).result.at("cluster").at("layouts"));
    ASSERT_TRUE(cluster.contains("warm_start")) << cluster.dump();
    const auto& w = cluster.at("warm_start");
    std::printf("%s: stop %s, warm start %s\n", std::string(name(group.front().collective)).c_str(),
                cluster.at("stop_reason").dump().c_str(), w.dump().c_str());
    EXPECT_EQ(w.at("from_campaign"), first);
    EXPECT_FALSE(w.at("cold").get<bool>());
    EXPECT_GT(w.at("reused_runs").get<int>(), 0) << w.dump();
    EXPECT_EQ(w.at("remeasured").size(), 3u);  // each comm size
    const auto& pred = w.at("predictions");
    EXPECT_EQ(pred.at("recomputed").get<std::size_t>(), cluster.at("predicted").size());
    EXPECT_EQ(pred.at("changed").get<int>() + pred.at("unchanged").get<int>(),
              pred.at("recomputed").get<int>());
    EXPECT_EQ(pred.at("new"), 0);
    for (const auto& p : cluster.at("predicted")) EXPECT_TRUE(p.contains("previous_best"));
    // The final phase can still prove gains: the runs the warm start reused count with the
    // new ones in its cap (without them each size got one pair and proved nothing).
    int tuned_before = 0, tuned_now = 0;
    for (const auto& c : store.contexts(first))
      if (c.collective == group.front().collective)
        for (const auto& k : c.result.at("picks"))
          tuned_before += k.at("best").at("algorithm").get<int>() != 0;
    for (const auto& c : group)
      for (const auto& k : c.result.at("picks"))
        tuned_now += k.at("best").at("algorithm").get<int>() != 0;
    std::printf("%s: tuned measured picks, first campaign %d, re-tune %d\n",
                std::string(name(group.front().collective)).c_str(), tuned_before, tuned_now);
    if (tuned_before > 0) {
      EXPECT_GT(tuned_now, 0);
    }
    // The re-measured points ran first: the default at every size, in the first batches.
    std::set<int> default_at;
    for (const auto& c : group)
      for (const auto& run : store.runs_of_context(c.id, JobPurpose::search))
        if (run.config.is_default()) default_at.insert(c.comm_size);
    EXPECT_EQ(default_at, (std::set<int>{2, 4, 8}));
  }

  // The file validates (the rules stage) and covers every size from 2 to 12.
  JobExecutor executor(store, after, nullptr);
  RulesStageOptions o;
  o.rules_path = dir / "rules.conf";
  o.work_dir = dir.path();
  o.format = "classic";
  CancelFlag cancel;
  const RulesStageResult stage = finish_campaign_rules(store, executor, table, second, o, cancel);
  ASSERT_TRUE(stage.error.empty()) << stage.error;
  const RulesReadResult read = read_rules_text(stage.content, RulesDialect::ompi_4_1);
  ASSERT_TRUE(read.loaded) << read.reason;
  for (const auto& group : cluster_groups(store.contexts(second))) {
    std::set<int> covered;
    for (const auto& c : group) covered.insert(c.comm_size);
    for (const auto& p : cluster_lead(group).result.at("cluster").at("predicted"))
      covered.insert(p.at("comm_size").get<int>());
    std::set<int> all;
    for (int p = 2; p <= 12; ++p) all.insert(p);
    EXPECT_EQ(covered, all);
  }
}

// A whole-cluster re-tune under a node-second budget keeps to it as a cold campaign does: its
// re-measured points (the default and the earlier picks at every size) are runs like any other,
// so the first is sent alone (before a run reported its seconds, a price has no unit) and the
// rest while what is left of the budget pays for them at what the runs so far cost; those that do
// not fit are left out and reported. Before, the re-measured points went out in one batch
// whatever the budget: 13.5 node-seconds spent against 1 (docs/whole-cluster.md, "Re-tuning").
TEST(RetuneWarmStart, AWholeClusterReTuneKeepsToItsNodeSecondBudget) {
  const testing::TempDir dir("retune-warm-cluster-budget");
  Store store(dir / "store.db");
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  ChangedPise sim;

  json contexts = json::array();
  for (int p : {2, 4, 8}) contexts.push_back({{"collective", "bcast"}, {"comm_size", p}});
  const json spec = {{"name", "cluster nightly"},
                     {"backend", "sim"},
                     {"contexts", contexts},
                     {"sizes", "4:16K"},
                     {"budget", 40},
                     {"batch_size", 8},
                     {"final_repeats", 2},
                     {"seed", 5},
                     {"cluster", {{"strategy", "bo-cluster"}, {"predict_up_to", 12}}}};
  const auto first = CampaignEngine::create_campaign(store, parse_campaign_spec(spec));
  {
    CampaignEngine engine(store, sim.before, table);
    CancelFlag cancel;
    ASSERT_EQ(engine.run(first, cancel), EngineOutcome::completed) << engine.error();
  }
  // What one run costs at most (the sizes run 1 node each here).
  double dearest_run = 0;
  for (const auto& c : store.contexts(first))
    for (const auto& run : store.runs_of_context(c.id, JobPurpose::search))
      dearest_run = std::max(dearest_run, observed_seconds(run.provenance));
  ASSERT_GT(dearest_run, 0);

  for (const char* strategy : {"bo-cluster", "nearest"})
    for (const char* key : {"budget_node_seconds", "total_node_seconds"})
      for (double budget : {1.0, 10.0, 30.0}) {
        SCOPED_TRACE(std::string(strategy) + " " + key + " " + std::to_string(budget));
        json s = spec;
        s["name"] = "re-tune";
        s["cluster"]["strategy"] = strategy;
        s["cluster"][key] = budget;
        CampaignSpec again = parse_campaign_spec(s);
        again.warm_start_from = first;
        const auto id = CampaignEngine::create_campaign(store, again);
        CampaignEngine engine(store, sim.after, table);
        CancelFlag cancel;
        ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
        const CampaignReport report = build_campaign_report(store, id, table);
        const double search = report.cost.by_purpose.count(JobPurpose::search)
                                  ? report.cost.by_purpose.at(JobPurpose::search).node_seconds
                                  : 0.0;
        const double spent =
            std::string(key) == "total_node_seconds" ? report.cost.node_seconds : search;
        const auto group = store.contexts(id);
        const json cluster = cluster_lead(group).result.at("cluster");
        const auto& w = cluster.at("warm_start");
        std::printf("%s %s %.0f: spent %.1f node-s (search %.1f), stop %s, warm start %s\n",
                    strategy, key, budget, spent, search, cluster.at("stop_reason").dump().c_str(),
                    w.dump().c_str());
        // Within one run of the budget, and the budget is used (one run at least).
        EXPECT_LE(spent, budget + dearest_run);
        EXPECT_GT(search, 0);
        EXPECT_FALSE(w.at("cold").get<bool>());
        // The first search job is one run: the re-measured default at the cheapest size.
        std::vector<JobRecord> jobs;
        for (const auto& job : store.jobs(id))
          if (job.purpose == JobPurpose::search) jobs.push_back(job);
        ASSERT_FALSE(jobs.empty());
        const auto runs = store.runs_of_job(jobs.front().id);
        EXPECT_EQ(runs.size(), 1u);
        if (!runs.empty()) {
          EXPECT_TRUE(runs.front().config.is_default());
        }
        // What the budget left out is said: re-measured and left out make the earlier points.
        int points = 0, sent = 0;
        for (const auto& r : w.at("remeasured")) sent += static_cast<int>(r.at("configs").size());
        for (const auto& [p, configs] : cluster_warm_start(store, first, group, false).points)
          points += static_cast<int>(configs.size());
        EXPECT_EQ(sent + w.at("not_remeasured").get<int>(), points) << w.dump();
        if (budget <= 1) {
          EXPECT_EQ(sent, 1);
        }
      }
}

// A per-context campaign re-tuned warm-started, with the paired final phase (the default): the
// warm search re-measures a few configurations and reuses the earlier runs as data, so it makes
// far fewer runs than a cold search; the final phase's cap ("never more runs than the search
// made") counts the reused runs too, so it still has the pairs to prove the gains a cold
// campaign proves (without them: one or two pairs per candidate, and no gain proven at all).
TEST(RetuneWarmStart, APerContextReTuneCanStillProveTheGainsACampaignProves) {
  const testing::TempDir dir("retune-warm-paired");
  Store store(dir / "store.db");
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  const auto base = sim::load_profile("pise");
  const auto changed = perturbed(base, 0.8, 1.2);  // network 20 % slower
  auto run = [&](const sim::ClusterProfile& profile, std::uint64_t seed, std::int64_t from) {
    SimBackendOptions o;
    o.seed = seed;
    SimBackend backend(profile, o);
    CampaignSpec spec = parse_campaign_spec(
        {{"name", from ? "warm" : "cold"},
         {"backend", "sim"},
         {"contexts", {{{"collective", "reduce"}, {"comm_size", 4}, {"nodes", 2}}}},
         {"sizes", "4:64K"},
         {"strategy", "bo"},
         {"batch_size", 4},
         {"seed", seed}});
    EXPECT_EQ(spec.final_method, "paired");
    spec.warm_start_from = from;
    const auto id = CampaignEngine::create_campaign(store, spec);
    CampaignEngine engine(store, backend, table);
    CancelFlag cancel;
    EXPECT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
    return store.contexts(id).at(0);
  };
  auto tuned = [](const ContextRecord& c) {
    int n = 0;
    for (const auto& k : c.result.at("picks")) n += k.at("best").at("algorithm").get<int>() != 0;
    return n;
  };
  auto runs = [&](const ContextRecord& c, JobPurpose purpose) {
    return store.runs_of_context(c.id, purpose).size();
  };
  const ContextRecord first = run(base, 2, 0);
  const ContextRecord cold = run(changed, 102, 0);
  const ContextRecord warm = run(changed, 102, first.campaign_id);
  std::printf(
      "reduce P=4 on 2 nodes: first campaign %zu search / %zu final runs, %d sizes tuned; "
      "cold %zu / %zu, %d; warm %zu / %zu, %d\n",
      runs(first, JobPurpose::search), runs(first, JobPurpose::final), tuned(first),
      runs(cold, JobPurpose::search), runs(cold, JobPurpose::final), tuned(cold),
      runs(warm, JobPurpose::search), runs(warm, JobPurpose::final), tuned(warm));
  ASSERT_GT(tuned(cold), 0);
  EXPECT_LT(runs(warm, JobPurpose::search), runs(cold, JobPurpose::search));
  // The warm final phase ran more than its own search's runs: the reused ones count.
  EXPECT_GT(runs(warm, JobPurpose::final), runs(warm, JobPurpose::search));
  EXPECT_GE(2 * tuned(warm), tuned(cold));
}

// The warm start saves search: since bo spends at most 20 % of the space cold, the campaign's fixed
// final phase (finalists + default re-measured) is a large share of both, so the whole campaign
// only has to be cheaper, while its search must cost at most half.
TEST(RetuneWarmStart, SameRegretForAtMostHalfTheSearchCostAfterASmallChange) {
  const testing::TempDir dir("retune-warm");
  Store store(dir / "store.db");
  const auto base = sim::load_profile("pise");
  const auto changed = perturbed(base, 0.8, 1.2);  // network 20 % slower, latency 20 % higher

  double cold_regret = 0, warm_regret = 0, cold_seconds = 0, warm_seconds = 0;
  double cold_search = 0, warm_search = 0;
  std::int64_t cold_runs = 0, warm_runs = 0;
  const std::vector<std::uint64_t> seeds = {1, 2, 3};
  // The first campaign, on the cluster before the change (its regret is on that cluster).
  const Outcome first = run_campaign(store, base, 1, 0);
  std::printf("first campaign (before the change): regret %.4f, %.1f s, %lld runs\n", first.regret,
              first.seconds, static_cast<long long>(first.runs));
  for (std::uint64_t seed : seeds) {
    const Outcome cold = run_campaign(store, changed, seed + 100, 0);
    const Outcome warm = run_campaign(store, changed, seed + 100, first.campaign_id);
    std::printf(
        "seed %llu: cold regret %.4f, %.1f s, %lld runs | warm regret %.4f, %.1f s, %lld runs\n",
        static_cast<unsigned long long>(seed), cold.regret, cold.seconds,
        static_cast<long long>(cold.runs), warm.regret, warm.seconds,
        static_cast<long long>(warm.runs));
    cold_regret += cold.regret / seeds.size();
    warm_regret += warm.regret / seeds.size();
    cold_seconds += cold.seconds / seeds.size();
    warm_seconds += warm.seconds / seeds.size();
    cold_search += cold.search_seconds / seeds.size();
    warm_search += warm.search_seconds / seeds.size();
    cold_runs += cold.runs;
    warm_runs += warm.runs;
  }
  std::printf(
      "mean over %zu seeds: cold regret %.4f, %.1f s; warm regret %.4f, %.1f s "
      "(%.0f %% of cold); runs cold %lld warm %lld\n",
      seeds.size(), cold_regret, cold_seconds, warm_regret, warm_seconds,
      100.0 * warm_seconds / cold_seconds, static_cast<long long>(cold_runs),
      static_cast<long long>(warm_runs));
  std::printf("search alone: cold %.1f s, warm %.1f s (%.0f %%)\n", cold_search, warm_search,
              100.0 * warm_search / cold_search);
  EXPECT_LE(warm_regret, cold_regret + 0.01);
  EXPECT_LE(warm_search, 0.5 * cold_search);
  EXPECT_LT(warm_seconds, cold_seconds);
}

}  // namespace
}  // namespace colltune
