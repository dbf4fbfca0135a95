// Fault injection around a real (simulated) backend: each fault turns into the outcome a real
// run with that fault gets from the parser, deterministically per run.
#include "runner/fault_injection.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "runner/sim_backend.h"

namespace colltune {
namespace {

struct Collect : RunSink {
  std::vector<RunResult> results;
  void on_result(const RunResult& r) override { results.push_back(r); }
};

std::shared_ptr<Backend> quiet_sim() {
  SimBackendOptions o;
  o.profile = "pise";
  o.noise = sim::NoiseModel::none();
  return std::make_shared<SimBackend>(o);
}

BenchmarkRequest request(int configs = 4, int repeats = 5) {
  BenchmarkRequest r;
  r.tag = "faults";
  r.collective = Collective::bcast;
  r.comm_size = 8;
  r.min_size = 4;
  r.max_size = 4096;
  r.iterations = 100;
  r.warmup = 10;
  r.repeats = repeats;
  for (int i = 0; i < configs; ++i) r.configs.push_back({6, 256 * (i + 1), 0});
  return r;
}

std::vector<RunResult> run(FaultInjectionOptions options, BenchmarkRequest r = request()) {
  FaultInjectingBackend backend(quiet_sim(), options);
  Collect sink;
  CancelFlag cancel;
  backend.run(r, sink, cancel);
  return sink.results;
}

std::vector<RunResult> clean() { return run({}); }

const RunResult& find(const std::vector<RunResult>& rs, std::size_t index, int repeat) {
  for (const auto& r : rs)
    if (r.config_index == index && r.repeat == repeat) return r;
  throw std::out_of_range("missing");
}

bool is_prefix(const std::vector<OsuRow>& part, const std::vector<OsuRow>& whole) {
  if (part.size() > whole.size()) return false;
  for (std::size_t i = 0; i < part.size(); ++i)
    if (part[i].size != whole[i].size || part[i].avg_us != whole[i].avg_us) return false;
  return true;
}

TEST(FaultInjection, NoFaultsChangesNothing) {
  const auto base = clean();
  ASSERT_EQ(base.size(), 20u);
  for (const auto& r : base) EXPECT_EQ(r.outcome, RunOutcome::ok);
}

TEST(FaultInjection, JobFailures) {
  for (const auto& r : run({.failure_rate = 1})) {
    EXPECT_EQ(r.outcome, RunOutcome::failed);
    EXPECT_TRUE(r.rows.empty());
    EXPECT_EQ(r.provenance.exit_status, 1);
    EXPECT_NE(r.provenance.stderr_excerpt.find("fault injection: failure"), std::string::npos);
  }
}

TEST(FaultInjection, HangsBecomeTimeoutsAtTheLimit) {
  const auto base = clean();
  auto req = request();
  req.run_timeout_s = 30;
  for (const auto& r : run({.hang_rate = 1}, req)) {
    EXPECT_EQ(r.outcome, RunOutcome::timeout);
    EXPECT_DOUBLE_EQ(r.provenance.end_time - r.provenance.start_time, 30);
    EXPECT_TRUE(is_prefix(r.rows, find(base, r.config_index, r.repeat).rows));
    EXPECT_LT(r.rows.size(), 11u);
  }
}

TEST(FaultInjection, CrashesKeepTheSizesPrintedBeforeThem) {
  const auto base = clean();
  std::set<std::size_t> kept_sizes;
  for (const auto& r : run({.crash_rate = 1})) {
    EXPECT_EQ(r.outcome, RunOutcome::failed);
    EXPECT_EQ(r.provenance.exit_status, 139);
    EXPECT_TRUE(is_prefix(r.rows, find(base, r.config_index, r.repeat).rows));
    EXPECT_LT(r.rows.size(), 11u);
    kept_sizes.insert(r.rows.size());
  }
  EXPECT_GT(kept_sizes.size(), 2u);  // crashes strike at different sizes
}

TEST(FaultInjection, GarbledOutputIsAParseError) {
  const auto base = clean();
  for (const auto& r : run({.garble_rate = 1})) {
    EXPECT_EQ(r.outcome, RunOutcome::parse_error) << r.error;
    EXPECT_TRUE(is_prefix(r.rows, find(base, r.config_index, r.repeat).rows));
    EXPECT_LT(r.rows.size(), 11u);
  }
}

TEST(FaultInjection, SlowNodesMultiplyLatencies) {
  const auto base = clean();
  for (const auto& r : run({.slow_node_rate = 1, .slow_factor = 3})) {
    ASSERT_EQ(r.outcome, RunOutcome::ok);
    const auto& b = find(base, r.config_index, r.repeat);
    ASSERT_EQ(r.rows.size(), b.rows.size());
    for (std::size_t i = 0; i < r.rows.size(); ++i)
      EXPECT_NEAR(r.rows[i].avg_us, 3 * b.rows[i].avg_us, 0.01);
  }
}

TEST(FaultInjection, MixedRatesAreDeterministicPerRun) {
  const FaultInjectionOptions mixed{.seed = 4,
                                    .failure_rate = 0.1,
                                    .hang_rate = 0.1,
                                    .crash_rate = 0.1,
                                    .garble_rate = 0.1,
                                    .slow_node_rate = 0.1};
  auto big = request(20, 10);
  const auto a = run(mixed, big);
  ASSERT_EQ(a.size(), 200u);
  std::map<RunOutcome, int> counts;
  std::set<std::pair<std::size_t, int>> seen;
  for (const auto& r : a) {
    ++counts[r.outcome];
    EXPECT_TRUE(seen.emplace(r.config_index, r.repeat).second);
  }
  // failure + crash -> failed (~19 %), hang -> timeout (~8 %), garble -> parse error (~7 %).
  EXPECT_GT(counts[RunOutcome::failed], 20);
  EXPECT_LT(counts[RunOutcome::failed], 60);
  EXPECT_GT(counts[RunOutcome::timeout], 5);
  EXPECT_GT(counts[RunOutcome::parse_error], 4);
  EXPECT_GT(counts[RunOutcome::ok], 100);
  // The same runs are hit whatever order they are made in.
  big.order_seed = 77;
  const auto b = run(mixed, big);
  for (const auto& r : a) EXPECT_EQ(find(b, r.config_index, r.repeat).outcome, r.outcome);
}

TEST(FaultInjection, ACrashCanAbortTheRestOfTheBatch) {
  const auto rs = run({.crash_rate = 0.2, .crash_aborts_batch = true});
  bool crashed = false;
  for (const auto& r : rs) {
    if (crashed) {
      EXPECT_EQ(r.outcome, RunOutcome::failed);
      EXPECT_NE(r.error.find("batch aborted"), std::string::npos);
    }
    if (r.provenance.exit_status == 139) crashed = true;
  }
  EXPECT_TRUE(crashed);
}

TEST(FaultInjection, PassesThroughWhatIsNotOk) {
  auto barrier = request(1, 2);
  barrier.collective = Collective::barrier;
  for (const auto& r : run({.failure_rate = 1}, barrier))
    EXPECT_EQ(r.outcome, RunOutcome::unavailable);
}

TEST(FaultInjection, WrapsAnyBackend) {
  FaultInjectingBackend backend(quiet_sim(), {.hang_rate = 0.5});
  EXPECT_EQ(backend.name(), "sim");
  EXPECT_DOUBLE_EQ(backend.launch_overhead_s(), 1.5);
  EXPECT_EQ(backend.describe().extra.at("fault_injection").at("hang_rate"), 0.5);
  EXPECT_THROW(FaultInjectingBackend(quiet_sim(), {.crash_rate = 1.5}), std::invalid_argument);
  EXPECT_THROW(FaultInjectingBackend(quiet_sim(), {.slow_factor = 0.5}), std::invalid_argument);
  EXPECT_THROW(FaultInjectingBackend(nullptr, {}), std::invalid_argument);
}

}  // namespace
}  // namespace colltune
