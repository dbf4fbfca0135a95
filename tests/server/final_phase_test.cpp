// The paired final phase and the verification that acts.
//  - Engine, simulated backend (no MPI): small spaces cost no more final runs than the search,
//    every pick carries its interval, a size is changed only where the candidate was proven
//    faster, and the report marks ties.
//  - Rules stage, real Open MPI (label mpi): a size measured significantly slower with the file
//    loaded is reverted to the default, the file is rewritten, validated and verified again, the
//    report says which size and why, and only the rewritten version is deployable. The slowdown
//    is controlled: a wrapper of the local backend inflates the latency of the runs made with
//    the rules file at one size; everything else (mpirun, the tracer, OSU) is real. A size
//    slower with the file that one burst run hides from the first look gets a second look.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/job_executor.h"
#include "campaign/report.h"
#include "campaign/rules_stage.h"
#include "campaign/store.h"
#include "core/algorithm_table.h"
#include "core/file_text.h"
#include "optimizer/search_space.h"
#include "runner/backend_factory.h"
#include "runner/local_backend.h"
#include "runner/sim_backend.h"
#include "tests/support/temp_dir.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

TEST(PairedFinalPhase, SmallSpacesCostNoMoreThanTheSearchAndPicksCarryIntervals) {
  const testing::TempDir scratch("colltune-final-phase-engine");
  const fs::path& dir = scratch.path();
  Store store((dir / "c.db").string());
  // Noise-free: the statistics are unit-tested on noisy synthetic data (paired_test_test.cpp);
  // here the engine must turn the simulator's true winners into picks, and nothing else.
  auto backend_ptr = make_backend("sim", {{"profile", "pise"}, {"noise", "none"}});
  auto& backend = dynamic_cast<SimBackend&>(*backend_ptr);
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  const CampaignSpec spec =
      parse_campaign_spec({{"backend", "sim"},
                           {"contexts", json::array({{{"collective", "gather"}, {"comm_size", 4}},
                                                     {{"collective", "bcast"}, {"comm_size", 4}}})},
                           {"sizes", "4:1M"},
                           {"strategy", "bo"},
                           {"budget", 20},
                           {"seed", 3}});
  const auto id = CampaignEngine::create_campaign(store, spec);
  CampaignEngine engine(store, backend, table);
  CancelFlag cancel;
  ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
  for (const auto& ctx : store.contexts(id)) {
    const auto search = store.runs_of_context(ctx.id, JobPurpose::search).size();
    const auto final_runs = store.runs_of_context(ctx.id, JobPurpose::final).size();
    SearchSpace space(ctx.collective, ctx.comm_size, table);
    if (space.size() < 20) {
      EXPECT_LE(final_runs, search) << name(ctx.collective);
    }
    for (const auto& pick : ctx.result.at("picks")) {
      EXPECT_EQ(pick.at("method"), "paired");
      const auto best = pick.at("best").get<TuningConfig>();
      if (!best.is_default()) {
        // Changed only where proven faster: the whole interval below 1.
        EXPECT_EQ(pick.at("verdict"), "faster") << pick.dump();
        EXPECT_LT(pick.at("ratio_high").get<double>(), 1.0) << pick.dump();
        EXPECT_GE(pick.at("pairs").get<int>(), 2);
        // ... and truly faster in the simulator's noise-free model.
        const auto size = pick.at("msg_size").get<std::int64_t>();
        EXPECT_LT(backend.model().latency_us(ctx.collective, ctx.comm_size, best, size),
                  backend.model().latency_us(ctx.collective, ctx.comm_size, TuningConfig{}, size))
            << pick.dump();
      }
    }
  }
  const json report = campaign_report(store, id, table);
  int changed = 0;
  for (const auto& r : report.at("results")) {
    changed += r.at("best").at("algorithm").get<int>() != 0;
    ASSERT_TRUE(r.contains("speedup_low") && r.contains("speedup_high") && r.contains("pairs"))
        << r.dump();
    const bool is_default = r.at("best").at("algorithm").get<int>() == 0;
    if (is_default) {
      EXPECT_TRUE(r.at("tie").get<bool>());
      EXPECT_DOUBLE_EQ(r.at("speedup").get<double>(), 1.0);
    } else {
      EXPECT_GT(r.at("speedup_low").get<double>(), 1.0) << r.dump();
      EXPECT_FALSE(r.at("tie").get<bool>());
    }
  }
  std::printf("%d of %zu sizes changed\n", changed, report.at("results").size());
  EXPECT_GT(changed, 0) << "the simulated cluster has clear winners";
}

// The local backend, with the runs made with a rules file loaded (and no tracer) reported
// `factors[size]` times slower at each size the map names.
// With `burst` > 1, the first re-measure run without the file is reported `burst` times slower
// at every size: one run in a burst of the shared machine.
class SlowerWithFileBackend : public Backend {
 public:
  SlowerWithFileBackend(LocalBackend& inner, std::map<std::int64_t, double> factors,
                        double burst = 1)
      : inner_(inner), factors_(std::move(factors)), burst_(burst) {}
  std::string name() const override { return inner_.name(); }
  BackendInfo describe() override { return inner_.describe(); }
  bool runs_real_open_mpi() const override { return true; }
  std::string ompi_info_parsable() override { return inner_.ompi_info_parsable(); }
  std::string preflight(const BenchmarkRequest& r) override { return inner_.preflight(r); }
  void run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) override {
    const bool with_file =
        request.extra_mca.count("coll_tuned_dynamic_rules_filename") && request.extra_env.empty();
    const bool burst =
        burst_ > 1 && !burst_done_ && request.tag.find("remeasure-default") != std::string::npos;
    burst_done_ = burst_done_ || burst;
    struct Inflate : RunSink {
      RunSink& out;
      bool active;
      const std::map<std::int64_t, double>& factors;
      double burst;
      Inflate(RunSink& o, bool a, const std::map<std::int64_t, double>& f, double b)
          : out(o), active(a), factors(f), burst(b) {}
      void on_result(const RunResult& result) override {
        RunResult r = result;
        for (auto& row : r.rows) {
          row.avg_us *= burst;
          if (auto f = factors.find(row.size); active && f != factors.end())
            row.avg_us *= f->second;
        }
        out.on_result(r);
      }
    } inflate(sink, with_file, factors_, burst ? burst_ : 1.0);
    inner_.run(request, inflate, cancel);
  }

 private:
  LocalBackend& inner_;
  std::map<std::int64_t, double> factors_;
  double burst_ = 1;
  bool burst_done_ = false;
};

// Open MPI's own algorithm table, or the built-in one when ompi_info cannot tell.
AlgorithmTable table_of(LocalBackend& local) {
  try {
    return AlgorithmTable::from_ompi_info(local.ompi_info_parsable());
  } catch (...) {
    return AlgorithmTable::builtin_4_1();
  }
}

// A done reduce campaign at 4 ranks, 4-64 B, whose picks are binary (4) at `changed` and the
// default elsewhere. Binary is what Open MPI's fixed decision runs at 16 B and 32 B on 4 ranks
// anyway (the verification table shows it), so there it is never really slower: the only real
// difference the tests see there is the one they inject.
std::int64_t reduce_campaign_with_picks(Store& store, const std::set<std::int64_t>& changed) {
  const CampaignSpec spec = parse_campaign_spec(
      {{"backend", "local"},
       {"contexts", json::array({{{"collective", "reduce"}, {"comm_size", 4}}})},
       {"sizes", "4:64"},
       {"iterations", 20},
       {"warmup", 2},
       {"seed", 5}});
  const auto id = CampaignEngine::create_campaign(store, spec);
  const auto ctx = store.contexts(id).front();
  json picks = json::array();
  for (std::int64_t size : {4, 8, 16, 32, 64}) {
    const bool is_changed = changed.count(size) > 0;
    picks.push_back({{"msg_size", size},
                     {"best", is_changed ? TuningConfig{4, 0, 0} : TuningConfig{}},
                     {"best_us", 2.0},
                     {"default_us", 2.0},
                     {"noise", 0.0},
                     {"default_within_noise", !is_changed},
                     {"samples", 4}});
  }
  store.save_context_result(ctx.id, {{"picks", picks}, {"evaluations", 0}, {"space", 0}});
  store.set_context_state(ctx.id, ContextState::done);
  return id;
}

// The rules stage of campaign `id` on `backend`: the file at dir/rules.conf, 4 re-measure rounds
// per look.
RulesStageResult run_rules_stage(Store& store, Backend& backend, const AlgorithmTable& table,
                                 std::int64_t id, const fs::path& dir) {
  JobExecutor executor(store, backend, nullptr);
  RulesStageOptions options;
  options.rules_path = dir / "rules.conf";
  options.work_dir = dir / "work";
  options.remeasure_rounds = 4;
  CancelFlag cancel;
  return finish_campaign_rules(store, executor, table, id, options, cancel);
}

// What the re-measurement measured, for failure messages: the verification text, each rules
// version's record and every run's outcome and latencies.
std::string remeasured_text(Store& store, std::int64_t id, const RulesStageResult& result) {
  std::string out = result.verification_text;
  for (const auto& v : store.rules_versions(id)) out += "\n" + v.verification.dump();
  for (const auto& job : store.jobs(id))
    for (const auto& run : store.runs_of_job(job.id)) {
      out += "\n" + job.tag + ": " + std::string(to_string(run.outcome)) + " " + run.error;
      for (const auto& row : run.rows)
        out += " " + std::to_string(row.size) + "B=" + std::to_string(row.avg_us);
    }
  return out;
}

TEST(VerificationActs, SlowerSizeIsRevertedAndTheFileRewrittenAndReverified) {
  const testing::TempDir scratch("colltune-final-phase-revert");
  const fs::path& dir = scratch.path();
  Store store((dir / "c.db").string());
  LocalBackendOptions local_options;
  local_options.osu_dir = COLLTUNE_OSU_BENCH_DIR;
  LocalBackend local(local_options);
  // With the file, 16 B is reported 100x slower and 32 B 100x faster. Both picks run the same
  // code as the default (below), so the only real difference the test sees is the injected one
  // (a pick that ran another algorithm could itself be several times faster or slower on
  // another machine: basic linear at 16 B measured 0.3-0.7x the default's binary tree here).
  // 100x, because beside other MPI tests (ctest -j 2) one run of four may land in a burst: one
  // default run there measured 2-28x slower than its pair at every size, and with 10x at 16 B
  // the interval of the four pairs reached below 1 (ratio 3.8, interval 0.89-16.5), so nothing
  // was reverted. 32 B is
  // made faster, not left equal, so that "not reverted" does not rest on a 2.5 % chance per
  // pass of a same-code size measured significantly slower.
  SlowerWithFileBackend backend(local, {{16, 100.0}, {32, 0.01}});
  const AlgorithmTable table = table_of(local);
  const auto id = reduce_campaign_with_picks(store, {16, 32});

  const RulesStageResult result = run_rules_stage(store, backend, table, id, dir);
  ASSERT_TRUE(result.error.empty()) << result.error << "\n" << result.verification_text;
  EXPECT_TRUE(result.verified);
  // 16 B was reverted (100x slower with the file); 32 B (faster with it) was not.
  // On failure: what the re-measurement measured (each size's pairs, ratio and interval) and
  // each re-measure run's outcome, so that a failure on another machine explains itself.
  ASSERT_EQ(result.reverted.size(), 1u) << remeasured_text(store, id, result);
  EXPECT_EQ(result.reverted[0].at("msg_size"), 16);
  EXPECT_NE(result.reverted[0].at("reason").get<std::string>().find("slower"), std::string::npos);

  const auto versions = store.rules_versions(id);  // newest first
  ASSERT_GE(versions.size(), 2u);
  const auto& newest = versions.front();
  EXPECT_TRUE(newest.verification.at("verified").get<bool>()) << newest.verification.dump(2);
  EXPECT_TRUE(newest.verification.at("deployable").get<bool>());
  EXPECT_EQ(newest.verification.at("reason"), "");
  const auto& first = versions.back();
  EXPECT_FALSE(first.verification.at("deployable").get<bool>());
  EXPECT_EQ(first.verification.at("reverted").size(), 1u);
  // The file on disk is the rewritten version, and it was traced again.
  const std::string on_disk = read_file_text(dir / "rules.conf").value_or("");
  EXPECT_EQ(on_disk, newest.content);
  EXPECT_NE(first.content, newest.content);
  int verify_jobs = 0;
  for (const auto& job : store.jobs(id)) verify_jobs += job.purpose == JobPurpose::verify;
  EXPECT_GE(verify_jobs, 2);
  // The picks say default at 16 B now, with the reason; the report shows it.
  const json report = campaign_report(store, id, table);
  bool found = false;
  for (const auto& r : report.at("results"))
    if (r.at("msg_size") == 16) {
      found = true;
      EXPECT_EQ(r.at("best").at("algorithm"), 0);
      EXPECT_TRUE(r.at("reverted").is_object());
      EXPECT_TRUE(r.at("tie").get<bool>());
    }
  EXPECT_TRUE(found);
  // The bands of the HTML report: each median lies in the range of the re-measure runs it is
  // the median of.
  int remeasured = 0;
  for (const auto& r : report.at("results")) {
    if (!r.at("remeasured").get<bool>()) continue;
    ++remeasured;
    for (const auto& [median, range] :
         {std::pair{"default_us", "default_us_range"}, std::pair{"best_us", "best_us_range"}}) {
      ASSERT_TRUE(r.at(range).is_array()) << r.dump();
      EXPECT_LE(r.at(range)[0].get<double>(), r.at(median).get<double>()) << r.dump();
      EXPECT_GE(r.at(range)[1].get<double>(), r.at(median).get<double>()) << r.dump();
    }
  }
  EXPECT_GT(remeasured, 0);
  EXPECT_EQ(report.at("rules").at("reverted").size(), 1u);
  EXPECT_TRUE(report.at("rules").at("deployable").get<bool>());
}

// One "no file" run in a burst (1000x slower at every size) hides a size 100x slower with the
// file from the first look of the re-measure: its ratio is above 1 but its interval reaches
// below 1 (4 pairs: one at 0.1x, three at 100x; about 0.2-1300x). The second look, 4 more
// rounds, proves it slower (about 6-300x), and it is reverted. With one look
// (remeasure_looks = 1) it stayed in the file. With one pair off by a factor F and the others
// alike, the first look stays open and the second proves the size slower while the slowdown
// lies between about F^0.42 and F^0.87; 100x against 1000x sits in the middle, so each look's
// verdict keeps a margin of about 4x for the bursts of a run of this test's own (seen: 4x and
// 20x in one run at ctest -j 3; with 10x against 30x the first look proved it already once).
TEST(VerificationActs, ASlowerSizeABurstHidesGetsASecondLookAndIsReverted) {
  const testing::TempDir scratch("colltune-final-phase-burst");
  const fs::path& dir = scratch.path();
  Store store((dir / "c.db").string());
  LocalBackendOptions local_options;
  local_options.osu_dir = COLLTUNE_OSU_BENCH_DIR;
  LocalBackend local(local_options);
  SlowerWithFileBackend backend(local, {{16, 100.0}}, /*burst=*/1000.0);
  const AlgorithmTable table = table_of(local);
  const auto id = reduce_campaign_with_picks(store, {16});

  const RulesStageResult result = run_rules_stage(store, backend, table, id, dir);
  ASSERT_TRUE(result.error.empty()) << result.error << "\n" << result.verification_text;
  ASSERT_EQ(result.reverted.size(), 1u) << remeasured_text(store, id, result);
  EXPECT_EQ(result.reverted[0].at("msg_size"), 16);
  EXPECT_EQ(result.reverted[0].at("pairs"), 8) << "reverted after the second look's 4 pairs";

  const auto versions = store.rules_versions(id);  // newest first
  ASSERT_EQ(versions.size(), 2u);
  const json& first = versions.back().verification.at("contexts").at(0);
  EXPECT_EQ(first.at("remeasure_looks"), 2) << first.dump();
  // The rewritten file changes nothing: one look, nothing to look at twice.
  const json& second = versions.front().verification.at("contexts").at(0);
  EXPECT_EQ(second.at("remeasure_looks"), 1) << second.dump();
  EXPECT_TRUE(versions.front().verification.at("deployable").get<bool>());
  // 2 looks x 4 rounds x (file, no file) in the first pass, 1 x 4 x 2 in the second.
  int remeasure_jobs = 0;
  for (const auto& job : store.jobs(id))
    remeasure_jobs +=
        job.purpose == JobPurpose::remeasure_tuned || job.purpose == JobPurpose::remeasure_default;
  EXPECT_EQ(remeasure_jobs, 16 + 8);
}

TEST(VerificationActs, SimulatedCampaignIsNotDeployable) {
  const testing::TempDir scratch("colltune-final-phase-sim");
  const fs::path& dir = scratch.path();
  Store store((dir / "c.db").string());
  SimBackend backend(sim::load_profile("local"), SimBackendOptions{});
  const AlgorithmTable& table = AlgorithmTable::builtin_4_1();
  const CampaignSpec spec =
      parse_campaign_spec({{"backend", "sim"},
                           {"contexts", json::array({{{"collective", "bcast"}, {"comm_size", 4}}})},
                           {"sizes", "4:1K"},
                           {"strategy", "exhaustive"}});
  const auto id = CampaignEngine::create_campaign(store, spec);
  CampaignEngine engine(store, backend, table);
  CancelFlag cancel;
  ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
  JobExecutor executor(store, backend, nullptr);
  RulesStageOptions options;
  options.rules_path = dir / "rules.conf";
  options.work_dir = dir / "work";
  const auto result = finish_campaign_rules(store, executor, table, id, options, cancel);
  EXPECT_TRUE(result.verification_skipped);
  const auto v = store.rules_versions(id).front().verification;
  EXPECT_FALSE(v.at("deployable").get<bool>());
  EXPECT_FALSE(v.at("verified").get<bool>());
  EXPECT_NE(v.at("reason").get<std::string>().find("not verified on the real Open MPI"),
            std::string::npos);
}

}  // namespace
}  // namespace colltune
