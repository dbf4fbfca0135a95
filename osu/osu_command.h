// Command lines for OSU collective latency benchmarks (`osu_<collective>`), real OMB or the
// bundled colltune-osu-bench (which is installed under the same names).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective.h"

namespace colltune {

struct OsuOptions {
  Collective collective = Collective::bcast;
  std::int64_t min_size = 4;
  std::int64_t max_size = 1 << 20;
  int iterations = 100;  // -i: both small and large
  int warmup = 10;       // -x: both small and large
  bool full = true;      // -f: Min/Max/Iterations columns
};

// Major version of OMB (5, 6, 7, ...) read from the binary itself, without running it: the
// header string "... Latency Test v7.1" is a literal in every OMB binary. nullopt if not found.
std::optional<int> detect_omb_major_version(const std::filesystem::path& binary);

// Finds osu_<collective> under an OMB install or build folder: DIR itself, then the usual
// layouts (libexec/osu-micro-benchmarks/mpi/collective[/blocking], mpi/collective[/blocking],
// c/mpi/collective/blocking). nullopt when absent or not executable.
std::optional<std::filesystem::path> find_osu_binary(const std::filesystem::path& osu_dir,
                                                     Collective collective);

// What one installed benchmark binary accepts, read from its own `-h` and `-v` output (never
// assumed from the version alone: OMB 7.0 has no -T, later 7.x have it).
struct OsuCapabilities {
  std::string version;       // "7.0", "5.6.2-colltune"; empty when unknown
  std::optional<int> major;  // leading number of `version`
  std::set<char> options;    // short options the help lists; empty when no help was read
  bool help_read() const { return !options.empty(); }
  // True when the binary takes `-T TYPE`; without a help text, assumed for OMB >= 7 only.
  bool accepts_type_option() const;
};

// Reads the capabilities from the stdout of `BINARY -h` and `BINARY -v`. The help lists one
// option per line ("  -T, --type ..." in 6.x/7.x, "  -m SIZE  ..." in 5.x); the version line is
// OMB's header "# OSU MPI ... Latency Test v7.0". Either text may be empty.
OsuCapabilities parse_osu_capabilities(std::string_view help_text, std::string_view version_text);

// The argv after the binary path: -m MIN:MAX -i N -x N [-f] and, for reductions with OMB >= 7
// (whose reductions default to MPI_CHAR) when the binary accepts -T, `-T mpi_float` (so the
// workload is MPI_FLOAT/MPI_SUM like OMB 5.x-6.x). In that case MIN is lowered to a multiple
// of 4 (at least 4), the first row OMB 5.x-6.x print for it, because OMB 7 would label a row
// "6" while reducing one float. An OMB 7 without -T (7.0) runs its default MPI_CHAR reduction.
std::vector<std::string> osu_arguments(const OsuOptions& options,
                                       const OsuCapabilities& capabilities);
// The same with only a major version known (no help text read).
std::vector<std::string> osu_arguments(const OsuOptions& options,
                                       std::optional<int> omb_major_version);

// OMB's BENCHMARK title for osu_<collective> with the "%s" accelerator slot empty, exactly as
// the header line prints it before " v<version>", e.g. "OSU MPI Broadcast Latency Test".
// Stable: the bundled benchmark prints it. Titles are OMB's own (reduce_scatter_block's
// "OSU MPI Reduce_scatter_block Latency Test" appears in OMB 7.5+).
std::string_view osu_benchmark_title(Collective collective);

// Inverse of osu_benchmark_title; also accepts accelerator variants ("OSU MPI-CUDA ...",
// "-OPENACC", "-ROCM"). nullopt for any other text.
std::optional<Collective> collective_from_osu_title(std::string_view benchmark);

}  // namespace colltune
