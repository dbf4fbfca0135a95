// Issue #15 on the real library: a whole-cluster campaign on the local backend (bcast at 2 and
// 3 ranks, the file predicted up to 4), its rules file verified with the algorithm tracer at
// both measured sizes and at the predicted size 4 (mpirun, OSU, the tracer all real).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/rules_stage.h"
#include "campaign/store.h"
#include "rules/rules_reader.h"
#include "runner/local_backend.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

TEST(WholeClusterMpi, LocalCampaignVerifiedAtMeasuredAndPredictedSizes) {
  const fs::path dir =
      fs::temp_directory_path() / ("colltune-wc-mpi-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  {
    Store store((dir / "c.db").string());
    LocalBackendOptions local_options;
    local_options.osu_dir = COLLTUNE_OSU_BENCH_DIR;
    LocalBackend local(local_options);
    const AlgorithmTable table = [&] {
      try {
        return AlgorithmTable::from_ompi_info(local.ompi_info_parsable());
      } catch (...) {
        return AlgorithmTable::builtin_4_1();
      }
    }();
    const CampaignSpec spec =
        parse_campaign_spec({{"backend", "local"},
                             {"contexts",
                              {{{"collective", "bcast"}, {"comm_size", 2}},
                               {{"collective", "bcast"}, {"comm_size", 3}}}},
                             {"sizes", "4:256"},
                             {"budget", 3},
                             {"iterations", 20},
                             {"warmup", 2},
                             {"final_repeats", 2},
                             {"cluster", {{"strategy", "nearest"}, {"predict_up_to", 4}}}});
    CampaignEngine::check_admissible(store, local, spec);
    const auto id = CampaignEngine::create_campaign(store, spec);
    CampaignEngine engine(store, local, table);
    CancelFlag cancel;
    ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
    for (const auto& c : store.contexts(id)) {
      EXPECT_EQ(c.state, ContextState::done);
      // Every run recorded with its size's placement: mpirun -np P.
      for (const auto& run : store.runs_of_context(c.id, JobPurpose::search)) {
        const auto& argv = run.provenance.argv;
        auto np = std::find(argv.begin(), argv.end(), "-np");
        ASSERT_TRUE(np != argv.end() && std::next(np) != argv.end());
        EXPECT_EQ(*std::next(np), std::to_string(c.comm_size));
      }
    }

    JobExecutor executor(store, local, nullptr);
    RulesStageOptions options;
    options.rules_path = dir / "rules.conf";
    options.work_dir = dir / "work";
    options.remeasure_rounds = 0;  // the trace proof only (the re-measure has its own tests)
    const RulesStageResult result =
        finish_campaign_rules(store, executor, table, id, options, cancel);
    ASSERT_TRUE(result.error.empty()) << result.error << "\n" << result.verification_text;
    EXPECT_TRUE(result.verified) << result.verification_text;
    const auto version = store.rules_versions(id).front();
    std::set<std::pair<int, bool>> traced;
    for (const auto& c : version.verification.at("contexts")) {
      EXPECT_TRUE(c.at("run_ok").get<bool>()) << c.dump();
      EXPECT_EQ(c.at("matches"), c.at("sizes")) << c.dump();
      traced.insert({c.at("comm_size").get<int>(), c.value("predicted", false)});
    }
    EXPECT_TRUE(traced.count({2, false}));
    EXPECT_TRUE(traced.count({3, false}));
    EXPECT_TRUE(traced.count({4, true})) << version.verification.dump();
    // The file covers 2-4 and leaves 5 and more to Open MPI.
    const RulesReadResult read = read_rules_text(result.content, RulesDialect::ompi_4_1);
    ASSERT_TRUE(read.loaded) << read.reason;
    EXPECT_NE(result.content.find("bcast P=4: PREDICTED"), std::string::npos) << result.content;
    EXPECT_NE(result.content.find("bcast above 4 ranks"), std::string::npos) << result.content;
    for (std::int64_t m : {4, 64, 256})
      EXPECT_TRUE(configured_choice(read.model, Collective::bcast, 5, m).is_default());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace colltune
