// The replay backend answers from recorded landscapes and never invents a number.
#include "runner/replay_backend.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

namespace colltune {
namespace {

struct Collect : RunSink {
  std::vector<RunResult> results;
  void on_result(const RunResult& r) override { results.push_back(r); }
  const RunResult& at(std::size_t index, int repeat) const {
    for (const auto& r : results)
      if (r.config_index == index && r.repeat == repeat) return r;
    throw std::out_of_range("no such result");
  }
};

// bcast at 4 ranks: binomial (3 repeats of each size), linear (one size missing), chain fan-out
// 2 with 1 KiB segments; extra columns are ignored.
const char* kCsv =
    "collective,comm_size,algorithm,segsize,fanout,msg_size,latency_us,note\n"
    "bcast,4,6,0,0,4,1.5,a\n"
    "bcast,4,6,0,0,4,1.6,b\n"
    "bcast,4,6,0,0,4,1.7,c\n"
    "bcast,4,6,0,0,8,2.5,a\n"
    "bcast,4,6,0,0,8,2.6,b\n"
    "bcast,4,6,0,0,8,2.7,c\n"
    "bcast,4,1,0,0,4,3.0,\n"
    "7,4,2,1024,2,4,4.0,\"quoted, with comma\"\n"
    "7,4,2,1024,2,8,5.0,\n"
    "allreduce,4,0,0,0,4,9.0,\n"
    "allreduce,4,0,0,0,8,10.0,\n";

BenchmarkRequest request(std::vector<TuningConfig> configs, int repeats = 1) {
  BenchmarkRequest r;
  r.tag = "t";
  r.collective = Collective::bcast;
  r.comm_size = 4;
  r.min_size = 4;
  r.max_size = 8;
  r.iterations = 1000;
  r.warmup = 100;
  r.configs = std::move(configs);
  r.repeats = repeats;
  return r;
}

TEST(ReplayDataset, ParsesRepeatsAliasesAndCanonicalConfigs) {
  const auto d = ReplayDataset::parse_csv(kCsv);
  EXPECT_EQ(d.rows(), 11u);
  const auto* v = d.find(Collective::bcast, 4, 1, {6, 0, 0}, 4);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->size(), 3u);
  EXPECT_DOUBLE_EQ((*v)[2].avg_us, 1.7);
  // Binomial reads no fan-out: fan-out 5 is the same recorded point; chain reads both knobs.
  EXPECT_EQ(d.find(Collective::bcast, 4, 1, {6, 0, 5}, 4), v);
  EXPECT_NE(d.find(Collective::bcast, 4, 1, {2, 1024, 2}, 8), nullptr);
  EXPECT_EQ(d.find(Collective::bcast, 4, 1, {2, 1024, 3}, 8), nullptr);
  EXPECT_EQ(d.find(Collective::bcast, 8, 1, {6, 0, 0}, 4), nullptr);
  EXPECT_EQ(d.configs(Collective::bcast, 4).size(), 3u);
}

TEST(ReplayDataset, ErrorsNameTheLine) {
  auto error = [](const std::string& csv) {
    try {
      ReplayDataset::parse_csv(csv, {}, "x.csv");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("collective,comm_size,algorithm,msg_size\n").find("latency_us"),
            std::string::npos);
  EXPECT_NE(error("collective,comm_size,algorithm,msg_size,latency_us\nbcast,4,1,4,fast\n")
                .find("x.csv:2"),
            std::string::npos);
  EXPECT_NE(error("collective,comm_size,algorithm,msg_size,latency_us\nbcst,4,1,4,1\n")
                .find("unknown collective"),
            std::string::npos);
  EXPECT_NE(error("collective,comm_size,algorithm,msg_size,latency_us\nbcast,4,1,4,-1\n")
                .find("latency_us"),
            std::string::npos);
  EXPECT_THROW(ReplayDataset::parse_csv(kCsv, {{"nosuch", "x"}}), std::invalid_argument);
  EXPECT_THROW(ReplayDataset::load_csv("/nonexistent/landscape.csv"), std::invalid_argument);
}

TEST(ReplayBackend, ReplaysRecordedRunsAndAccountsTheirCost) {
  ReplayBackend backend(ReplayDataset::parse_csv(kCsv), {.seed = 3, .launch_overhead_s = 0.5});
  Collect sink;
  CancelFlag cancel;
  backend.run(request({{6, 0, 0}, {2, 1024, 2}}), sink, cancel);
  ASSERT_EQ(sink.results.size(), 2u);
  const auto& chain = sink.at(1, 0);
  ASSERT_EQ(chain.outcome, RunOutcome::ok) << chain.error;
  ASSERT_EQ(chain.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(chain.rows[0].avg_us, 4.0);
  EXPECT_DOUBLE_EQ(chain.rows[1].avg_us, 5.0);
  EXPECT_FALSE(chain.rows[0].min_us.has_value());  // not recorded, not invented
  EXPECT_EQ(chain.provenance.backend, "replay");
  EXPECT_EQ(chain.provenance.benchmark, "OSU MPI Broadcast Latency Test v5.6.2");
  EXPECT_NEAR(chain.provenance.end_time - chain.provenance.start_time,
              0.5 + 1100 * (4.0 + 5.0) * 1e-6, 1e-6);
  EXPECT_DOUBLE_EQ(backend.launch_overhead_s(), 0.5);
}

TEST(ReplayBackend, RepeatsDrawDistinctRecordingsWithTheSeed) {
  auto draws = [](std::uint64_t seed) {
    ReplayBackend backend(ReplayDataset::parse_csv(kCsv), {.seed = seed});
    Collect sink;
    CancelFlag cancel;
    backend.run(request({{6, 0, 0}}, 3), sink, cancel);
    std::vector<double> at4;
    for (int rep = 0; rep < 3; ++rep) {
      const auto& r = sink.at(0, rep);
      EXPECT_EQ(r.outcome, RunOutcome::ok);
      at4.push_back(r.rows.at(0).avg_us);
      // One recorded run per repeat: the 8-byte value has the same position as the 4-byte one.
      EXPECT_NEAR(r.rows.at(1).avg_us - r.rows.at(0).avg_us, 1.0, 1e-9);
    }
    return at4;
  };
  const auto a = draws(1);
  EXPECT_EQ(std::set<double>(a.begin(), a.end()), (std::set<double>{1.5, 1.6, 1.7}));
  EXPECT_EQ(a, draws(1));
  bool some_seed_differs = false;
  for (std::uint64_t s = 2; s < 12 && !some_seed_differs; ++s) some_seed_differs = draws(s) != a;
  EXPECT_TRUE(some_seed_differs);
}

TEST(ReplayBackend, UnrecordedConfigurationsAreUnavailable) {
  ReplayBackend backend(ReplayDataset::parse_csv(kCsv));
  Collect sink;
  CancelFlag cancel;
  backend.run(request({{5, 0, 0}, {1, 0, 0}}), sink, cancel);
  const auto& none = sink.at(0, 0);
  EXPECT_EQ(none.outcome, RunOutcome::unavailable);
  EXPECT_TRUE(none.rows.empty());
  EXPECT_NE(none.error.find("not recorded"), std::string::npos);
  const auto& partial = sink.at(1, 0);  // linear has 4 B but not 8 B
  EXPECT_EQ(partial.outcome, RunOutcome::unavailable);
  ASSERT_EQ(partial.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(partial.rows[0].avg_us, 3.0);
  EXPECT_NE(partial.error.find("8"), std::string::npos);
  // Other comm sizes, extra MCA parameters and cancellation.
  auto other = request({{6, 0, 0}});
  other.comm_size = 8;
  Collect s2;
  backend.run(other, s2, cancel);
  EXPECT_EQ(s2.results.at(0).outcome, RunOutcome::unavailable);
  auto rules = request({{0, 0, 0}});
  rules.extra_mca["coll_tuned_dynamic_rules_filename"] = "x";
  Collect s3;
  backend.run(rules, s3, cancel);
  EXPECT_EQ(s3.results.at(0).outcome, RunOutcome::unavailable);
  CancelFlag stop;
  stop.cancel();
  Collect s4;
  backend.run(request({{6, 0, 0}}, 2), s4, stop);
  ASSERT_EQ(s4.results.size(), 2u);
  for (const auto& r : s4.results) EXPECT_EQ(r.outcome, RunOutcome::cancelled);
}

TEST(ReplayBackend, TimeLimitAppliesToTheRecordedCost) {
  ReplayBackend backend(ReplayDataset::parse_csv(kCsv), {.launch_overhead_s = 1.0});
  auto r = request({{0, 0, 0}});
  r.collective = Collective::allreduce;
  r.iterations = 100000;
  r.warmup = 0;
  r.run_timeout_s = 1.0 + 100000 * 9e-6 + 0.1;  // room for the 4 B size only
  Collect sink;
  CancelFlag cancel;
  backend.run(r, sink, cancel);
  const auto& result = sink.results.at(0);
  EXPECT_EQ(result.outcome, RunOutcome::timeout);
  ASSERT_EQ(result.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(result.rows[0].avg_us, 9.0);
}

// The ORNL landscape (the in-tree subset, tests/data/ornl) loads as is (aliases nranks, alg_id,
// msg_size_bytes, avg_latency_us, nnodes) and replays the raw OSU file's numbers.
TEST(ReplayBackend, ReplaysTheOrnlLandscape) {
  const auto csv = std::filesystem::path(COLLTUNE_ORNL_DATA) / "landscape_long.csv";
  ASSERT_TRUE(std::filesystem::exists(csv)) << csv << " is part of the tree";
  ReplayBackend backend(ReplayDataset::load_csv(csv, {{"dataset", "peak-2020-05"}}));
  EXPECT_EQ(backend.dataset().rows(), 7044u);
  auto r = request({{6, 0, 0}, {3, 0, 0}}, 3);
  r.comm_size = 16;
  r.nodes = 1;
  r.min_size = 1;
  r.max_size = 2;
  Collect sink;
  CancelFlag cancel;
  backend.run(r, sink, cancel);
  ASSERT_EQ(sink.results.size(), 6u);
  std::set<double> at1;
  for (const auto& result : sink.results) {
    EXPECT_EQ(result.outcome, RunOutcome::ok) << result.error;
    if (result.config_index == 0) at1.insert(result.rows.at(0).avg_us);
  }
  // raw/peak-2020-05/bcast/6_16ranks_run0.out starts "1  2.86"; 3 runs were recorded.
  EXPECT_TRUE(at1.contains(2.86));
  EXPECT_EQ(at1.size(), 3u);
  r.nodes = 2;  // recorded on one node: not the same experiment
  Collect wrong;
  backend.run(r, wrong, cancel);
  EXPECT_EQ(wrong.results.at(0).outcome, RunOutcome::unavailable);
}

}  // namespace
}  // namespace colltune
