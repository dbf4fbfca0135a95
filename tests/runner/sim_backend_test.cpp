// The sim backend honours the Backend contract (runner/backend.h) and reports what one OSU job
// would print, through the real parser.
#include "runner/sim_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "runner/sim/osu_text.h"

namespace colltune {
namespace {

struct Collect : RunSink {
  std::vector<RunResult> results;
  std::function<void(const RunResult&)> hook;
  void on_result(const RunResult& r) override {
    results.push_back(r);
    if (hook) hook(r);
  }
  const RunResult& at(std::size_t index, int repeat) const {
    for (const auto& r : results)
      if (r.config_index == index && r.repeat == repeat) return r;
    throw std::out_of_range("no such result");
  }
};

BenchmarkRequest bcast_request() {
  BenchmarkRequest r;
  r.tag = "batch-1";
  r.collective = Collective::bcast;
  r.comm_size = 8;
  r.nodes = 1;
  r.min_size = 4;
  r.max_size = 65536;
  r.iterations = 100;
  r.warmup = 10;
  r.configs = {{0, 0, 0}, {6, 0, 0}, {6, 8192, 0}, {2, 4096, 3}};
  r.repeats = 2;
  r.order_seed = 5;
  return r;
}

SimBackendOptions quiet(std::string profile = "pise") {
  SimBackendOptions o;
  o.profile = std::move(profile);
  o.noise = sim::NoiseModel::none();
  return o;
}

TEST(SimBackend, ReportsEveryRunOnceWithItsProvenance) {
  SimBackend backend(SimBackendOptions{.profile = "pise"});
  const auto request = bcast_request();
  Collect sink;
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  ASSERT_EQ(sink.results.size(), 8u);
  std::set<std::pair<std::size_t, int>> seen;
  for (const auto& r : sink.results) {
    EXPECT_TRUE(seen.emplace(r.config_index, r.repeat).second);
    EXPECT_EQ(r.outcome, RunOutcome::ok) << r.error;
    EXPECT_EQ(r.tag, "batch-1");
    EXPECT_EQ(r.config, request.configs[r.config_index]);
    ASSERT_EQ(r.rows.size(), 15u);  // 4 B .. 64 KiB
    EXPECT_EQ(r.rows.front().size, 4);
    EXPECT_EQ(r.rows.back().size, 65536);
    EXPECT_EQ(*r.rows.front().iterations, 100);
    const Provenance& p = r.provenance;
    EXPECT_EQ(p.backend, "sim");
    EXPECT_EQ(p.host, "sim:pise");
    EXPECT_EQ(p.ompi_version, "4.1.4");
    EXPECT_EQ(p.benchmark, "OSU MPI Broadcast Latency Test v5.6.2");
    EXPECT_NE(std::find(p.argv.begin(), p.argv.end(), "osu_bcast"), p.argv.end());
    // Cost: launch overhead + (iterations + warmup) x latency per size.
    double expected = backend.launch_overhead_s();
    for (const auto& row : r.rows) expected += 110 * row.avg_us * 1e-6;
    EXPECT_NEAR(p.end_time - p.start_time, expected, 1e-3);
    EXPECT_NE(p.stderr_excerpt.find("colltune-sim: sizes 4-"), std::string::npos);
  }
  // Forcing parameters of the segmented binomial run.
  const Provenance& p = sink.at(2, 0).provenance;
  EXPECT_EQ(p.mca.at("coll_tuned_bcast_algorithm"), "6");
  EXPECT_EQ(p.mca.at("coll_tuned_bcast_algorithm_segmentsize"), "8192");
  EXPECT_EQ(sink.at(0, 0).provenance.mca.count("coll_tuned_bcast_algorithm"), 0u);
  // The default decision at P=8 for 4 B is bintree (fixed rules).
  EXPECT_NE(sink.at(0, 1).provenance.stderr_excerpt.find("bcast_intra_dec_fixed alg=5"),
            std::string::npos);
  // The virtual clock runs forward from one run to the next.
  std::vector<std::pair<double, double>> spans;
  for (const auto& r : sink.results)
    spans.emplace_back(r.provenance.start_time, r.provenance.end_time);
  for (std::size_t i = 1; i < spans.size(); ++i)
    EXPECT_DOUBLE_EQ(spans[i].first, spans[i - 1].second);
}

TEST(SimBackend, NoiseFreeRunsEqualTheModel) {
  SimBackend backend(quiet());
  Collect sink;
  CancelFlag cancel;
  backend.run(bcast_request(), sink, cancel);
  const auto& model = backend.model();
  for (const auto& r : sink.results)
    for (const auto& row : r.rows) {
      const auto m =
          model.measure(Collective::bcast, model.profile().placement(8, 1, 0), r.config, row.size);
      EXPECT_NEAR(row.avg_us, m.avg_us, 0.005);
      EXPECT_NEAR(*row.min_us, m.min_us, 0.005);
      EXPECT_NEAR(*row.max_us, m.max_us, 0.005);
    }
}

TEST(SimBackend, ReportsTheModelledBenchmarkSecondsWhateverTheClock) {
  // The cost of a run is the modelled OSU time (launch + every call of every size), also when
  // the provenance is stamped with the wall clock (where a simulated run takes ~0 s).
  for (bool virtual_clock : {true, false}) {
    SimBackendOptions o = quiet();
    o.virtual_clock = virtual_clock;
    SimBackend backend(o);
    Collect sink;
    CancelFlag cancel;
    const auto request = bcast_request();
    backend.run(request, sink, cancel);
    ASSERT_EQ(sink.results.size(), 8u);
    for (const auto& r : sink.results) {
      double expected = backend.launch_overhead_s();
      for (const auto& row : r.rows)
        expected += (request.iterations + request.warmup) * row.avg_us * 1e-6;
      const Provenance& p = r.provenance;
      EXPECT_NEAR(p.benchmark_seconds, expected, 1e-3 * expected) << virtual_clock;
      EXPECT_DOUBLE_EQ(observed_seconds(p), p.benchmark_seconds);
      if (virtual_clock) {
        EXPECT_NEAR(p.end_time - p.start_time, p.benchmark_seconds, 1e-6);
      }
      EXPECT_DOUBLE_EQ(nlohmann::json(p).get<Provenance>().benchmark_seconds, p.benchmark_seconds);
    }
  }
  // Without a reported benchmark time, the run took end - start; neither known = 0.
  Provenance wall;
  wall.start_time = 100;
  wall.end_time = 102.5;
  EXPECT_DOUBLE_EQ(observed_seconds(wall), 2.5);
  EXPECT_FALSE(nlohmann::json(wall).contains("benchmark_seconds"));
  EXPECT_DOUBLE_EQ(observed_seconds(Provenance{}), 0.0);
}

TEST(SimBackend, NoiseIsSeededPerRunNotPerOrder) {
  auto run_with = [](std::uint64_t seed, std::uint64_t order_seed) {
    SimBackend backend(SimBackendOptions{.profile = "pise", .seed = seed});
    auto request = bcast_request();
    request.order_seed = order_seed;
    Collect sink;
    CancelFlag cancel;
    backend.run(request, sink, cancel);
    std::map<std::pair<std::size_t, int>, std::vector<double>> by_run;
    for (const auto& r : sink.results)
      for (const auto& row : r.rows) by_run[{r.config_index, r.repeat}].push_back(row.avg_us);
    return by_run;
  };
  const auto a = run_with(1, 5);
  EXPECT_EQ(a, run_with(1, 99));          // another order, same numbers
  EXPECT_NE(a, run_with(2, 5));           // another seed, other numbers
  EXPECT_NE(a.at({1, 0}), a.at({1, 1}));  // repeats differ
}

TEST(SimBackend, UnknownAlgorithmAbortsLikeOpenMpi) {
  SimBackend backend(quiet());
  auto request = bcast_request();
  request.configs = {{42, 0, 0}};
  request.repeats = 1;
  Collect sink;
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  ASSERT_EQ(sink.results.size(), 1u);
  const auto& r = sink.results[0];
  EXPECT_EQ(r.outcome, RunOutcome::failed);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_EQ(r.provenance.exit_status, 13);
  EXPECT_NE(r.provenance.stderr_excerpt.find("MPI_ERR_ARG"), std::string::npos);
}

TEST(SimBackend, UnavailableForWhatItDoesNotModel) {
  SimBackend backend(quiet());
  CancelFlag cancel;
  auto barrier = bcast_request();
  barrier.collective = Collective::barrier;
  Collect a;
  backend.run(barrier, a, cancel);
  ASSERT_EQ(a.results.size(), 8u);
  for (const auto& r : a.results) EXPECT_EQ(r.outcome, RunOutcome::unavailable);
  auto rules = bcast_request();
  rules.extra_mca["coll_tuned_dynamic_rules_filename"] = "/tmp/x.rules";
  Collect b;
  backend.run(rules, b, cancel);
  for (const auto& r : b.results) {
    EXPECT_EQ(r.outcome, RunOutcome::unavailable);
    EXPECT_NE(r.error.find("coll_tuned_dynamic_rules_filename"), std::string::npos);
  }
  auto harmless = bcast_request();
  harmless.extra_mca["coll_tuned_use_dynamic_rules"] = "1";  // already set for every run
  harmless.extra_mca["btl"] = "self,vader";
  Collect h;
  backend.run(harmless, h, cancel);
  for (const auto& r : h.results) EXPECT_EQ(r.outcome, RunOutcome::ok) << r.error;
  EXPECT_EQ(h.results.at(0).provenance.mca.at("btl"), "self,vader");
  SimBackendOptions tight = quiet();
  tight.max_messages_per_call = 50;
  SimBackend small(tight);
  Collect c;
  small.run(bcast_request(), c, cancel);
  EXPECT_EQ(c.at(2, 0).outcome, RunOutcome::unavailable);  // 8 KiB segments of 64 KiB
  EXPECT_EQ(c.at(1, 0).outcome, RunOutcome::ok);
}

TEST(SimBackend, SlowRunsTimeOutKeepingFinishedSizes) {
  SimBackend backend(quiet("local"));
  auto request = bcast_request();
  request.comm_size = 4;
  request.max_size = 1 << 20;
  request.iterations = 1000;
  request.warmup = 0;
  request.configs = {{6, 1024, 0}};  // tiny segments at 1 MiB: slow
  request.repeats = 1;
  request.run_timeout_s = 0.45;  // launch 0.4 s leaves 50 ms
  Collect sink;
  CancelFlag cancel;
  backend.run(request, sink, cancel);
  const auto& r = sink.results.at(0);
  EXPECT_EQ(r.outcome, RunOutcome::timeout);
  EXPECT_GT(r.rows.size(), 0u);
  EXPECT_LT(r.rows.size(), 19u);
  EXPECT_NEAR(r.provenance.end_time - r.provenance.start_time, 0.45, 1e-6);
}

TEST(SimBackend, HonoursCancel) {
  SimBackend backend(quiet());
  CancelFlag cancel;
  Collect sink;
  sink.hook = [&](const RunResult&) { cancel.cancel(); };
  backend.run(bcast_request(), sink, cancel);
  ASSERT_EQ(sink.results.size(), 8u);
  EXPECT_EQ(sink.results[0].outcome, RunOutcome::ok);
  for (std::size_t i = 1; i < sink.results.size(); ++i)
    EXPECT_EQ(sink.results[i].outcome, RunOutcome::cancelled);
}

TEST(SimBackend, RejectsRequestsItCannotPlace) {
  SimBackend backend(quiet("ethernet-pair"));
  CancelFlag cancel;
  Collect sink;
  auto request = bcast_request();
  request.nodes = 4;  // the profile has 2
  EXPECT_THROW(backend.run(request, sink, cancel), std::invalid_argument);
  request.nodes = 1;
  request.comm_size = 1;
  EXPECT_THROW(backend.run(request, sink, cancel), std::invalid_argument);
  EXPECT_TRUE(sink.results.empty());
  EXPECT_THROW(SimBackend(SimBackendOptions{.profile = "nope"}), std::invalid_argument);
}

TEST(SimBackend, DescribesTheSimulatedCluster) {
  SimBackend backend(SimBackendOptions{.profile = "hpc64x128", .seed = 9});
  const BackendInfo info = backend.describe();
  EXPECT_EQ(info.backend, "sim");
  EXPECT_EQ(info.cores, 128);
  EXPECT_EQ(info.extra.at("nodes"), 64);
  EXPECT_EQ(info.extra.at("seed"), 9);
  EXPECT_EQ(backend.name(), "sim");
  EXPECT_DOUBLE_EQ(backend.launch_overhead_s(), 3.0);
}

// Paired comparisons run A B / B A rounds: configuration 0 (the default) next to each other one.
TEST(RunOrder, AlternatingRoundsAndJsonRoundTrip) {
  BenchmarkRequest r;
  r.tag = "t";
  r.configs = {TuningConfig{}, TuningConfig{1, 0, 0}, TuningConfig{2, 0, 0}};
  r.repeats = 3;
  r.alternating = true;
  r.order_seed = 99;  // ignored when alternating
  const std::vector<std::pair<std::size_t, int>> expected = {{0, 0}, {1, 0}, {2, 0}, {2, 1}, {1, 1},
                                                             {0, 1}, {0, 2}, {1, 2}, {2, 2}};
  EXPECT_EQ(run_order(r), expected);
  r.only_runs = {{0, 1}, {2, 0}};
  EXPECT_EQ(run_order(r), (std::vector<std::pair<std::size_t, int>>{{2, 0}, {0, 1}}));
  BenchmarkRequest back = nlohmann::json(r).get<BenchmarkRequest>();
  EXPECT_TRUE(back.alternating);
  r.alternating = false;
  EXPECT_FALSE(nlohmann::json(r).get<BenchmarkRequest>().alternating);
}

}  // namespace
}  // namespace colltune
