// Recorded landscapes for colltune-bench-optimizer --landscape (bench/optimizer/landscape.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bench/optimizer/landscape.h"
#include "bench/optimizer/simulation.h"
#include "core/fixed_decision.h"

namespace colltune::bench {
namespace {

namespace fs = std::filesystem;

const AlgorithmTable& table() { return AlgorithmTable::builtin_4_1(); }

fs::path write_csv(const std::string& body) {
  const fs::path p =
      fs::temp_directory_path() / ("recorded-landscape-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(p) << "collective,comm_size,algorithm,segsize,fanout,msg_size,latency_us,purpose\n"
                   << body;
  return p;
}

// reduce on 4 ranks: the fixed decision runs the linear reduction (1) at 256 KiB and the
// chain (2, fan-out 0, not a point of the space) at 4 KiB.
TEST(RecordedLandscape, TheDefaultAndTheConfigurationItRunsAreOnePointPerSize) {
  ASSERT_EQ(fixed_decision_4_1(Collective::reduce, 4, 262144), 1);
  ASSERT_EQ(fixed_decision_4_1(Collective::reduce, 4, 4096), 2);
  const fs::path csv = write_csv(
      "reduce,4,0,0,0,262144,10,search\n"
      "reduce,4,0,0,0,262144,12,search\n"
      "reduce,4,1,0,0,262144,20,search\n"
      "reduce,4,1,0,0,262144,22,search\n"
      "reduce,4,0,0,0,4096,5,search\n"
      "reduce,4,2,0,3,4096,7,search\n"
      "reduce,4,1,0,0,4096,9,search\n");
  auto pooled = load_landscapes(csv.string(), table());
  ASSERT_EQ(pooled.size(), 1u);
  const Landscape& l = pooled[0];
  const TuningConfig def{}, linear{1, 0, 0};
  const auto* d = l.find(def, 262144);
  const auto* a = l.find(linear, 262144);
  ASSERT_TRUE(d && a);
  EXPECT_EQ(d->repeats, (std::vector<double>{10, 12, 20, 22}));
  EXPECT_EQ(a->repeats, d->repeats);
  EXPECT_DOUBLE_EQ(d->truth, 16);
  EXPECT_DOUBLE_EQ(a->truth, d->truth);
  EXPECT_DOUBLE_EQ(l.optimum(262144), 16);
  // At 4 KiB the default runs the chain with fan-out 0: nothing of the space to pool with.
  EXPECT_EQ(l.find(def, 4096)->repeats, (std::vector<double>{5}));
  EXPECT_EQ(l.find(linear, 4096)->repeats, (std::vector<double>{9}));

  // Apart (session 2's scoring): the default keeps its own runs and is the optimum.
  auto apart = load_landscapes(csv.string(), table(), false, false);
  EXPECT_EQ(apart[0].find(def, 262144)->repeats, (std::vector<double>{10, 12}));
  EXPECT_DOUBLE_EQ(apart[0].optimum(262144), 11);
  EXPECT_DOUBLE_EQ(apart[0].find(linear, 262144)->truth, 21);

  // Held-out truth on pooled repeats takes from both: drawn 10, 20; truth from 12, 22.
  auto held = load_landscapes(csv.string(), table(), true);
  EXPECT_EQ(held[0].find(def, 262144)->drawn, (std::vector<double>{10, 20}));
  EXPECT_DOUBLE_EQ(held[0].find(linear, 262144)->truth, 17);
  fs::remove(csv);
}

TEST(RecordedLandscape, MalformedInputNamesTheLine) {
  const fs::path csv = write_csv("reduce,4,1,0,0,64,-3,search\n");
  try {
    load_landscapes(csv.string(), table());
    ADD_FAILURE() << "a negative latency was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(":2:"), std::string::npos) << e.what();
  }
  fs::remove(csv);
}

// colltune-bench-cluster --oracle-nominees: each message size's nominee becomes the landscape's
// optimal configuration with its truth and the default's beside it, the default where nothing
// beats it; a message size the landscape lacks keeps the pick it had.
TEST(RecordedLandscape, OracleChoicesAreTheOptimaWithTheirTruths) {
  ASSERT_EQ(fixed_decision_4_1(Collective::reduce, 4, 4096), 2);
  ASSERT_EQ(fixed_decision_4_1(Collective::reduce, 4, 2048), 4);  // binary: no point here
  const fs::path csv = write_csv(
      "reduce,4,0,0,0,4096,10,search\n"
      "reduce,4,2,0,3,4096,7,search\n"
      "reduce,4,1,0,0,4096,9,search\n"
      "reduce,4,0,0,0,2048,4,search\n"
      "reduce,4,2,0,3,2048,6,search\n"
      "reduce,4,1,0,0,2048,5,search\n");
  const Landscape l = load_landscapes(csv.string(), table()).at(0);
  fs::remove(csv);
  const TuningConfig def{}, linear{1, 0, 0}, chain{2, 0, 3};
  ASSERT_EQ(l.optimal_config(4096), chain);
  ASSERT_EQ(l.optimal_config(2048), def);
  EXPECT_FALSE(l.optimal_config(8192));
  const std::vector<Choice> picks = {
      {2048, linear, 5.5, 4.5, 0.2}, {4096, linear, 8.5, 10.5, 0.1}, {8192, linear, 20, 30, 0.3}};
  const std::vector<Choice> oracle = oracle_choices(l, picks);
  ASSERT_EQ(oracle.size(), 3u);
  EXPECT_EQ(oracle[0].config, def);
  EXPECT_DOUBLE_EQ(oracle[0].latency_us, 4);
  EXPECT_DOUBLE_EQ(oracle[0].default_us, 4);
  EXPECT_EQ(oracle[1].config, chain);
  EXPECT_DOUBLE_EQ(oracle[1].latency_us, 7);
  EXPECT_DOUBLE_EQ(oracle[1].default_us, 10);
  EXPECT_DOUBLE_EQ(oracle[1].gain_sd, 0);
  EXPECT_EQ(oracle[2].config, linear);  // not in the landscape: unchanged
  EXPECT_DOUBLE_EQ(oracle[2].latency_us, 20);
  EXPECT_DOUBLE_EQ(oracle[2].gain_sd, 0.3);
}

// The rules stage's re-measure of a written file (draw_remeasure, as campaign/rules_stage.cpp):
// the sizes the file makes twice as slow as the default are proven slower and go back to the
// default; the size it makes 30 % faster and the one it leaves at the default stay. No change
// measured slower without proof, so no second look: 3 rounds of a file run and a no-file run.
TEST(RecordedLandscape, TheRulesStagesRemeasureRevertsTheSizesProvenSlower) {
  for (const std::int64_t s : {1024, 2048, 4096, 8192})
    ASSERT_NE(fixed_decision_4_1(Collective::reduce, 4, s), 1);
  std::string body;
  for (const std::int64_t s : {1024, 2048, 4096, 8192}) {
    const std::string at = "," + std::to_string(s) + ",";
    for (const char* us : {"10", "10.1", "9.9", "10.05", "9.95"}) {
      body += "reduce,4,0,0,0" + at + us + ",search\n";
      body += "reduce,4,1,0,0" + at + std::to_string(2 * std::stod(us)) + ",search\n";
      body += "reduce,4,2,0,3" + at + std::to_string(0.7 * std::stod(us)) + ",search\n";
    }
  }
  const fs::path csv = write_csv(body);
  const Landscape l = load_landscapes(csv.string(), table()).at(0);
  fs::remove(csv);
  const TuningConfig def{}, linear{1, 0, 0}, chain{2, 0, 3};
  const std::vector<Choice> file = {
      {1024, linear, 0, 0}, {2048, linear, 0, 0}, {4096, chain, 0, 0}, {8192, def, 0, 0}};
  Rng draws(7);
  const RemeasureDraw m =
      draw_remeasure(l, SearchSpace(Collective::reduce, 4, table()), file, 3, {}, draws);
  ASSERT_EQ(m.choices.size(), 4u);
  EXPECT_EQ(m.choices[0].config, def);
  EXPECT_EQ(m.choices[1].config, def);
  EXPECT_EQ(m.choices[2].config, chain);
  EXPECT_EQ(m.choices[3].config, def);
  EXPECT_EQ(m.reverted, 2);
  EXPECT_EQ(m.looks, 1);
  EXPECT_EQ(m.runs, 6);
  EXPECT_GT(m.benchmark_seconds, 0);
}

}  // namespace
}  // namespace colltune::bench
