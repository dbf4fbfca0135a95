// Parser behaviour on well-formed OMB 5.x-7.x outputs and on every kind of broken output.
// Fixtures in data/: *.out is stdout, *.err stderr. bcast_mpi_err_arg.* and bcast_segv.* were
// captured here from Open MPI 4.1.4 (a small MPI program printing OSU's table, then calling
// MPI_Bcast with count -1 / dereferencing NULL), so their banners are the real ones.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/file_text.h"
#include "osu/osu_command.h"
#include "osu/osu_output.h"

namespace colltune {
namespace {

std::string fixture(const std::string& name) {
  const auto text = read_file_text(std::string(COLLTUNE_OSU_TEST_DATA) + "/" + name);
  EXPECT_TRUE(text) << "missing fixture " << name;
  return text.value_or("");
}

constexpr const char* kBcastHead =
    "\n"
    "# OSU MPI Broadcast Latency Test v5.6.2\n"
    "# Size       Avg Latency(us)\n";

void expect_error(const OsuParseResult& result, OsuErrorKind kind, int line) {
  ASSERT_TRUE(result.error.has_value()) << "expected " << to_string(kind);
  EXPECT_EQ(to_string(result.error->kind), to_string(kind)) << result.error->message;
  EXPECT_EQ(result.error->line, line) << result.error->message;
  EXPECT_FALSE(result.error->message.empty());
}

// ---------------------------------------------------------------- well-formed outputs

TEST(OsuParser, Omb57FullFromOpenMpiIssue) {  // verbatim from open-mpi/ompi#9761 (no blank line)
  auto result = parse_osu_output(
      "# OSU MPI Allreduce Latency Test v5.7\n"
      "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
      "4                      39.08             38.11             42.66        1000\n"
      "8                      34.92             34.20             35.75        1000\n");
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(result.output.benchmark, "OSU MPI Allreduce Latency Test");
  EXPECT_EQ(result.output.version, "5.7");
  EXPECT_TRUE(result.output.full);
  EXPECT_FALSE(result.output.validation);
  EXPECT_FALSE(result.output.datatype.has_value());
  ASSERT_EQ(result.output.rows.size(), 2u);
  const OsuRow& row = result.output.rows[1];
  EXPECT_EQ(row.size, 8);
  EXPECT_DOUBLE_EQ(row.avg_us, 34.92);
  EXPECT_DOUBLE_EQ(row.min_us.value(), 34.20);
  EXPECT_DOUBLE_EQ(row.max_us.value(), 35.75);
  EXPECT_EQ(row.iterations.value(), 1000);
  EXPECT_FALSE(row.validation_passed.has_value());
}

TEST(OsuParser, Omb562AllreduceFull) {
  auto result = parse_osu_output(fixture("omb562_allreduce_full.out"));
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(result.output.version, "5.6.2");
  ASSERT_EQ(result.output.rows.size(), 9u);
  std::int64_t expected_size = 4;
  for (const OsuRow& row : result.output.rows) {
    EXPECT_EQ(row.size, expected_size);
    expected_size *= 2;
    EXPECT_EQ(row.iterations.value(), 1000);
  }
  EXPECT_DOUBLE_EQ(result.output.rows[0].avg_us, 3.00);
  EXPECT_DOUBLE_EQ(result.output.rows[0].min_us.value(), 2.70);
  EXPECT_DOUBLE_EQ(result.output.rows[8].max_us.value(), 26.92);
}

TEST(OsuParser, Omb7KeepsOnlyFirstDatatypeSection) {
  auto result = parse_osu_output(fixture("omb7_allreduce_two_datatypes.out"));
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(result.output.version, "7.1");
  EXPECT_EQ(result.output.datatype.value_or(""), "MPI_CHAR");
  ASSERT_EQ(result.output.rows.size(), 7u);  // MPI_CHAR 1..64, not the MPI_FLOAT 4..64 rows
  EXPECT_EQ(result.output.rows.front().size, 1);
  EXPECT_DOUBLE_EQ(result.output.rows.front().avg_us, 2.00);
  EXPECT_EQ(result.output.rows.back().size, 64);
  EXPECT_DOUBLE_EQ(result.output.rows.back().avg_us, 4.22);
}

TEST(OsuParser, LaterDatatypeSectionIsStillChecked) {
  auto result = parse_osu_output(
      "\n# OSU MPI Allreduce Latency Test v7.1\n"
      "# Datatype: MPI_CHAR.\n"
      "# Size       Avg Latency(us)\n"
      "1                       2.00\n"
      "# Datatype: MPI_INT.\n"
      "# Size       Avg Latency(us)\n"
      "8                       2.50\n"
      "4                       2.40\n");
  expect_error(result, OsuErrorKind::malformed_line, 9);
  ASSERT_EQ(result.output.rows.size(), 1u);
  EXPECT_EQ(result.output.datatype.value_or(""), "MPI_CHAR");
}

TEST(OsuParser, Omb7BarrierFullHasNoSize) {
  auto result = parse_osu_output(fixture("omb7_barrier_full.out"));
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(result.output.benchmark, "OSU MPI Barrier Latency Test");
  EXPECT_TRUE(result.output.full);
  ASSERT_EQ(result.output.rows.size(), 1u);
  const OsuRow& row = result.output.rows[0];
  EXPECT_EQ(row.size, 0);
  EXPECT_DOUBLE_EQ(row.avg_us, 5.85);
  EXPECT_DOUBLE_EQ(row.min_us.value(), 5.26);
  EXPECT_DOUBLE_EQ(row.max_us.value(), 6.44);
  EXPECT_EQ(row.iterations.value(), 1000);
}

TEST(OsuParser, BarrierWithTwoRowsIsMalformed) {
  auto result = parse_osu_output(
      "\n# OSU MPI Barrier Latency Test v5.6.2\n# Avg Latency(us)\n             5.85\n"
      "             5.90\n");
  expect_error(result, OsuErrorKind::malformed_line, 5);
  EXPECT_EQ(result.output.rows.size(), 1u);
}

TEST(OsuParser, Omb74TailLatencyAndTransmitSizeColumns) {
  auto result = parse_osu_output(
      "\n# OSU MPI Broadcast Latency Test v7.4\n"
      "# Datatype: MPI_CHAR.\n"
      "# Size       Avg Latency(us)    P50 Tail Lat(us)    P90 Tail Lat(us)    P99 Tail Lat(us)"
      "       Transmit Size\n"
      "1                       1.10                1.00                1.50                2.00"
      "                   1\n"
      "2                       1.20                1.10                1.60                2.10"
      "                   2\n");
  ASSERT_TRUE(result.ok()) << result.error->message;
  ASSERT_EQ(result.output.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(result.output.rows[1].avg_us, 1.20);
  EXPECT_FALSE(result.output.full);
}

TEST(OsuParser, AcceleratorTitleAndBundledVersion) {
  auto cuda = parse_osu_output(
      "\n# OSU MPI-CUDA Broadcast Latency Test v5.6.2\n# Size  Avg Latency(us)\n1  2.00\n");
  ASSERT_TRUE(cuda.ok()) << cuda.error->message;
  EXPECT_EQ(cuda.output.benchmark, "OSU MPI-CUDA Broadcast Latency Test");
  EXPECT_EQ(collective_from_osu_title(cuda.output.benchmark), Collective::bcast);

  auto bundled = parse_osu_output(
      "\n# OSU MPI Reduce Latency Test v5.6.2-colltune\n# Size  Avg Latency(us)\n4  2.00\n");
  ASSERT_TRUE(bundled.ok()) << bundled.error->message;
  EXPECT_EQ(bundled.output.version, "5.6.2-colltune");
  EXPECT_EQ(collective_from_osu_title(bundled.output.benchmark), Collective::reduce);
}

TEST(OsuParser, CrLfLineEndings) {
  auto result = parse_osu_output(
      "\r\n# OSU MPI Broadcast Latency Test v5.6.2\r\n# Size  Avg Latency(us)\r\n1  2.00\r\n");
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(result.output.version, "5.6.2");
  EXPECT_EQ(result.output.rows.size(), 1u);
}

TEST(OsuParser, MemoryLimitWarningsDoNotBreakParsing) {
  // OMB 7 prints its warning without a newline, so in a merged stream it sticks to a line.
  auto result = parse_osu_output(
      std::string(kBcastHead) +
          "1                       3.16\n"
          "Warning! Limiting max message size to: 524288. Increase -M, --mem-limit for higher "
          "message sizes.2                       3.01\n"
          "Warning! Increase the Max Memory Limit to be able to run up to 1048576 bytes.\n"
          "Continuing with max message size of 524288 bytes\n"
          "4                       3.11\n",
      "Warning! Limiting max message size to: 524288. Increase -M, --mem-limit for higher "
      "message sizes.");
  ASSERT_TRUE(result.ok()) << result.error->message;
  ASSERT_EQ(result.output.rows.size(), 3u);
  EXPECT_EQ(result.output.rows[1].size, 2);
  EXPECT_DOUBLE_EQ(result.output.rows[1].avg_us, 3.01);
}

TEST(OsuParser, OneGluedMemoryNotePerRankIsSkipped) {
  // Every rank runs OSU's option parsing, so `-M` below 1 MiB makes each of the P ranks print
  // this note without a newline: P copies on one line of a merged stream. Captured from real
  // OMB 5.4.1 osu_bcast with 6 ranks (-M 1000); earlier only 4 copies were stripped.
  std::string notes;
  for (int rank = 0; rank < 6; ++rank)
    notes += "Requested memory limit too low, using [1048576] instead.";
  auto result =
      parse_osu_output(notes + std::string(kBcastHead) + "1                       3.16\n");
  ASSERT_TRUE(result.ok()) << result.error->message;
  ASSERT_EQ(result.output.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(result.output.rows[0].avg_us, 3.16);
  // Glued onto a data line too (notes flushed while rank 0 prints the table).
  result = parse_osu_output(std::string(kBcastHead) + notes + "1                       3.16\n");
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(result.output.rows.size(), 1u);
}

TEST(OsuParser, BenignOpenMpiHelpBlockInMergedOutputIsSkipped) {
  auto result = parse_osu_output(
      "--------------------------------------------------------------------------\n"
      "WARNING: There was an error initializing an OpenFabrics device.\n"
      "\n"
      "  Local host:   node1\n"
      "  Local device: mlx5_0\n"
      "--------------------------------------------------------------------------\n" +
      std::string(kBcastHead) +
      "1                       3.16\n"
      "[node1:1234] 1 more process has sent help message help-mpi-btl-openib.txt / error\n"
      "[node1:1234] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / "
      "error messages\n"
      "2                       3.01\n");
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(result.output.rows.size(), 2u);
}

// ---------------------------------------------------------------- broken outputs

TEST(OsuParser, EmptyOutput) {
  expect_error(parse_osu_output(""), OsuErrorKind::empty, 0);
  expect_error(parse_osu_output("\n \n"), OsuErrorKind::empty, 0);
}

TEST(OsuParser, HeaderOnlyIsTruncated) {
  auto result = parse_osu_output(kBcastHead);
  expect_error(result, OsuErrorKind::truncated, 3);
  EXPECT_EQ(result.output.benchmark, "OSU MPI Broadcast Latency Test");
  EXPECT_TRUE(result.output.rows.empty());
}

TEST(OsuParser, TitleOnlyIsTruncated) {  // e.g. the output of `osu_bcast -v`
  expect_error(parse_osu_output("# OSU MPI Broadcast Latency Test v5.6.2\n"),
               OsuErrorKind::truncated, 1);
}

TEST(OsuParser, TruncatedLastLineKeepsEarlierRows) {
  auto result = parse_osu_output(std::string(kBcastHead) +
                                 "1                       3.16\n"
                                 "2                       3.01\n"
                                 "4          ");
  expect_error(result, OsuErrorKind::truncated, 6);
  ASSERT_EQ(result.output.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(result.output.rows[1].avg_us, 3.01);
}

TEST(OsuParser, UnterminatedCompleteLookingLineIsNotTrusted) {
  // "3.1" may be the start of "3.16": a line without its newline is never turned into a row.
  auto result = parse_osu_output(std::string(kBcastHead) +
                                 "1                       3.16\n"
                                 "2                       3.1");
  expect_error(result, OsuErrorKind::truncated, 5);
  EXPECT_EQ(result.output.rows.size(), 1u);
}

TEST(OsuParser, NonNumericFields) {
  for (const char* bad : {"4                        abc\n", "4                     12.3abc\n",
                          "4x                       3.16\n", "4                        nan\n",
                          "4                        inf\n", "4                      -3.16\n",
                          "4                      3.1e2\n", "-4                      3.16\n",
                          "4.0                     3.16\n"}) {
    auto result = parse_osu_output(std::string(kBcastHead) + "2   3.00\n" + bad);
    expect_error(result, OsuErrorKind::malformed_line, 5);
    EXPECT_EQ(result.output.rows.size(), 1u) << bad;
  }
}

TEST(OsuParser, ExtraColumn) {
  auto result = parse_osu_output(std::string(kBcastHead) +
                                 "1                       3.16\n"
                                 "2                       3.01              2.90\n");
  expect_error(result, OsuErrorKind::malformed_line, 5);
  EXPECT_EQ(result.output.rows.size(), 1u);
}

TEST(OsuParser, MissingColumnInFullTable) {
  auto result = parse_osu_output(
      "\n# OSU MPI Allreduce Latency Test v5.6.2\n"
      "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
      "4                       3.00              2.70              3.30\n");
  expect_error(result, OsuErrorKind::malformed_line, 4);
}

TEST(OsuParser, DescendingAndRepeatedSizes) {
  expect_error(parse_osu_output(std::string(kBcastHead) + "8   3.00\n4   3.10\n"),
               OsuErrorKind::malformed_line, 5);
  expect_error(parse_osu_output(std::string(kBcastHead) + "8   3.00\n8   3.10\n"),
               OsuErrorKind::malformed_line, 5);
}

TEST(OsuParser, DataWithoutHeader) {
  expect_error(parse_osu_output("4                       3.00\n"), OsuErrorKind::no_header, 1);
  expect_error(parse_osu_output("\nhello world\n"), OsuErrorKind::no_header, 2);
  expect_error(parse_osu_output("# Size       Avg Latency(us)\n4   3.00\n"),
               OsuErrorKind::no_header, 1);
}

TEST(OsuParser, DataBeforeColumnHeader) {
  expect_error(parse_osu_output("\n# OSU MPI Broadcast Latency Test v5.6.2\n4   3.00\n"),
               OsuErrorKind::malformed_line, 3);
}

TEST(OsuParser, UnsupportedColumnHeaders) {
  // Non-blocking benchmarks have other columns; -f columns must come together.
  expect_error(parse_osu_output("\n# OSU MPI Non-blocking Broadcast Latency Test v5.6.2\n"
                                "# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait\n\n"
                                "# Size           Overall(us)       Compute(us)    Pure Comm.(us)"
                                "        Overlap(%)\n"
                                "1                      10.54              5.85              4.89"
                                "              4.12\n"),
               OsuErrorKind::malformed_line, 5);
  expect_error(parse_osu_output("\n# OSU MPI Allreduce Latency Test v5.6.2\n"
                                "# Size       Avg Latency(us)   Min Latency(us)\n4  1.0  1.0\n"),
               OsuErrorKind::malformed_line, 3);
}

TEST(OsuParser, SecondHeaderOrColumnHeaderIsMalformed) {
  expect_error(parse_osu_output(std::string(kBcastHead) + "1   3.00\n" + kBcastHead + "1  3.0\n"),
               OsuErrorKind::malformed_line, 6);
  expect_error(parse_osu_output(std::string(kBcastHead) + "# Size  Avg Latency(us)\n1 3.00\n"),
               OsuErrorKind::malformed_line, 4);
}

TEST(OsuParser, FailInValidationColumn) {
  auto result = parse_osu_output(fixture("omb7_bcast_validation_fail.out"));
  expect_error(result, OsuErrorKind::validation_failed, 9);
  EXPECT_TRUE(result.output.validation);
  ASSERT_EQ(result.output.rows.size(), 5u);  // the failing size's timing is kept, flagged
  EXPECT_TRUE(result.output.rows[3].validation_passed.value());
  EXPECT_FALSE(result.output.rows[4].validation_passed.value());
  EXPECT_EQ(result.output.rows[4].size, 16);
}

TEST(OsuParser, BadValidationToken) {
  expect_error(parse_osu_output("\n# OSU MPI Bcast Latency Test v7.1\n"
                                "# Size       Avg Latency(us)          Validation\n"
                                "1                       1.50               Maybe\n"),
               OsuErrorKind::malformed_line, 4);
}

TEST(OsuParser, DataValidationErrorLine) {
  auto result = parse_osu_output(
      std::string(kBcastHead) + "1   3.00\n2   3.10\n" +
      "DATA VALIDATION ERROR: osu_bcast exited with status 1 on message size 4.\n");
  expect_error(result, OsuErrorKind::validation_failed, 6);
  EXPECT_EQ(result.output.rows.size(), 2u);
}

TEST(OsuParser, RealAbortBannerOnStderrWithPartialTable) {
  auto result =
      parse_osu_output(fixture("bcast_mpi_err_arg.out"), fixture("bcast_mpi_err_arg.err"));
  ASSERT_NO_FATAL_FAILURE(expect_error(result, OsuErrorKind::mpi_error, 0));
  EXPECT_NE(result.error->message.find("An error occurred in MPI_Bcast"), std::string::npos);
  ASSERT_EQ(result.output.rows.size(), 6u);  // 1..32 printed before the abort
  EXPECT_EQ(result.output.rows.back().size, 32);
}

TEST(OsuParser, RealSegfaultOnStderr) {
  auto result = parse_osu_output(fixture("bcast_segv.out"), fixture("bcast_segv.err"));
  expect_error(result, OsuErrorKind::mpi_error, 0);
  EXPECT_EQ(result.output.rows.size(), 6u);
}

TEST(OsuParser, RealSegfaultMergedIntoStdout) {
  auto result = parse_osu_output(fixture("bcast_segv_combined.out"));
  expect_error(result, OsuErrorKind::mpi_error, 10);  // 9 stdout lines, then the banner
  EXPECT_EQ(result.output.rows.size(), 6u);
}

TEST(OsuParser, AbortBannerWinsOverCutLine) {
  // The job was killed mid-print: the cut line is a symptom, the banner is the cause.
  auto result = parse_osu_output(std::string(kBcastHead) + "1   3.00\n2     ",
                                 "--------------------------------------------------------\n"
                                 "MPI_ABORT was invoked on rank 1 in communicator "
                                 "MPI_COMM_WORLD\nwith errorcode 1.\n");
  expect_error(result, OsuErrorKind::mpi_error, 0);
  EXPECT_EQ(result.output.rows.size(), 1u);
  // Merged, a banner after a malformed line also wins, at its own line.
  auto merged = parse_osu_output(std::string(kBcastHead) +
                                 "1   3.00\n2  3.10  garbage\n"
                                 "mpirun noticed that process rank 0 with PID 0 on node vm "
                                 "exited on signal 9 (Killed).\n");
  expect_error(merged, OsuErrorKind::mpi_error, 6);
  EXPECT_EQ(merged.output.rows.size(), 1u);
}

TEST(OsuParser, OsuMpiCheckFailure) {
  expect_error(parse_osu_output(std::string(kBcastHead) + "1   3.00\n",
                                "[osu_bcast.c:120] MPI call failed with 13 \n"),
               OsuErrorKind::mpi_error, 0);
}

TEST(OsuParser, HelpTextOnBadOption) {
  auto result = parse_osu_output(fixture("help_bad_option.out"), fixture("help_bad_option.err"));
  ASSERT_NO_FATAL_FAILURE(expect_error(result, OsuErrorKind::benchmark_error, 1));
  EXPECT_NE(result.error->message.find("Invalid Option [-q]"), std::string::npos)
      << result.error->message;
  // Stderr alone (stdout lost) still names the problem.
  expect_error(parse_osu_output("", "Invalid Message Size [-m foo]\n\n"),
               OsuErrorKind::benchmark_error, 0);
  expect_error(parse_osu_output("", "Option Missing Required Argument [-m]\n\n"),
               OsuErrorKind::benchmark_error, 0);
}

TEST(OsuParser, OsuErrorsOnStderr) {
  expect_error(parse_osu_output("", "This test requires at least two processes\n"),
               OsuErrorKind::benchmark_error, 0);
  // Allocation failure is followed by MPI_Abort's banner; the first message is the cause.
  expect_error(parse_osu_output(kBcastHead,
                                "Could Not Allocate Memory [rank 0]\n"
                                "MPI_ABORT was invoked on rank 0 in communicator "
                                "MPI_COMM_WORLD\n"),
               OsuErrorKind::benchmark_error, 0);
  expect_error(parse_osu_output(std::string(kBcastHead) + "1   3.00\n",
                                "[osu_util_mpi.c:512] Error: 'Unable to allocate buffer'\n"),
               OsuErrorKind::benchmark_error, 0);
}

TEST(OsuParser, HarmlessStderrDoesNotFailACleanRun) {
  auto result = parse_osu_output(std::string(kBcastHead) + "1   3.00\n",
                                 "Requested memory limit too low, using [1048576] instead.");
  EXPECT_TRUE(result.ok()) << result.error->message;
}

TEST(OsuParser, ErrorKindNames) {
  EXPECT_EQ(to_string(OsuErrorKind::empty), "empty");
  EXPECT_EQ(to_string(OsuErrorKind::no_header), "no_header");
  EXPECT_EQ(to_string(OsuErrorKind::malformed_line), "malformed_line");
  EXPECT_EQ(to_string(OsuErrorKind::truncated), "truncated");
  EXPECT_EQ(to_string(OsuErrorKind::validation_failed), "validation_failed");
  EXPECT_EQ(to_string(OsuErrorKind::mpi_error), "mpi_error");
  EXPECT_EQ(to_string(OsuErrorKind::benchmark_error), "benchmark_error");
}

}  // namespace
}  // namespace colltune
