// Runs the built colltune-osu-bench under real mpirun (Open MPI, oversubscribed on this box) and
// checks its output against OMB 5.6.2's format, its error paths, its data movement (-c), and that
// colltune's OSU parser reads it.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "child_process.h"
#include "osu/bench/bench_options.h"
#include "osu/osu_command.h"
#include "osu/osu_output.h"

#ifndef COLLTUNE_OSU_BENCH_TEST_DIR
#error "COLLTUNE_OSU_BENCH_TEST_DIR must name the folder holding colltune-osu-bench"
#endif
#ifndef COLLTUNE_TEST_MPIEXEC
#error "COLLTUNE_TEST_MPIEXEC must name mpirun"
#endif

namespace colltune::osu_bench {
namespace {

constexpr double kTimeoutS = 120;

testing::ChildResult mpirun(int ranks, const std::string& program,
                            const std::vector<std::string>& args) {
  std::vector<std::string> argv{COLLTUNE_TEST_MPIEXEC,
                                "-np",
                                std::to_string(ranks),
                                "--oversubscribe",
                                "--mca",
                                "coll",
                                "^hcoll",
                                std::string(COLLTUNE_OSU_BENCH_TEST_DIR) + "/" + program};
  argv.insert(argv.end(), args.begin(), args.end());
  // Running as root (this machine) needs Open MPI's explicit consent; harmless otherwise.
  return testing::run_child(
      argv, {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}}, kTimeoutS);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct Row {
  long long size = 0;
  double avg = 0, min = 0, max = 0;
  long long iterations = 0;
};

// Checks one data line's layout column by column, OMB 5.6.2's: size left-aligned in 10, then
// right-aligned 18-wide fields (barrier: avg in 17), iterations right-aligned in 12.
Row check_data_line(const std::string& line, bool has_size, bool full) {
  Row row;
  std::size_t at = 0;
  if (has_size) {
    EXPECT_TRUE(std::regex_match(line.substr(0, 10), std::regex(R"(\d+ *)"))) << line;
    row.size = std::stoll(line.substr(0, 10));
    at = 10;
  }
  const std::size_t avg_width = has_size ? 18 : 17;
  const std::regex number(R"( *\d+\.\d\d)");
  EXPECT_TRUE(std::regex_match(line.substr(at, avg_width), number)) << line;
  row.avg = std::stod(line.substr(at, avg_width));
  at += avg_width;
  if (full) {
    EXPECT_TRUE(std::regex_match(line.substr(at, 18), number)) << line;
    row.min = std::stod(line.substr(at, 18));
    EXPECT_TRUE(std::regex_match(line.substr(at + 18, 18), number)) << line;
    row.max = std::stod(line.substr(at + 18, 18));
    EXPECT_TRUE(std::regex_match(line.substr(at + 36, 12), std::regex(R"( *\d+)"))) << line;
    row.iterations = std::stoll(line.substr(at + 36, 12));
    at += 48;
  }
  EXPECT_EQ(line.size(), at) << "trailing characters in: " << line;
  return row;
}

const char* kFullHeader =
    "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations";

// Runs osu_<collective> -f and checks everything about its stdout; returns the rows.
std::vector<Row> run_full(const std::string& collective, const std::string& title, int ranks,
                          const std::vector<std::string>& args, int iterations,
                          const std::vector<long long>& expected_sizes) {
  std::vector<std::string> all_args = args;
  all_args.insert(all_args.end(), {"-f", "-i", std::to_string(iterations), "-x", "2"});
  const auto result = mpirun(ranks, "osu_" + collective, all_args);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  EXPECT_EQ(lines.size(), 3 + expected_sizes.size()) << result.out;
  if (lines.size() != 3 + expected_sizes.size()) return {};
  EXPECT_EQ(lines[0], "");
  EXPECT_EQ(lines[1], "# OSU MPI " + title + " Latency Test v5.6.2-colltune");
  EXPECT_EQ(lines[2], kFullHeader);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < expected_sizes.size(); ++i) {
    const Row row = check_data_line(lines[3 + i], /*has_size=*/true, /*full=*/true);
    EXPECT_EQ(row.size, expected_sizes[i]);
    EXPECT_EQ(row.iterations, iterations);
    EXPECT_GT(row.avg, 0.0);
    EXPECT_LE(row.min, row.avg + 0.01);  // Avg is the mean of per-rank values in [Min, Max]
    EXPECT_LE(row.avg, row.max + 0.01);
    rows.push_back(row);
  }
  // colltune's own parser must read it as OSU output with the same rows.
  const OsuParseResult parsed = parse_osu_output(result.out, result.err);
  EXPECT_TRUE(parsed.ok()) << (parsed.error ? parsed.error->message : "") << "\n" << result.out;
  EXPECT_EQ(parsed.output.benchmark, "OSU MPI " + title + " Latency Test");
  EXPECT_TRUE(parsed.output.full);
  EXPECT_EQ(parsed.output.rows.size(), expected_sizes.size());
  for (std::size_t i = 0; i < parsed.output.rows.size() && i < rows.size(); ++i) {
    EXPECT_EQ(parsed.output.rows[i].size, rows[i].size);
    EXPECT_EQ(parsed.output.rows[i].iterations, iterations);
  }
  return rows;
}

std::vector<long long> doubling(long long from, long long to) {
  std::vector<long long> out;
  for (long long s = from; s <= to; s *= 2) out.push_back(s);
  return out;
}

TEST(BenchInstall, RunnerSeesAnOmb5InstallWithEveryCollective) {
  // The runner locates osu_<collective> in the folder and reads the OMB major version from the
  // binary's header literal: ours must read as 5 (so no 7.x-only "-T" is passed).
  for (const Collective c : supported_collectives()) {
    const auto binary = find_osu_binary(COLLTUNE_OSU_BENCH_TEST_DIR, c);
    ASSERT_TRUE(binary.has_value()) << name(c);
    EXPECT_EQ(binary->filename(), "osu_" + std::string(name(c)));
    EXPECT_EQ(detect_omb_major_version(*binary), 5) << *binary;
  }
}

TEST(BenchMpirun, BcastFullFormat) {
  run_full("bcast", "Broadcast", 4, {"-m", "1:1024"}, 20, doubling(1, 1024));
}

TEST(BenchMpirun, AllreduceStartsAtFourBytes) {
  run_full("allreduce", "Allreduce", 4, {"-m", "1:4096"}, 15, doubling(4, 4096));
}

TEST(BenchMpirun, ReduceFullFormat) {
  run_full("reduce", "Reduce", 4, {"-m", "16:65536"}, 7, doubling(16, 65536));
}

TEST(BenchMpirun, GatherDefaultFormat) {
  const auto result = mpirun(4, "osu_gather", {"-m", "2:256", "-i", "10", "-x", "1"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 3u + 8u) << result.out;
  EXPECT_EQ(lines[1], "# OSU MPI Gather Latency Test v5.6.2-colltune");
  EXPECT_EQ(lines[2], "# Size       Avg Latency(us)");
  for (std::size_t i = 3; i < lines.size(); ++i)
    EXPECT_EQ(check_data_line(lines[i], true, false).size, 2LL << (i - 3));
  const auto parsed = parse_osu_output(result.out, result.err);
  EXPECT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed.output.full);
  EXPECT_EQ(parsed.output.rows.size(), 8u);
}

TEST(BenchMpirun, BarrierFormat) {
  const auto result = mpirun(4, "osu_barrier", {"-f", "-i", "50", "-x", "5"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 4u) << result.out;
  EXPECT_EQ(lines[0], "");
  EXPECT_EQ(lines[1], "# OSU MPI Barrier Latency Test v5.6.2-colltune");
  EXPECT_EQ(lines[2], "# Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations");
  EXPECT_EQ(check_data_line(lines[3], /*has_size=*/false, /*full=*/true).iterations, 50);
  const auto parsed = parse_osu_output(result.out, result.err);
  EXPECT_TRUE(parsed.ok());
  ASSERT_EQ(parsed.output.rows.size(), 1u);
  EXPECT_EQ(parsed.output.rows[0].size, 0);
}

TEST(BenchMpirun, MainBinaryTakesTheCollectiveAsFirstArgument) {
  const auto result = mpirun(2, "colltune-osu-bench", {"scatter", "-m", "4:8", "-i", "5"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 5u) << result.out;
  EXPECT_EQ(lines[1], "# OSU MPI Scatter Latency Test v5.6.2-colltune");
}

TEST(BenchMpirun, BadOptionPrintsOmbMessageOnceAndFails) {
  auto result = mpirun(2, "osu_bcast", {"-q"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_EQ(result.err.find("Invalid Option [-q]\n\n"), 0u) << result.err;  // rank 0 only
  EXPECT_EQ(result.err.find("Invalid Option", 1), std::string::npos) << result.err;
  EXPECT_EQ(result.out.rfind("Usage: osu_bcast [options]\n", 0), 0u) << result.out;

  result = mpirun(2, "osu_allreduce", {"-m", "foo"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("Invalid Message Size [-m foo]\n\n"), std::string::npos);
  EXPECT_EQ(result.out.find("# Size"), std::string::npos);  // no benchmark output
}

TEST(BenchMpirun, OneProcessIsRefused) {
  const auto result = mpirun(1, "osu_bcast", {"-m", "4:8"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("This test requires at least two processes\n"), std::string::npos)
      << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_FALSE(parse_osu_output(result.out, result.err).ok());
}

TEST(BenchMpirun, HelpAndVersionSucceed) {
  auto result = mpirun(2, "osu_alltoall", {"-h"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out.rfind("Usage: osu_alltoall [options]\n", 0), 0u) << result.out;
  result = mpirun(2, "osu_alltoall", {"-v"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out,
            "# OSU MPI All-to-All Personalized Exchange Latency Test v5.6.2-colltune\n");
}

TEST(BenchMpirun, MemoryLimitReducesMaxSizeWithWarning) {
  // gather holds size*P at the root: 1 MiB / 4 ranks caps the sweep at 256 KiB.
  const auto result =
      mpirun(4, "osu_gather", {"-m", "65536:1048576", "-M", "1048576", "-i", "2", "-x", "0"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("Warning! Increase the Max Memory Limit to be able to run up to "
                            "1048576 bytes.\nContinuing with max message size of 262144 bytes\n"),
            std::string::npos)
      << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 3u + 3u) << result.out;
  EXPECT_EQ(check_data_line(lines.back(), true, false).size, 262144);
}

TEST(BenchMpirun, EachSizeLineIsFlushedAsSoonAsItIsMeasured) {
  // A run killed mid-sweep (timeout, crash) must keep the sizes it finished. mpirun gives ranks
  // a pty (line-buffered stdout), but srun and batch jobs give a pipe or file (fully buffered),
  // so each rank's stdout is piped through cat here: without a flush per line nothing would
  // arrive before exit. The shell script is fixed; the program and its arguments are "$@".
  std::vector<std::string> argv{COLLTUNE_TEST_MPIEXEC,
                                "-np",
                                "2",
                                "--oversubscribe",
                                "--mca",
                                "coll",
                                "^hcoll",
                                "/bin/sh",
                                "-c",
                                "exec \"$@\" | cat",
                                "sh",
                                std::string(COLLTUNE_OSU_BENCH_TEST_DIR) + "/osu_bcast",
                                "-m",
                                "1:1048576",
                                "-i",
                                "100000",
                                "-x",
                                "0"};
  // 100000 calls: the first size (1 byte) ends within the 6 s even at 50 us a call (a loaded
  // 2-core machine: 1000000 calls in 4 s failed there), and the whole sweep, whose sizes from
  // 64 KiB up take tens of microseconds a call, is still running at the timeout.
  const auto result = testing::run_child(
      argv, {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}}, 6.0);
  EXPECT_TRUE(result.timed_out) << "the sweep should still be running: " << result.out;
  const auto lines = lines_of(result.out);
  ASSERT_GE(lines.size(), 4u) << result.out;  // preamble and at least one size
  EXPECT_LT(lines.size(), 3u + 21u);
  EXPECT_EQ(check_data_line(lines[3], true, false).size, 1);
  EXPECT_GE(parse_osu_output(result.out, result.err).output.rows.size(), 1u);
}

// -c: one extra call per size with rank-dependent data, checked on every rank.
struct ValidationCase {
  std::string collective;
  int ranks;
  std::vector<std::string> extra;
};

void PrintTo(const ValidationCase& c, std::ostream* out) {
  *out << c.collective << " np=" << c.ranks;
  for (const auto& word : c.extra) *out << ' ' << word;
}

class BenchValidation : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(BenchValidation, EverySizePasses) {
  const ValidationCase& c = GetParam();
  std::vector<std::string> args{"-c", "-m", "1:4096", "-i", "2", "-x", "1"};
  args.insert(args.end(), c.extra.begin(), c.extra.end());
  const auto result = mpirun(c.ranks, "osu_" + c.collective, args);
  ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
  const auto lines = lines_of(result.out);
  ASSERT_GE(lines.size(), 3u + 11u) << result.out;
  int headers = 0;
  for (const auto& line : lines)
    if (line.rfind("# Size", 0) == 0 && line.find("Validation") != std::string::npos) ++headers;
  EXPECT_EQ(headers, 1) << result.out;
  int passes = 0;
  for (const auto& line : lines) {
    EXPECT_EQ(line.find("Fail"), std::string::npos) << line;
    if (line.size() > 4 && line.compare(line.size() - 4, 4, "Pass") == 0) ++passes;
  }
  EXPECT_GE(passes, 11);  // 1..4096 B: 13 sizes; 4..4096 B (floats, ints): 11
  const auto parsed = parse_osu_output(result.out, result.err);
  EXPECT_TRUE(parsed.ok()) << (parsed.error ? parsed.error->message : "");
  EXPECT_TRUE(parsed.output.validation);
}

std::vector<ValidationCase> validation_cases() {
  std::vector<ValidationCase> cases;
  for (const char* collective : {"bcast", "allreduce", "reduce", "gather", "scatter", "allgather",
                                 "alltoall", "reduce_scatter"})
    for (const int ranks : {2, 4, 6}) cases.push_back({collective, ranks, {}});
  // OMB 7.x element types, with a rank count that leaves a reduce_scatter remainder.
  cases.push_back({"allreduce", 3, {"-T", "mpi_int"}});
  cases.push_back({"reduce_scatter", 3, {"-T", "mpi_char"}});
  cases.push_back({"bcast", 3, {"-T", "mpi_float"}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Collectives, BenchValidation, ::testing::ValuesIn(validation_cases()),
                         [](const ::testing::TestParamInfo<ValidationCase>& param_info) {
                           const ValidationCase& c = param_info.param;
                           std::string label = c.collective + "_np" + std::to_string(c.ranks);
                           for (const auto& word : c.extra)
                             if (word[0] != '-') label += "_" + word;
                           return label;
                         });

}  // namespace
}  // namespace colltune::osu_bench
