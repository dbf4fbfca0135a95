// Command-line parsing, size series and memory cap of colltune-osu-bench (no MPI needed).
#include "osu/bench/bench_options.h"

#include <gtest/gtest.h>

#include "osu/bench/bench_report.h"

namespace colltune::osu_bench {
namespace {

ParsedCommand parse(std::vector<std::string> argv) { return parse_command_line(argv); }

std::string bad_text(const ParsedCommand& command) {
  EXPECT_EQ(command.kind, CommandKind::bad_usage);
  return bad_usage_text(command.bad_usage);
}

TEST(BenchOptions, CollectiveComesFromProgramNameThroughLinks) {
  const auto command = parse({"/opt/omb/osu_allgather", "-m", "4:1024"});
  ASSERT_EQ(command.kind, CommandKind::run);
  EXPECT_EQ(command.options.collective, Collective::allgather);
  EXPECT_EQ(command.options.benchmark_name, "osu_allgather");
  EXPECT_EQ(command.options.min_size, 4);
  EXPECT_EQ(command.options.max_size, 1024);
}

TEST(BenchOptions, CollectiveComesFromFirstArgumentOfTheMainBinary) {
  const auto command = parse({"./colltune-osu-bench", "reduce_scatter", "-i", "5", "-f"});
  ASSERT_EQ(command.kind, CommandKind::run);
  EXPECT_EQ(command.options.collective, Collective::reduce_scatter);
  EXPECT_EQ(command.options.benchmark_name, "osu_reduce_scatter");
  EXPECT_EQ(command.options.iterations_small, 5);
  EXPECT_EQ(command.options.iterations_large, 5);
  EXPECT_TRUE(command.options.full);
}

TEST(BenchOptions, DefaultsAreOmbs) {
  const auto command = parse({"osu_bcast"});
  ASSERT_EQ(command.kind, CommandKind::run);
  const BenchOptions& o = command.options;
  EXPECT_EQ(o.min_size, 1);
  EXPECT_EQ(o.max_size, 1 << 20);
  EXPECT_EQ(o.iterations_small, 1000);
  EXPECT_EQ(o.iterations_large, 100);
  EXPECT_EQ(o.warmup_small, 100);
  EXPECT_EQ(o.warmup_large, 10);
  EXPECT_EQ(o.mem_limit, 512 * 1024 * 1024);
  EXPECT_FALSE(o.full);
  EXPECT_FALSE(o.type.has_value());
  EXPECT_FALSE(o.validate);
}

TEST(BenchOptions, MessageSizeForms) {
  auto o = parse({"osu_bcast", "-m", "128"}).options;
  EXPECT_EQ(o.min_size, 1);
  EXPECT_EQ(o.max_size, 128);
  o = parse({"osu_bcast", "-m", "2:128"}).options;
  EXPECT_EQ(o.min_size, 2);
  EXPECT_EQ(o.max_size, 128);
  o = parse({"osu_bcast", "-m", "2:"}).options;
  EXPECT_EQ(o.min_size, 2);
  EXPECT_EQ(o.max_size, 1 << 20);
  o = parse({"osu_bcast", "-m", ":64"}).options;
  EXPECT_EQ(o.min_size, 1);
  EXPECT_EQ(o.max_size, 64);
}

TEST(BenchOptions, ClusteredAttachedAndLongOptions) {
  auto o = parse({"osu_bcast", "-fm4:8", "-i3", "-x", "0"}).options;
  EXPECT_TRUE(o.full);
  EXPECT_EQ(o.min_size, 4);
  EXPECT_EQ(o.max_size, 8);
  EXPECT_EQ(o.iterations_small, 3);
  EXPECT_EQ(o.warmup_small, 0);
  EXPECT_EQ(o.warmup_large, 0);
  o = parse({"osu_bcast", "--iterations=7", "--message-size", "16:32", "--full", "--warmup=2"})
          .options;
  EXPECT_EQ(o.iterations_large, 7);
  EXPECT_EQ(o.min_size, 16);
  EXPECT_EQ(o.max_size, 32);
  EXPECT_TRUE(o.full);
  EXPECT_EQ(o.warmup_small, 2);
}

TEST(BenchOptions, ParsingStopsAtFirstNonOptionLikeOmb) {
  const auto command = parse({"osu_bcast", "-i", "4", "extra", "-q"});
  ASSERT_EQ(command.kind, CommandKind::run);
  EXPECT_EQ(command.options.iterations_small, 4);
  EXPECT_EQ(parse({"osu_bcast", "--", "-q"}).kind, CommandKind::run);
}

TEST(BenchOptions, RequiredArgumentTakesTheNextWordEvenIfItLooksLikeAnOption) {
  // getopt does this too: "-m -i" reads "-i" as the size, which is invalid.
  EXPECT_EQ(bad_text(parse({"osu_bcast", "-m", "-i", "5"})), "Invalid Message Size [-m -i]\n\n");
}

TEST(BenchOptions, BadUsageMessagesAreOmbs) {
  EXPECT_EQ(bad_text(parse({"osu_bcast", "-m", "foo"})), "Invalid Message Size [-m foo]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_bcast", "-q"})), "Invalid Option [-q]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_bcast", "-f", "-m"})),
            "Option Missing Required Argument [-m]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_bcast", "-i", "0"})), "Invalid Number of Iterations [-i 0]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_bcast", "-i", "10x"})),
            "Invalid Number of Iterations [-i 10x]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_bcast", "-x", "-1"})),
            "Invalid Number of Warmup Iterations [-x -1]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_bcast", "--bogus"})), "Invalid Option [--bogus]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_bcast", "--iterations"})),
            "Option Missing Required Argument [--iterations]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_bcast", "-T", "mpi_double"})),
            "Invalid Data Type [-T mpi_double]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_bcast", "-M", "lots"})), "Invalid Memory Limit [-M lots]\n\n");
}

TEST(BenchOptions, MalformedSizesAreRejected) {
  for (const std::string size : {"8:4", "0:", "1:2:3", ":", "", "-4", "4096x", "3000000000"})
    EXPECT_EQ(parse({"osu_bcast", "-m", size}).kind, CommandKind::bad_usage) << size;
}

TEST(BenchOptions, FirstOfHelpVersionOrErrorWins) {
  EXPECT_EQ(parse({"osu_bcast", "-h", "-q"}).kind, CommandKind::help);
  EXPECT_EQ(parse({"osu_bcast", "--version"}).kind, CommandKind::version);
  EXPECT_EQ(parse({"osu_bcast", "-q", "-h"}).kind, CommandKind::bad_usage);
}

TEST(BenchOptions, BarrierHasNoTypeOrValidationOption) {
  EXPECT_EQ(bad_text(parse({"osu_barrier", "-T", "mpi_int"})), "Invalid Option [-T]\n\n");
  EXPECT_EQ(bad_text(parse({"osu_barrier", "-c"})), "Invalid Option [-c]\n\n");
  EXPECT_EQ(parse({"osu_barrier", "-f", "-i", "10"}).kind, CommandKind::run);
}

TEST(BenchOptions, TypeAndValidation) {
  const auto o = parse({"osu_allreduce", "-T", "MPI_INT", "-c"}).options;
  ASSERT_TRUE(o.type.has_value());
  EXPECT_EQ(*o.type, ElementType::mpi_int);
  EXPECT_TRUE(o.validate);
  EXPECT_EQ(effective_type(o), ElementType::mpi_int);
  EXPECT_EQ(effective_type(parse({"osu_allreduce"}).options), ElementType::mpi_float);
  EXPECT_EQ(effective_type(parse({"osu_reduce_scatter"}).options), ElementType::mpi_float);
  EXPECT_EQ(effective_type(parse({"osu_alltoall"}).options), ElementType::mpi_char);
}

TEST(BenchOptions, LowMemoryLimitIsRaisedToOneMebibyte) {
  const auto o = parse({"osu_bcast", "-M", "1000"}).options;
  EXPECT_EQ(o.mem_limit, 1 << 20);
  EXPECT_TRUE(o.mem_limit_raised);
  EXPECT_FALSE(parse({"osu_bcast", "-M", "4194304"}).options.mem_limit_raised);
}

TEST(BenchOptions, ProgramLevelErrors) {
  EXPECT_EQ(parse({"colltune-osu-bench"}).kind, CommandKind::program_error);
  EXPECT_EQ(parse({"colltune-osu-bench", "--help"}).kind, CommandKind::program_help);
  const auto unsupported = parse({"colltune-osu-bench", "alltoallv"});
  EXPECT_EQ(unsupported.kind, CommandKind::program_error);
  EXPECT_NE(unsupported.error.find("alltoallv"), std::string::npos);
  EXPECT_EQ(parse({"osu_latency"}).kind, CommandKind::program_error);
  EXPECT_NE(program_usage().find("reduce_scatter"), std::string::npos);
}

std::vector<std::int64_t> bytes_of(const std::vector<SizeStep>& steps) {
  std::vector<std::int64_t> out;
  for (const auto& step : steps) out.push_back(step.bytes);
  return out;
}

TEST(MessageSizes, DefaultSweepIsOneByteToOneMebibyte) {
  const auto o = parse({"osu_bcast"}).options;
  const auto steps = message_sizes(o, o.max_size);
  ASSERT_EQ(steps.size(), 21u);
  EXPECT_EQ(steps.front().bytes, 1);
  EXPECT_EQ(steps.back().bytes, 1 << 20);
  for (const auto& step : steps) {
    EXPECT_EQ(step.count, step.bytes);
    EXPECT_EQ(step.large, step.bytes > 8192) << step.bytes;
  }
}

TEST(MessageSizes, NonPowerOfTwoMinimumDoubles) {
  const auto o = parse({"osu_gather", "-m", "3:20"}).options;
  EXPECT_EQ(bytes_of(message_sizes(o, o.max_size)), (std::vector<std::int64_t>{3, 6, 12}));
}

TEST(MessageSizes, ReductionsUseFloatsFromFourBytesLikeOmb5) {
  auto o = parse({"osu_allreduce"}).options;
  auto steps = message_sizes(o, o.max_size);
  ASSERT_EQ(steps.size(), 19u);
  EXPECT_EQ(steps.front().bytes, 4);
  EXPECT_EQ(steps.front().count, 1);
  EXPECT_EQ(steps.back().bytes, 1 << 20);
  EXPECT_EQ(steps.back().count, 1 << 18);
  // OMB 5.x compares the float count with 8192: 16 KiB and 32 KiB are still "small".
  for (const auto& step : steps) EXPECT_EQ(step.large, step.bytes > 32768) << step.bytes;

  o = parse({"osu_reduce", "-m", "6:64"}).options;
  EXPECT_EQ(bytes_of(message_sizes(o, o.max_size)), (std::vector<std::int64_t>{4, 8, 16, 32, 64}));
  o = parse({"osu_reduce", "-m", "2"}).options;
  EXPECT_TRUE(message_sizes(o, o.max_size).empty());
}

TEST(MessageSizes, ExplicitTypeSkipsSizesBelowTheElementSize) {
  auto o = parse({"osu_bcast", "-T", "mpi_float", "-m", "1:16"}).options;
  auto steps = message_sizes(o, o.max_size);
  EXPECT_EQ(bytes_of(steps), (std::vector<std::int64_t>{4, 8, 16}));
  EXPECT_EQ(steps.front().count, 1);
  o = parse({"osu_allreduce", "-T", "mpi_int", "-m", "8192:16384"}).options;
  steps = message_sizes(o, o.max_size);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_FALSE(steps[0].large);
  EXPECT_TRUE(steps[1].large);  // with -T the byte size decides, as OMB 7.x
}

TEST(MessageSizes, BarrierHasNone) {
  const auto o = parse({"osu_barrier"}).options;
  EXPECT_TRUE(message_sizes(o, o.max_size).empty());
}

TEST(ReduceScatterCounts, SplitLikeOmb5) {
  EXPECT_EQ(reduce_scatter_counts(10, 4), (std::vector<int>{3, 3, 2, 2}));
  EXPECT_EQ(reduce_scatter_counts(12, 4), (std::vector<int>{3, 3, 3, 3}));
  EXPECT_EQ(reduce_scatter_counts(2, 4), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(reduce_scatter_counts(1, 1), (std::vector<int>{1}));
}

TEST(MemoryLimit, RootedAndSymmetricCollectivesAreCappedLikeOmb5) {
  auto o = parse({"osu_bcast", "-m", "2097152", "-M", "1048576"}).options;
  auto cap = apply_memory_limit(o, 4);
  EXPECT_EQ(cap.max_size, 1048576);
  ASSERT_TRUE(cap.warning.has_value());
  EXPECT_EQ(*cap.warning,
            "Warning! Increase the Max Memory Limit to be able to run up to 2097152 bytes.\n"
            "Continuing with max message size of 1048576 bytes\n");

  o = parse({"osu_gather", "-M", "1048576"}).options;  // size*P bytes at the root
  cap = apply_memory_limit(o, 4);
  EXPECT_EQ(cap.max_size, 262144);
  EXPECT_TRUE(cap.warning.has_value());

  o = parse({"osu_bcast", "-M", "1048576"}).options;  // exactly at the limit: no change
  cap = apply_memory_limit(o, 4);
  EXPECT_EQ(cap.max_size, 1048576);
  EXPECT_FALSE(cap.warning.has_value());
}

}  // namespace
}  // namespace colltune::osu_bench
