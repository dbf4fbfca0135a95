// Ground-truth landscapes from the simulated cluster for colltune-bench-optimizer --sim.
#include "bench/optimizer/sim_landscape.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "optimizer/search_space.h"
#include "runner/sim/sim_model.h"

namespace colltune::bench {
namespace {

SimLandscapeOptions local_bcast(std::uint64_t seed = 3) {
  SimLandscapeOptions o;
  o.profile = "local";
  o.comm_size = 4;
  o.collectives = {Collective::bcast};
  o.repeats = 5;
  o.seed = seed;
  return o;
}

TEST(SimLandscape, EveryConfigurationAndSizeWithNoiseFreeTruth) {
  const auto& table = AlgorithmTable::builtin_4_1();
  const auto landscapes = sim_landscapes(local_bcast(), table);
  ASSERT_EQ(landscapes.size(), 1u);
  const Landscape& l = landscapes[0];
  EXPECT_EQ(l.collective, Collective::bcast);
  EXPECT_EQ(l.comm_size, 4);
  ASSERT_EQ(l.msg_sizes.size(), 19u);  // 4 B .. 1 MiB
  EXPECT_EQ(l.msg_sizes.front(), 4);
  EXPECT_EQ(l.msg_sizes.back(), 1 << 20);
  const SearchSpace space(Collective::bcast, 4, table);
  EXPECT_EQ(l.points.size(), space.size());
  const auto model = sim::SimModel::load("local");
  int noisy = 0;
  for (const auto& config : space.points())
    for (auto size : l.msg_sizes) {
      const LandscapePoint* p = l.find(config, size);
      ASSERT_NE(p, nullptr) << to_string(config) << " " << size;
      EXPECT_DOUBLE_EQ(p->truth, model.latency_us(Collective::bcast, 4, config, size));
      ASSERT_EQ(p->repeats.size(), 5u);
      EXPECT_EQ(p->drawn, p->repeats);
      for (double x : p->repeats) EXPECT_GT(x, 0);
      if (p->noise_sd > 0) ++noisy;
    }
  EXPECT_EQ(noisy, static_cast<int>(space.size() * l.msg_sizes.size()));
  // The optimum is the lowest noise-free latency.
  double best = INFINITY;
  for (const auto& config : space.points())
    best = std::min(best, model.latency_us(Collective::bcast, 4, config, 1 << 20));
  EXPECT_DOUBLE_EQ(l.optimum(1 << 20), best);
}

TEST(SimLandscape, NoiseIsSeeded) {
  const auto& table = AlgorithmTable::builtin_4_1();
  const auto a = sim_landscapes(local_bcast(3), table)[0];
  const auto b = sim_landscapes(local_bcast(3), table)[0];
  const auto c = sim_landscapes(local_bcast(4), table)[0];
  const TuningConfig binomial{6, 0, 0};
  EXPECT_EQ(a.find(binomial, 1024)->repeats, b.find(binomial, 1024)->repeats);
  EXPECT_NE(a.find(binomial, 1024)->repeats, c.find(binomial, 1024)->repeats);
  EXPECT_DOUBLE_EQ(a.find(binomial, 1024)->truth, c.find(binomial, 1024)->truth);
}

TEST(SimLandscape, CacheRoundTripsAndIsTiedToTheProfile) {
  const auto& table = AlgorithmTable::builtin_4_1();
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("colltune-sim-landscape-" + std::to_string(::getpid()) + ".csv"))
                               .string();
  auto o = local_bcast();
  o.cache_path = path;
  const auto fresh = sim_landscapes(o, table)[0];
  ASSERT_TRUE(std::filesystem::exists(path));
  // Tamper with one cached value: a matching cache is read instead of simulating...
  std::string text;
  {
    std::ifstream in(path);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      if (++n > 2 && line.rfind("7,4,6,0,0,1024,", 0) == 0) line = "7,4,6,0,0,1024,12345";
      text += line + "\n";
    }
  }
  std::ofstream(path) << text;
  EXPECT_DOUBLE_EQ(sim_landscapes(o, table)[0].find({6, 0, 0}, 1024)->truth, 12345);
  // ... and a cache written for another profile is ignored.
  auto other = o;
  other.profile = "pise";
  other.comm_size = 4;
  const auto pise = sim_landscapes(other, table)[0];
  EXPECT_NE(pise.find({6, 0, 0}, 1024)->truth, 12345);
  EXPECT_NE(pise.find({6, 0, 0}, 1024)->truth, fresh.find({6, 0, 0}, 1024)->truth);
  std::filesystem::remove(path);
}

TEST(SimLandscape, RejectsWhatTheModelDoesNotCover) {
  const auto& table = AlgorithmTable::builtin_4_1();
  auto o = local_bcast();
  o.collectives = {Collective::alltoall};
  EXPECT_THROW(sim_landscapes(o, table), std::invalid_argument);
  o = local_bcast();
  o.profile = "no-such-profile";
  EXPECT_ANY_THROW(sim_landscapes(o, table));
}

TEST(SimLandscape, DefaultCommSizeIsTheProfilesFullSize) {
  auto o = local_bcast();
  o.comm_size = 0;
  o.max_size = 64;
  EXPECT_EQ(sim_landscapes(o, AlgorithmTable::builtin_4_1())[0].comm_size, 2);  // 1 node x 2
}

}  // namespace
}  // namespace colltune::bench
