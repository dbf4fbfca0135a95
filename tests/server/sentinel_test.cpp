// The sentinel's parts that need no MPI: cells, the cells a rules file suggests, and the
// bootstrap interval that decides "beyond noise".
#include "campaign/sentinel.h"

#include <gtest/gtest.h>

#include "rules/rules_reader.h"
#include "runner/sim_backend.h"

namespace colltune {
namespace {

TEST(SentinelCells, ParsesAndFormats) {
  const auto cells = parse_sentinel_cells("bcast:1M,allreduce:64K,reduce:4096");
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[0], (SentinelCell{Collective::bcast, 1 << 20}));
  EXPECT_EQ(cells[1], (SentinelCell{Collective::allreduce, 64 << 10}));
  EXPECT_EQ(to_string(cells[1]), "allreduce:64K");
  EXPECT_EQ(to_string(cells[2]), "reduce:4K");
  EXPECT_EQ(parse_sentinel_cells("bcast:1M,bcast:1M").size(), 1u);
  EXPECT_THROW(parse_sentinel_cells("bcast"), std::invalid_argument);
  EXPECT_THROW(parse_sentinel_cells("broadcast:1M"), std::invalid_argument);
  EXPECT_THROW(parse_sentinel_cells("bcast:1M:2M"), std::invalid_argument);
  EXPECT_THROW(parse_sentinel_cells("barrier:4"), std::invalid_argument);
  EXPECT_THROW(parse_sentinel_cells(""), std::invalid_argument);
}

TEST(SentinelCells, FromARulesFile) {
  // bcast at 4 ranks: default below 8 KiB, binomial up to 512 KiB, chain from 512 KiB;
  // allreduce: recursive doubling below 64 KiB, then the default.
  const std::string text =
      "2\n7\n1\n4\n3\n0 0 0 0\n8192 6 0 0\n524288 2 1 65536\n"
      "2\n1\n4\n2\n0 3 0 0\n65536 0 0 0\n";
  const RulesModel model = parse_rules(text, RulesDialect::ompi_4_1);
  const auto cells = sentinel_cells_from_rules(model, 4, 3);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(to_string(cells[0]), "bcast:1M");       // chain run, largest size
  EXPECT_EQ(to_string(cells[1]), "allreduce:32K");  // recursive doubling run
  EXPECT_EQ(to_string(cells[2]), "bcast:256K");     // binomial run
}

TEST(SentinelStatistics, BootstrapIntervalSeparatesASlowdownFromNoise) {
  std::vector<double> base = {100, 104, 97, 101, 99, 103, 98, 102, 100, 96};
  std::vector<double> same = {101, 98, 103, 99, 100, 97, 104, 100, 102, 99};
  const auto equal = bootstrap_median_ratio(same, base, 2000, 0.95, 3);
  EXPECT_NEAR(equal.ratio, 1.0, 0.02);
  EXPECT_LT(equal.low, 1.0);
  EXPECT_GT(equal.high, 1.0);
  std::vector<double> slow;
  for (double x : base) slow.push_back(x * 1.5);
  const auto slower = bootstrap_median_ratio(slow, base, 2000, 0.95, 3);
  EXPECT_GT(slower.low, 1.3);
  EXPECT_LT(slower.low, slower.ratio);
  EXPECT_GT(slower.high, slower.ratio);
  // Seeded: the same interval every time.
  const auto again = bootstrap_median_ratio(slow, base, 2000, 0.95, 3);
  EXPECT_EQ(again.low, slower.low);
  EXPECT_EQ(again.high, slower.high);
}

TEST(Sentinel, RefusesABackendThatCannotLoadRules) {
  SimBackend sim;
  SentinelOptions options;
  options.rules_path = "/etc/hostname";
  options.cells = {{Collective::bcast, 1 << 20}};
  CancelFlag cancel;
  EXPECT_THROW(run_sentinel(sim, options, cancel), std::invalid_argument);
}

}  // namespace
}  // namespace colltune
