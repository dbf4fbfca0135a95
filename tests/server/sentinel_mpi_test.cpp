// The sentinel on the real Open MPI of this machine (np 4, oversubscribed): it fires on a
// deliberately degraded rules file (bcast binomial with 1 KiB segments at every size: about
// 10x slower than the default at 256 KiB - 1 MiB, docs/reference/open-mpi-rules.md §B.4) and stays
// quiet on a good one over 10 runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "campaign/sentinel.h"
#include "runner/local_backend.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

fs::path write_rules(const std::string& name, const std::string& text) {
  const fs::path path =
      fs::temp_directory_path() / ("sentinel-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path;
}

LocalBackend local_backend() {
  LocalBackendOptions o;
  o.osu_dir = COLLTUNE_OSU_BENCH_DIR;
  return LocalBackend(o);
}

SentinelOptions small_options(const fs::path& rules, std::uint64_t seed) {
  SentinelOptions o;
  o.rules_path = rules;
  o.cells = parse_sentinel_cells("bcast:256K,bcast:1M");
  o.comm_size = 4;
  o.rounds = 5;
  o.iterations = 20;
  o.warmup = 2;
  o.seed = seed;
  o.run_timeout_s = 60;
  return o;
}

TEST(SentinelMpi, FiresOnADegradedRulesFile) {
  const auto rules = write_rules("degraded.conf",
                                 "# bcast on 4 ranks: binomial, 1 KiB segments, at every size\n"
                                 "1\n7\n1\n4\n1\n0 6 0 1024\n");
  auto backend = local_backend();
  CancelFlag cancel;
  const SentinelReport report = run_sentinel(backend, small_options(rules, 1), cancel);
  std::printf("%s", report.to_text().c_str());
  EXPECT_EQ(report.failed_runs, 0) << report.first_failure;
  EXPECT_TRUE(report.regression);
  ASSERT_EQ(report.cells.size(), 2u);
  for (const auto& c : report.cells) {
    EXPECT_EQ(c.verdict, "regressed") << to_string(c.cell);
    EXPECT_EQ(c.tuned_us.size(), 5u);
    EXPECT_GT(c.ratio.low, 2.0) << to_string(c.cell);
  }
  EXPECT_EQ(report.to_json()["regression"], true);
  fs::remove(rules);
}

TEST(SentinelMpi, StaysQuietOnAGoodRulesFileOverTenRuns) {
  // The fixed decision below 8 KiB, basic_linear above (what the default runs up to 1 MiB at
  // 4 ranks, and faster than its chain at 1 MiB).
  const auto rules = write_rules("good.conf", "1\n7\n1\n4\n2\n0 0 0 0\n8192 1 0 0\n");
  auto backend = local_backend();
  CancelFlag cancel;
  int fired = 0;
  for (std::uint64_t run = 1; run <= 10; ++run) {
    const SentinelReport report = run_sentinel(backend, small_options(rules, run), cancel);
    EXPECT_EQ(report.failed_runs, 0) << report.first_failure;
    std::string line = "run " + std::to_string(run) + ":";
    for (const auto& c : report.cells) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " %s %.2f [%.2f, %.2f] %s", to_string(c.cell).c_str(),
                    c.ratio.ratio, c.ratio.low, c.ratio.high, c.verdict.c_str());
      line += buf;
    }
    std::printf("%s\n", line.c_str());
    if (report.regression) ++fired;
  }
  EXPECT_EQ(fired, 0);
  fs::remove(rules);
}

}  // namespace
}  // namespace colltune
