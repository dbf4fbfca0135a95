// OSU 5.6.2 text produced for simulated and replayed runs: byte-identical to real OMB output
// (excerpts copied from the ORNL Summit/Peak raw outputs, tests/data/ornl, and from Open MPI issue
// #9761), and read back by the project's parser.
#include <gtest/gtest.h>

#include "osu/osu_output.h"
#include "runner/sim/osu_text.h"

namespace colltune::sim {
namespace {

TEST(OsuText, MessageSizesFollowOsu562) {
  EXPECT_EQ(osu_message_sizes(Collective::bcast, 1, 8), (std::vector<std::int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(osu_message_sizes(Collective::gather, 3, 20), (std::vector<std::int64_t>{3, 6, 12}));
  EXPECT_EQ(osu_message_sizes(Collective::allreduce, 1, 16), (std::vector<std::int64_t>{4, 8, 16}));
  // Reductions count floats: -m 6:64 starts at one float.
  EXPECT_EQ(osu_message_sizes(Collective::reduce, 6, 64),
            (std::vector<std::int64_t>{4, 8, 16, 32, 64}));
  EXPECT_EQ(osu_message_sizes(Collective::barrier, 4, 1024), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(osu_message_sizes(Collective::bcast, 4, 1 << 20).size(), 19u);
}

TEST(OsuText, MatchesRealOmbOutputByteForByte) {
  // raw/peak-2020-05/bcast/6_16ranks_run0.out (first lines)
  const std::string real =
      "\n# OSU MPI Broadcast Latency Test v5.6.2\n# Size       Avg Latency(us)\n"
      "1                       2.86\n2                       2.99\n";
  EXPECT_EQ(format_osu_output(Collective::bcast, {{1, 2.86}, {2, 2.99}}, false), real);
  // raw/peak-2020-05/gather/0_4ranks_run0.out (last line)
  EXPECT_NE(format_osu_output(Collective::gather, {{1048576, 148.41}}, false)
                .find("\n1048576               148.41\n"),
            std::string::npos);
  // raw/peak-2020-05/barrier/1_4ranks_run0.out
  EXPECT_EQ(format_osu_output(Collective::barrier, {{0, 1.98}}, false),
            "\n# OSU MPI Barrier Latency Test v5.6.2\n# Avg Latency(us)\n             1.98\n");
  // -f columns (OMB 5.7 output quoted in open-mpi/ompi#9761)
  OsuRow row{4, 39.08, 38.11, 42.66, 1000, std::nullopt};
  EXPECT_EQ(format_osu_output(Collective::allreduce, {row}, true, "5.7"),
            "\n# OSU MPI Allreduce Latency Test v5.7\n"
            "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
            "4                      39.08             38.11             42.66        1000\n");
  EXPECT_THROW(format_osu_output(Collective::bcast, {{1, 2.0}}, true), std::invalid_argument);
}

TEST(OsuText, TheParserReadsItBack) {
  std::vector<OsuRow> rows;
  for (std::int64_t s = 4; s <= (1 << 20); s *= 2)
    rows.push_back({s, 1.234 * s, 1.0 * s, 1.5 * s, 100, std::nullopt});
  const auto parsed = parse_osu_output(format_osu_output(Collective::reduce, rows, true));
  ASSERT_TRUE(parsed.ok()) << parsed.error->message;
  EXPECT_EQ(parsed.output.benchmark, "OSU MPI Reduce Latency Test");
  EXPECT_EQ(parsed.output.version, "5.6.2");
  ASSERT_EQ(parsed.output.rows.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(parsed.output.rows[i].size, rows[i].size);
    EXPECT_NEAR(parsed.output.rows[i].avg_us, rows[i].avg_us, 0.005);
    EXPECT_NEAR(*parsed.output.rows[i].max_us, *rows[i].max_us, 0.005);
    EXPECT_EQ(*parsed.output.rows[i].iterations, 100);
  }
  const auto barrier = parse_osu_output(format_osu_output(Collective::barrier, {{0, 3.5}}, false));
  ASSERT_TRUE(barrier.ok());
  EXPECT_DOUBLE_EQ(barrier.output.rows.at(0).avg_us, 3.5);
}

TEST(OsuText, AbortBannerIsRecognisedAsAnMpiError) {
  const std::string stdout_text = format_osu_output(Collective::bcast, {}, true);
  const auto parsed = parse_osu_output(
      stdout_text, mpi_abort_banner(Collective::bcast, "MPI_ERR_ARG",
                                    "invalid argument of some other kind", "sim:pise"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error->kind, OsuErrorKind::mpi_error);
}

TEST(OsuText, CommandLineAndCost) {
  BenchmarkRequest r;
  r.collective = Collective::allreduce;
  r.comm_size = 96;
  r.nodes = 2;
  r.min_size = 4;
  r.max_size = 1024;
  r.iterations = 200;
  r.warmup = 20;
  const auto argv = osu_job_argv(r, {{"coll_tuned_allreduce_algorithm", "6"}});
  const std::vector<std::string> expected = {"mpirun",
                                             "-np",
                                             "96",
                                             "--map-by",
                                             "ppr:48:node",
                                             "--mca",
                                             "coll_tuned_allreduce_algorithm",
                                             "6",
                                             "osu_allreduce",
                                             "-m",
                                             "4:1024",
                                             "-i",
                                             "200",
                                             "-x",
                                             "20",
                                             "-f"};
  EXPECT_EQ(argv, expected);
  std::vector<OsuRow> rows{{4, 10.0}, {8, 30.0}};
  EXPECT_DOUBLE_EQ(osu_run_seconds(rows, 200, 20, 0.5), 0.5 + 220 * 40e-6);
}

}  // namespace
}  // namespace colltune::sim
