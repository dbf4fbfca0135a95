// Command lines for OSU collective latency benchmarks (`osu_<collective>`), real OMB or the
// bundled colltune-osu-bench (which is installed under the same names).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
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

// The argv after the binary path: -m MIN:MAX -i N -x N [-f] and, for reductions with OMB >= 7,
// `-T mpi_float` (so the workload is MPI_FLOAT/MPI_SUM like OMB 5.x-6.x).
// In that case MIN is lowered to a multiple of 4 (at least 4), the first row OMB 5.x-6.x
// print for it, because OMB 7 would label a row "6" while reducing one float.
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
