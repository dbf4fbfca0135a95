// Profiles, placement, the SimModel API and its noise.
#include "runner/sim/sim_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runner/sim/collective_schedules.h"

namespace colltune::sim {
namespace {

TEST(Profiles, TheShippedProfilesLoad) {
  const auto names = available_profiles();
  for (const char* expected : {"pise", "ethernet-pair", "ethernet16", "hpc64x128", "local"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
    const ClusterProfile p = load_profile(expected);
    EXPECT_EQ(p.name, expected);
  }
  const ClusterProfile pise = load_profile("pise");
  EXPECT_EQ(pise.nodes, 12);
  EXPECT_EQ(pise.cores_per_node, 48);
  EXPECT_EQ(load_profile("hpc64x128").nodes * load_profile("hpc64x128").cores_per_node, 8192);
  EXPECT_EQ(load_profile("local").cores_per_node, 2);
  EXPECT_EQ(load_profile("ethernet-pair").nodes, 2);
  EXPECT_EQ(load_profile("ethernet16").nodes * load_profile("ethernet16").cores_per_node, 256);
}

TEST(Profiles, JsonRoundTripAndFileLoading) {
  const ClusterProfile pise = load_profile("pise");
  const ClusterProfile again = ClusterProfile::from_json(pise.to_json());
  EXPECT_EQ(again.to_json(), pise.to_json());
  const auto dir = std::filesystem::temp_directory_path() / "colltune-sim-profile-test";
  std::filesystem::create_directories(dir);
  nlohmann::json j = pise.to_json();
  j["name"] = "mine";
  j["nodes"] = 3;
  std::ofstream(dir / "mine.json") << j.dump(2);
  EXPECT_EQ(load_profile((dir / "mine.json").string()).nodes, 3);  // a path
  EXPECT_EQ(load_profile("mine", {dir}).nodes, 3);                 // a name in a given folder
  std::filesystem::remove_all(dir);
}

TEST(Profiles, ErrorsNameTheProblem) {
  nlohmann::json j = load_profile("local").to_json();
  auto message = [](const nlohmann::json& bad) {
    try {
      ClusterProfile::from_json(bad);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  nlohmann::json typo = j;
  typo["reduce_ns_per_bite"] = 1;
  EXPECT_NE(message(typo).find("reduce_ns_per_bite"), std::string::npos);
  nlohmann::json bounded = j;
  bounded["intra_node"]["pieces"].back()["up_to_bytes"] = 100000;
  EXPECT_NE(message(bounded).find("unbounded"), std::string::npos);
  nlohmann::json proto = j;
  proto["intra_node"]["pieces"][0]["protocol"] = "magic";
  EXPECT_NE(message(proto).find("protocol"), std::string::npos);
  nlohmann::json multi = j;
  multi["nodes"] = 2;
  multi.erase("inter_node");
  EXPECT_NE(message(multi).find("inter_node"), std::string::npos);
  EXPECT_THROW(load_profile("no-such-profile"), std::invalid_argument);
}

TEST(Profiles, Placement) {
  const ClusterProfile pise = load_profile("pise");
  const Placement full = pise.default_placement(576);
  EXPECT_EQ(full.nodes, 12);
  EXPECT_EQ(full.ppn, 48);
  EXPECT_EQ(full.node_of(47), 0);
  EXPECT_EQ(full.node_of(48), 1);
  const Placement one = pise.default_placement(12);
  EXPECT_EQ(one.nodes, 1);
  const Placement spread = pise.placement(12, 12, 1);
  EXPECT_EQ(spread.node_of(11), 11);
  EXPECT_THROW(pise.placement(48, 13, 0), std::invalid_argument);
  EXPECT_THROW(pise.placement(4, 3, 1), std::invalid_argument);
  ClusterProfile cyclic = pise;
  cyclic.mapping = RankMapping::cyclic;
  cyclic.placement_policy = PlacementPolicy::spread;
  const Placement rr = cyclic.default_placement(24);
  EXPECT_EQ(rr.nodes, 12);
  EXPECT_EQ(rr.node_of(13), 1);
}

TEST(SimModel, LatenciesBehaveLikeAnInfinibandCluster) {
  const SimModel model = SimModel::load("pise");
  const TuningConfig linear{1, 0, 0}, binomial{6, 0, 0}, seg_binomial{6, 65536, 0};
  // Small broadcast on a full node: a tree beats 47 sends from the root.
  EXPECT_LT(model.latency_us(Collective::bcast, 48, binomial, 4),
            model.latency_us(Collective::bcast, 48, linear, 4));
  // Large broadcast on 12 nodes: pipelining segments beats the unsegmented tree.
  EXPECT_LT(model.latency_us(Collective::bcast, 576, seg_binomial, 1 << 20),
            model.latency_us(Collective::bcast, 576, binomial, 1 << 20));
  // Large allreduce: bandwidth-optimal algorithms beat recursive doubling.
  EXPECT_LT(model.latency_us(Collective::allreduce, 96, {6, 0, 0}, 1 << 20),
            model.latency_us(Collective::allreduce, 96, {3, 0, 0}, 1 << 20));
  // A tiny message costs microseconds, a big one much more.
  const double small = model.latency_us(Collective::reduce, 96, {0, 0, 0}, 4);
  EXPECT_GT(small, 0.5);
  EXPECT_LT(small, 50);
  EXPECT_GT(model.latency_us(Collective::reduce, 96, {0, 0, 0}, 1 << 20), 20 * small);
  // A small message between nodes costs more than inside a node.
  EXPECT_GT(model.latency_us(Collective::gather, model.profile().placement(4, 4, 1), {1, 0, 0}, 4),
            model.latency_us(Collective::gather, model.profile().placement(4, 1, 4), {1, 0, 0}, 4));
}

TEST(SimModel, CachesAndIgnoresUnreadKnobs) {
  const SimModel model = SimModel::load("local");
  const double a = model.latency_us(Collective::bcast, 4, {6, 0, 0}, 1024);
  EXPECT_EQ(model.cache_size(), 1u);
  // Binomial never reads the fan-out: same point.
  EXPECT_EQ(model.latency_us(Collective::bcast, 4, {6, 0, 7}, 1024), a);
  EXPECT_EQ(model.cache_size(), 1u);
  const Measurement m = model.measure(Collective::bcast, model.placement(4), {6, 0, 0}, 1024);
  EXPECT_LE(m.min_us, m.avg_us);
  EXPECT_LE(m.avg_us, m.max_us);
  EXPECT_EQ(m.trace, (std::vector<std::string>{"bcast_intra_binomial segsize=0"}));
  const SimResult detail = model.simulate(Collective::bcast, model.placement(4), {6, 0, 0}, 1024);
  EXPECT_DOUBLE_EQ(detail.avg_us, a);
  EXPECT_EQ(detail.rank_time_us.size(), 4u);
  const_cast<SimModel&>(model).clear_cache();
  EXPECT_EQ(model.cache_size(), 0u);
}

TEST(SimModel, CacheIsBoundedOldestFirst) {
  // A daemon's sim backend lives for the daemon's life: its cache must not grow with every
  // campaign (issue 20 item 9).
  SimModel model(load_profile("local"), 4'000'000, /*max_cache_entries=*/3);
  const double first = model.latency_us(Collective::bcast, 4, {6, 0, 0}, 4);
  std::vector<double> fresh;
  for (std::int64_t size : {4, 8, 16, 32, 64}) {
    fresh.push_back(model.latency_us(Collective::bcast, 4, {6, 0, 0}, size));
    EXPECT_LE(model.cache_size(), 3u);
  }
  EXPECT_EQ(model.cache_size(), 3u);
  // An evicted entry is simulated again, to the same value.
  EXPECT_EQ(model.latency_us(Collective::bcast, 4, {6, 0, 0}, 4), first);
  EXPECT_EQ(fresh.front(), first);
  EXPECT_EQ(model.cache_size(), 3u);
  // 0: no caching at all.
  SimModel uncached(load_profile("local"), 4'000'000, 0);
  EXPECT_EQ(uncached.latency_us(Collective::bcast, 4, {6, 0, 0}, 4), first);
  EXPECT_EQ(uncached.cache_size(), 0u);
}

TEST(SimModel, ReportsWhatItCannotSimulate) {
  const SimModel model = SimModel::load("pise");
  EXPECT_FALSE(SimModel::models(Collective::alltoall));
  EXPECT_THROW(model.latency_us(Collective::alltoall, 8, {1, 0, 0}, 4), std::invalid_argument);
  EXPECT_THROW(model.latency_us(Collective::bcast, 8, {10, 0, 0}, 4), AlgorithmOutOfRange);
  const SimModel tight(load_profile("pise"), 1000);
  EXPECT_THROW(tight.latency_us(Collective::bcast, 576, {6, 1024, 0}, 1 << 20), ScheduleTooLarge);
}

TEST(Noise, SamplingIsRepeatableAndCentredOnTheModel) {
  const SimModel model = SimModel::load("pise");
  const double truth = model.latency_us(Collective::bcast, 48, {6, 0, 0}, 4);
  NoisySampler a(model, 7), b(model, 7), c(model, 8);
  std::vector<double> xs;
  bool differs = false;
  for (int i = 0; i < 2000; ++i) {
    const double x = a.sample_us(Collective::bcast, 48, {6, 0, 0}, 4);
    EXPECT_EQ(x, b.sample_us(Collective::bcast, 48, {6, 0, 0}, 4));
    if (x != c.sample_us(Collective::bcast, 48, {6, 0, 0}, 4)) differs = true;
    xs.push_back(x);
  }
  EXPECT_TRUE(differs);
  // Median close to the model; spread close to the profile's small-message sigma.
  std::sort(xs.begin(), xs.end());
  EXPECT_NEAR(xs[1000] / truth, 1.0, 0.02);
  std::vector<double> logs;
  for (double x : xs) logs.push_back(std::log(x / truth));
  std::sort(logs.begin(), logs.end());
  const double iqr_sigma = (logs[1500] - logs[500]) / 1.349;  // robust to the outliers
  const NoiseModel& n = model.profile().noise;
  EXPECT_NEAR(iqr_sigma, std::hypot(n.run_sigma, n.small_sigma), 0.01);
  // Outliers: about the small-message rate are at least outlier_min above the median.
  const auto above = std::count_if(xs.begin(), xs.end(),
                                   [&](double x) { return x > truth * n.outlier_min * 0.9; });
  EXPECT_GE(above, 5);
  EXPECT_LE(above, 60);
  NoisySampler quiet(model, 7, NoiseModel::none());
  EXPECT_EQ(quiet.sample_us(Collective::bcast, 48, {6, 0, 0}, 4), truth);
}

TEST(Noise, LargeMessagesAreQuieterAndRunsAreRepeatable) {
  NoiseModel n;
  EXPECT_GT(n.sigma_at(4), n.sigma_at(1 << 20));
  EXPECT_GT(n.outlier_rate_at(4), n.outlier_rate_at(1 << 20));
  EXPECT_DOUBLE_EQ(n.sigma_at(n.small_bytes), n.small_sigma);
  EXPECT_DOUBLE_EQ(n.sigma_at(n.large_bytes), n.large_sigma);
  const SimModel model = SimModel::load("local");
  const NoisySampler s(model, 3);
  const auto rows =
      s.sample_run(Collective::allreduce, model.placement(4), {4, 0, 0}, {4, 64, 4096}, 100, 11);
  const auto again =
      s.sample_run(Collective::allreduce, model.placement(4), {4, 0, 0}, {4, 64, 4096}, 100, 11);
  ASSERT_EQ(again.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(again[i].avg_us, rows[i].avg_us);
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& r : rows) {
    EXPECT_LE(*r.min_us, r.avg_us);
    EXPECT_LE(r.avg_us, *r.max_us);
    EXPECT_EQ(*r.iterations, 100);
  }
  EXPECT_THROW(NoiseModel::from_json(nlohmann::json{{"small_outlier_rate", 2}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace colltune::sim
