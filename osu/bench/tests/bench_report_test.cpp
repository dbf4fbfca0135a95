// Output bytes of colltune-osu-bench against real OMB output (no MPI needed).
//
// The expected strings are copied verbatim from real OMB runs:
//   OMB 5.6.2: the ORNL Peak sweep, peak-2020-05/{bcast,alltoall,allreduce,barrier}/
//              0_*ranks_run0.out (origin: tests/data/ornl/README.md)
//   OMB 5.7 -f: https://github.com/open-mpi/ompi/issues/9761 (allreduce)
// Only the version differs: we print "v5.6.2-colltune" where OMB prints "v5.6.2".
#include "osu/bench/bench_report.h"

#include <gtest/gtest.h>

#include "osu/osu_command.h"

namespace colltune::osu_bench {
namespace {

BenchOptions options_for(Collective c, bool full = false) {
  BenchOptions o;
  o.collective = c;
  o.benchmark_name = "osu_" + std::string(name(c));
  o.full = full;
  return o;
}

std::string with_our_version(std::string omb_text) {
  const std::string omb = " v5.6.2\n";
  const auto at = omb_text.find(omb);
  if (at != std::string::npos) omb_text.replace(at, omb.size(), " v5.6.2-colltune\n");
  return omb_text;
}

TEST(BenchReport, PreambleIsOmb562sBytes) {
  EXPECT_EQ(preamble(options_for(Collective::bcast)),
            with_our_version("\n# OSU MPI Broadcast Latency Test v5.6.2\n"
                             "# Size       Avg Latency(us)\n"));
  EXPECT_EQ(preamble(options_for(Collective::alltoall)),
            with_our_version("\n# OSU MPI All-to-All Personalized Exchange Latency Test v5.6.2\n"
                             "# Size       Avg Latency(us)\n"));
  EXPECT_EQ(preamble(options_for(Collective::barrier)),
            with_our_version("\n# OSU MPI Barrier Latency Test v5.6.2\n"
                             "# Avg Latency(us)\n"));
}

TEST(BenchReport, DataLinesAreOmb562sBytes) {
  EXPECT_EQ(data_line(options_for(Collective::bcast), 1, 5.26, 0, 0, 1000),
            "1                       5.26\n");
  EXPECT_EQ(data_line(options_for(Collective::bcast), 1048576, 1838.88, 0, 0, 100),
            "1048576              1838.88\n");
  EXPECT_EQ(data_line(options_for(Collective::alltoall), 1048576, 203272.62, 0, 0, 100),
            "1048576            203272.62\n");
  EXPECT_EQ(data_line(options_for(Collective::allreduce), 524288, 1076.19, 0, 0, 100),
            "524288               1076.19\n");
  EXPECT_EQ(data_line(options_for(Collective::barrier), 0, 0.37, 0, 0, 100), "             0.37\n");
}

TEST(BenchReport, FullFormatIsOmbs) {
  const auto o = options_for(Collective::allreduce, /*full=*/true);
  EXPECT_EQ(preamble(o),
            "\n# OSU MPI Allreduce Latency Test v5.6.2-colltune\n"
            "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n");
  EXPECT_EQ(data_line(o, 4, 39.08, 38.11, 42.66, 1000),
            "4                      39.08             38.11             42.66        1000\n");
  EXPECT_EQ(data_line(o, 8, 34.92, 34.20, 35.75, 1000),
            "8                      34.92             34.20             35.75        1000\n");
}

TEST(BenchReport, BarrierFullFormat) {
  const auto o = options_for(Collective::barrier, /*full=*/true);
  EXPECT_EQ(preamble(o),
            "\n# OSU MPI Barrier Latency Test v5.6.2-colltune\n"
            "# Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n");
  EXPECT_EQ(data_line(o, 0, 12.68, 10.5, 14.25, 100),
            "            12.68             10.50             14.25         100\n");
}

TEST(BenchReport, ValidationColumnAndErrorAreOmb6s) {
  auto o = options_for(Collective::bcast);
  o.validate = true;
  EXPECT_EQ(preamble(o),
            "\n# OSU MPI Broadcast Latency Test v5.6.2-colltune\n"
            "# Size       Avg Latency(us)        Validation\n");
  EXPECT_EQ(data_line(o, 64, 1.5, 1, 2, 10, true),
            "64                      1.50              Pass\n");
  EXPECT_EQ(data_line(o, 64, 1.5, 1, 2, 10, false),
            "64                      1.50              Fail\n");
  EXPECT_EQ(validation_error_line(o, 64),
            "DATA VALIDATION ERROR: osu_bcast exited with status 1 on message size 64.\n");
}

TEST(BenchReport, DatatypeLineOnlyWithExplicitType) {
  auto o = options_for(Collective::allreduce);
  o.type = ElementType::mpi_float;
  EXPECT_EQ(preamble(o),
            "\n# OSU MPI Allreduce Latency Test v5.6.2-colltune\n"
            "# Datatype: MPI_FLOAT.\n"
            "# Size       Avg Latency(us)\n");
}

TEST(BenchReport, TitlesMatchTheOsuLibrary) {
  for (const Collective c : supported_collectives()) {
    EXPECT_EQ(benchmark_title(c), osu_benchmark_title(c)) << name(c);
    EXPECT_EQ(header_line(c), "# " + std::string(osu_benchmark_title(c)) + " v5.6.2-colltune\n");
  }
}

TEST(BenchReport, HelpListsOmbOptions) {
  const std::string help = help_text(options_for(Collective::bcast));
  EXPECT_EQ(help.rfind("Usage: osu_bcast [options]\nOptions:\n", 0), 0u);
  for (const char* option :
       {"-m, --message-size", "-M, --mem-limit", "-i, --iterations", "-x, --warmup", "-f, --full",
        "-T, --type", "-h, --help", "-v, --version"})
    EXPECT_NE(help.find(option), std::string::npos) << option;
  const std::string barrier_help = help_text(options_for(Collective::barrier));
  EXPECT_EQ(barrier_help.find("--message-size"), std::string::npos);
  EXPECT_EQ(barrier_help.find("--type"), std::string::npos);
}

TEST(BenchReport, MemLimitWarning) {
  EXPECT_EQ(mem_limit_raised_text(), "Requested memory limit too low, using [1048576] instead.\n");
}

}  // namespace
}  // namespace colltune::osu_bench
