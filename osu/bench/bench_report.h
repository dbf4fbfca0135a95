// The text colltune-osu-bench prints, byte for byte in OMB 5.6.2's format (print_preamble,
// print_stats, print_help_message, print_bad_usage_message in OMB's util/osu_util*.c), with the
// version "5.6.2-colltune". Pure functions returning strings; main() writes them on rank 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "osu/bench/bench_options.h"

namespace colltune::osu_bench {

// OMB's BENCHMARK string with the accelerator slot empty, e.g. "OSU MPI Broadcast Latency
// Test" (identical to colltune::osu_benchmark_title).
std::string_view benchmark_title(Collective c);

// HEADER: "# OSU MPI Broadcast Latency Test v5.6.2-colltune\n". Also the -v output.
std::string_view header_line(Collective c);

// Everything before the first data line: "\n", the header line, "# Datatype: MPI_FLOAT.\n"
// when -T was given (OMB 7.x), and the column header:
//   "%-10s%18s" "# Size" "Avg Latency(us)"   (barrier: "# Avg Latency(us)")
//   -f: "%18s%18s%12s" "Min Latency(us)" "Max Latency(us)" "Iterations"
//   -c: "%18s" "Validation"                  (OMB 6.x)
// (FIELD_WIDTH is 18: that is what real OMB 5.6.2 output has, e.g. "# Size       Avg Latency(us)".)
std::string preamble(const BenchOptions& options);

// One data line: "%-10d%18.2f" size avg (barrier: "%17.2f" avg), with -f
// "%18.2f%18.2f%12lu" min max iterations, with -c "%18s" Pass|Fail, then "\n".
std::string data_line(const BenchOptions& options, std::int64_t size, double avg_us, double min_us,
                      double max_us, std::int64_t iterations,
                      std::optional<bool> validation_passed = std::nullopt);

// OMB 6.x's message after a failed validation (stdout):
// "DATA VALIDATION ERROR: osu_bcast exited with status 1 on message size 64.\n"
std::string validation_error_line(const BenchOptions& options, std::int64_t size);

// print_help_message for a blocking collective (stdout).
std::string help_text(const BenchOptions& options);

// print_bad_usage_message's first part (stderr): "Invalid Message Size [-m foo]\n\n".
std::string bad_usage_text(const BadUsage& bad_usage);

// set_max_memlimit's warning for -M below 1 MiB (stderr).
std::string mem_limit_raised_text();

inline constexpr std::string_view kTooFewProcesses = "This test requires at least two processes\n";

}  // namespace colltune::osu_bench
