// Golden values of the simulator (issue #15, 8192-rank landscapes): every noise-free latency
// (OSU Avg, Min, Max) and every noisy repeat of a set of landscapes, recorded in
// tests/data/sim_golden.csv before the simulator was made faster, must come out bit-identical.
// The cases cover the four collectives, every configuration of the search space, one node,
// several nodes with a partly filled last node, an oversubscribed node, eager and rendezvous
// sizes.
//
// Re-record (only when the model is meant to change): COLLTUNE_WRITE_SIM_GOLDEN=1
// build/tests/runner/sim_landscape_tests --gtest_filter='SimGolden.*'
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench/optimizer/sim_landscape.h"
#include "optimizer/search_space.h"
#include "runner/sim/sim_model.h"

namespace colltune::bench {
namespace {

struct GoldenCase {
  const char* profile;
  int comm_size;
  std::int64_t min_size, max_size;
};

// Small enough for a unit test (a few seconds), large enough to cross node boundaries and
// protocol switches.
const GoldenCase kCases[] = {
    {"local", 6, 4, 1 << 20},          // oversubscribed single node
    {"pise", 4, 4, 1 << 20},           // one node
    {"pise", 100, 4, 1 << 13},         // three nodes, the last one partly filled
    {"hpc64x128", 300, 2048, 2048},    // three nodes of 128, partly filled
    {"summit", 45, 1 << 17, 1 << 17},  // rendezvous sizes across nodes
};

std::string bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  char text[24];
  std::snprintf(text, sizeof text, "%016" PRIx64, u);
  return text;
}

// One line per cell: case key, configuration, size, then Avg/Min/Max and the repeats, each as
// the bit pattern of the double (exact) followed by nothing else.
std::map<std::string, std::string> compute() {
  std::map<std::string, std::string> lines;
  const auto& table = AlgorithmTable::builtin_4_1();
  const Collective collectives[] = {Collective::bcast, Collective::reduce, Collective::allreduce,
                                    Collective::gather};
  for (const GoldenCase& g : kCases) {
    const auto model = sim::SimModel::load(g.profile);
    const auto placement = model.placement(g.comm_size);
    SimLandscapeOptions o;
    o.profile = g.profile;
    o.comm_size = g.comm_size;
    o.collectives.assign(std::begin(collectives), std::end(collectives));
    o.repeats = 3;
    o.seed = 11;
    o.min_size = g.min_size;
    o.max_size = g.max_size;
    o.threads = 2;
    const auto landscapes = sim_landscapes(o, table);
    for (const Landscape& l : landscapes)
      for (const auto& [config, by_size] : l.points)
        for (const auto& [size, point] : by_size) {
          std::ostringstream key, value;
          key << g.profile << "," << g.comm_size << "," << name(l.collective) << ","
              << config.algorithm << "," << config.segsize << "," << config.fanout << "," << size;
          const auto m = model.measure(l.collective, placement, config, size);
          value << bits(point.truth) << "," << bits(m.avg_us) << "," << bits(m.min_us) << ","
                << bits(m.max_us);
          for (double x : point.repeats) value << "," << bits(x);
          lines[key.str()] = value.str();
        }
  }
  return lines;
}

TEST(SimGolden, LatenciesAndNoisyRepeatsAreBitIdenticalToTheRecordedValues) {
  const std::string path = COLLTUNE_SIM_GOLDEN;
  const auto now = compute();
  if (const char* w = std::getenv("COLLTUNE_WRITE_SIM_GOLDEN"); w && std::string(w) == "1") {
    std::ofstream out(path);
    out << "# profile,comm_size,collective,algorithm,segsize,fanout,msg_size,"
           "truth,avg,min,max,repeats... (IEEE-754 bits, hex)\n";
    for (const auto& [k, v] : now) out << k << "|" << v << "\n";
    GTEST_SKIP() << "recorded " << now.size() << " cells to " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::map<std::string, std::string> recorded;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto bar = line.find('|');
    ASSERT_NE(bar, std::string::npos) << line;
    recorded[line.substr(0, bar)] = line.substr(bar + 1);
  }
  ASSERT_GT(recorded.size(), 1000u);
  EXPECT_EQ(now.size(), recorded.size());
  int mismatches = 0;
  for (const auto& [k, v] : recorded) {
    const auto it = now.find(k);
    if (it == now.end()) {
      if (++mismatches <= 10) ADD_FAILURE() << "cell missing now: " << k;
      continue;
    }
    if (it->second != v && ++mismatches <= 10)
      ADD_FAILURE() << k << "\n recorded " << v << "\n now      " << it->second;
  }
  for (const auto& [k, v] : now)
    if (!recorded.contains(k) && ++mismatches <= 10) ADD_FAILURE() << "new cell: " << k;
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace colltune::bench
