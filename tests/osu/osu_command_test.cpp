#include "osu/osu_command.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/collective.h"
#include "tests/support/temp_dir.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

using colltune::testing::TempDir;

void write_file(const fs::path& path, const std::string& bytes, bool executable) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  fs::permissions(path, executable
                            ? fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read
                            : fs::perms::owner_read | fs::perms::owner_write);
}

// Bytes resembling an ELF file around OMB's HEADER literal.
std::string fake_binary(const std::string& literal) {
  std::string bytes(
      "\x7f"
      "ELF\x02\x01\x01",
      7);
  bytes.append(200, '\0');
  bytes += "Usage: %s [options]\n";
  bytes.push_back('\0');
  bytes += literal;
  bytes.push_back('\0');
  bytes.append(100, '\x90');
  return bytes;
}

// ---------------------------------------------------------------- titles

TEST(OsuTitle, MatchesOmbBenchmarkStrings) {
  EXPECT_EQ(osu_benchmark_title(Collective::bcast), "OSU MPI Broadcast Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::allreduce), "OSU MPI Allreduce Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::reduce), "OSU MPI Reduce Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::gather), "OSU MPI Gather Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::scatter), "OSU MPI Scatter Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::allgather), "OSU MPI Allgather Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::alltoall),
            "OSU MPI All-to-All Personalized Exchange Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::barrier), "OSU MPI Barrier Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::reduce_scatter), "OSU MPI Reduce_scatter Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::allgatherv), "OSU MPI Allgatherv Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::alltoallv),
            "OSU MPI All-to-Allv Personalized Exchange Latency Test");
  EXPECT_EQ(osu_benchmark_title(Collective::reduce_scatter_block),
            "OSU MPI Reduce_scatter_block Latency Test");
}

TEST(OsuTitle, RoundTripsForEveryCollective) {
  for (Collective c : all_collectives()) {
    ASSERT_FALSE(osu_benchmark_title(c).empty()) << name(c);
    EXPECT_EQ(collective_from_osu_title(osu_benchmark_title(c)), c) << name(c);
  }
}

TEST(OsuTitle, AcceleratorVariantsAndRejects) {
  EXPECT_EQ(collective_from_osu_title("OSU MPI-CUDA Broadcast Latency Test"), Collective::bcast);
  EXPECT_EQ(collective_from_osu_title("OSU MPI-ROCM Allreduce Latency Test"),
            Collective::allreduce);
  EXPECT_EQ(collective_from_osu_title("OSU MPI-OPENACC Gather Latency Test"), Collective::gather);
  EXPECT_FALSE(collective_from_osu_title("OSU MPI Non-blocking Broadcast Latency Test"));
  EXPECT_FALSE(collective_from_osu_title("OSU MPI Broadcast Latency Test v5.6.2"));
  EXPECT_FALSE(collective_from_osu_title("OSU MPI-FOO Broadcast Latency Test"));
  EXPECT_FALSE(collective_from_osu_title("OSU MPI Bandwidth Test"));
  EXPECT_FALSE(collective_from_osu_title(""));
}

// ---------------------------------------------------------------- version detection

TEST(OmbVersion, ReadsMajorFromHeaderLiteral) {
  TempDir dir;
  const fs::path bin = dir.path() / "osu_bcast";
  write_file(bin, fake_binary("# OSU MPI%s Broadcast Latency Test v7.1\n"), true);
  EXPECT_EQ(detect_omb_major_version(bin), 7);
  write_file(bin, fake_binary("# OSU MPI%s Broadcast Latency Test v5.6.2-colltune\n"), true);
  EXPECT_EQ(detect_omb_major_version(bin), 5);
  write_file(bin, fake_binary("# OSU MPI%s Allreduce Latency Test v10.0\n"), true);
  EXPECT_EQ(detect_omb_major_version(bin), 10);
}

TEST(OmbVersion, SkipsMarkerWithoutDigits) {
  TempDir dir;
  const fs::path bin = dir.path() / "osu_bcast";
  write_file(bin, fake_binary("Latency Test vX") + fake_binary("Latency Test v6.1"), true);
  EXPECT_EQ(detect_omb_major_version(bin), 6);
}

TEST(OmbVersion, NoMarkerOrNoFile) {
  TempDir dir;
  const fs::path bin = dir.path() / "osu_bcast";
  write_file(bin, fake_binary("# OSU MPI%s Bandwidth Test v7.1\n"), true);
  EXPECT_FALSE(detect_omb_major_version(bin));
  write_file(bin, "", true);
  EXPECT_FALSE(detect_omb_major_version(bin));
  EXPECT_FALSE(detect_omb_major_version(dir.path() / "missing"));
}

TEST(OmbVersion, MarkerAcrossReadChunks) {
  // The file is read in 1 MiB chunks: put the marker, and then the digits, on the boundary.
  constexpr std::size_t kChunk = 1 << 20;
  TempDir dir;
  const fs::path bin = dir.path() / "osu_bcast";
  for (std::size_t split : {std::size_t{5}, std::size_t{14}, std::size_t{15}}) {
    const std::string literal = "Latency Test v12.3";  // split inside marker, at "v|12", "1|2"
    std::string bytes(kChunk - split, 'a');
    bytes += literal + "\n";
    bytes.append(1000, 'b');
    write_file(bin, bytes, true);
    EXPECT_EQ(detect_omb_major_version(bin), 12) << "split " << split;
  }
}

// ---------------------------------------------------------------- binary lookup

TEST(OsuBinary, FindsEveryLayoutInOrder) {
  TempDir dir;
  const fs::path root = dir.path();
  EXPECT_FALSE(find_osu_binary(root, Collective::bcast));
  const std::vector<fs::path> layouts = {
      "c/mpi/collective/blocking",
      "mpi/collective/blocking",
      "mpi/collective",
      "libexec/osu-micro-benchmarks/mpi/collective/blocking",
      "libexec/osu-micro-benchmarks/mpi/collective",
      ".",
  };
  // Add layouts from least to most preferred; each new one must win.
  for (const fs::path& layout : layouts) {
    const fs::path bin = (root / layout / "osu_allreduce").lexically_normal();
    write_file(bin, "#!/bin/sh\n", true);
    auto found = find_osu_binary(root, Collective::allreduce);
    ASSERT_TRUE(found) << layout;
    EXPECT_EQ(found->lexically_normal(), bin);
  }
  EXPECT_FALSE(find_osu_binary(root, Collective::bcast));  // other collectives stay absent
}

TEST(OsuBinary, RequiresExecutableRegularFile) {
  TempDir dir;
  const fs::path root = dir.path();
  write_file(root / "osu_bcast", "not executable", false);
  EXPECT_FALSE(find_osu_binary(root, Collective::bcast));
  fs::create_directories(root / "mpi/collective/osu_bcast");  // a directory, not a file
  EXPECT_FALSE(find_osu_binary(root, Collective::bcast));
  const fs::path real = root / "c/mpi/collective/blocking/osu_bcast";
  write_file(real, "#!/bin/sh\n", true);
  EXPECT_EQ(find_osu_binary(root, Collective::bcast), real);
  // A symlink to an executable counts (installs often link the binaries).
  fs::create_symlink(real, root / "osu_barrier");
  EXPECT_EQ(find_osu_binary(root, Collective::barrier), root / "osu_barrier");
  EXPECT_FALSE(find_osu_binary(root / "missing", Collective::bcast));
}

// ---------------------------------------------------------------- arguments

using Args = std::vector<std::string>;

TEST(OsuArguments, DefaultBcast) {
  OsuOptions options;
  EXPECT_EQ(osu_arguments(options, 5), (Args{"-m", "4:1048576", "-i", "100", "-x", "10", "-f"}));
  EXPECT_EQ(osu_arguments(options, 7), osu_arguments(options, 5));  // bcast: no -T
  options.full = false;
  options.min_size = 1;
  options.max_size = 64;
  options.iterations = 1000;
  options.warmup = 200;
  EXPECT_EQ(osu_arguments(options, std::nullopt), (Args{"-m", "1:64", "-i", "1000", "-x", "200"}));
}

TEST(OsuArguments, BarrierHasNoSizes) {
  OsuOptions options;
  options.collective = Collective::barrier;
  EXPECT_EQ(osu_arguments(options, 7), (Args{"-i", "100", "-x", "10", "-f"}));
}

TEST(OsuArguments, ReductionsUseFloatOnOmb7) {
  for (Collective c : {Collective::allreduce, Collective::reduce, Collective::reduce_scatter}) {
    OsuOptions options;
    options.collective = c;
    options.full = false;
    EXPECT_EQ(osu_arguments(options, 7),
              (Args{"-m", "4:1048576", "-i", "100", "-x", "10", "-T", "mpi_float"}))
        << name(c);
    EXPECT_EQ(osu_arguments(options, 8).back(), "mpi_float");
    EXPECT_EQ(osu_arguments(options, 6), (Args{"-m", "4:1048576", "-i", "100", "-x", "10"}));
    EXPECT_EQ(osu_arguments(options, std::nullopt), osu_arguments(options, 6));
  }
  OsuOptions gather;
  gather.collective = Collective::gather;
  EXPECT_EQ(osu_arguments(gather, 7).back(), "-f");
}

TEST(OsuArguments, Omb7ReductionsStartAtTheRowsOmb5Prints) {
  // Real OMB 7.2 `osu_allreduce -m 6:100 -T mpi_float` prints rows 6 12 24 48 96, the first one
  // reducing a single float (4 bytes); OMB 5.4.1 `-m 6:100` prints 4 8 16 32 64. Starting OMB 7
  // at the multiple of 4 OMB 5 uses gives identical rows.
  OsuOptions options;
  options.collective = Collective::allreduce;
  options.full = false;
  options.max_size = 100;
  const std::vector<std::pair<std::int64_t, std::string>> cases{
      {6, "4:100"}, {1, "4:100"}, {3, "4:100"}, {4, "4:100"}, {13, "12:100"}, {12, "12:100"}};
  for (const auto& [asked, sent] : cases) {
    options.min_size = asked;
    EXPECT_EQ(osu_arguments(options, 7)[1], sent) << asked;
    EXPECT_EQ(osu_arguments(options, 5)[1], std::to_string(asked) + ":100") << asked;
  }
  options.collective = Collective::bcast;  // bytes are bytes: unchanged
  options.min_size = 6;
  EXPECT_EQ(osu_arguments(options, 7)[1], "6:100");
}

TEST(OsuArguments, RejectsImpossibleOptions) {
  OsuOptions options;
  options.min_size = 8;
  options.max_size = 4;
  EXPECT_THROW(osu_arguments(options, 5), std::invalid_argument);
  options = {};
  options.min_size = 0;
  EXPECT_THROW(osu_arguments(options, 5), std::invalid_argument);
  options = {};
  options.iterations = 0;
  EXPECT_THROW(osu_arguments(options, 5), std::invalid_argument);
  options = {};
  options.warmup = -1;
  EXPECT_THROW(osu_arguments(options, 5), std::invalid_argument);
}

}  // namespace
}  // namespace colltune
