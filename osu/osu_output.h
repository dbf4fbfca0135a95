// Parsed output of one OSU Micro-Benchmarks collective latency run (OMB 5.x-7.x, and our
// bundled colltune-osu-bench, which prints the same bytes); format:
// docs/reference/osu-benchmarks.md §3.
//
// The parser never invents a number: every value comes from a data line; anything it cannot
// account for is an error with a line number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace colltune {

struct OsuRow {
  std::int64_t size = 0;  // bytes as OSU prints them; 0 for barrier (no size column)
  double avg_us = 0;
  std::optional<double> min_us;            // -f only: min over ranks of per-rank means
  std::optional<double> max_us;            // -f only
  std::optional<std::int64_t> iterations;  // -f only
  std::optional<bool> validation_passed;   // -c only
};

struct OsuOutput {
  std::string benchmark;                // e.g. "OSU MPI Broadcast Latency Test"
  std::string version;                  // e.g. "5.6.2"; empty if the header had none
  std::optional<std::string> datatype;  // OMB 7.x "# Datatype: MPI_CHAR."
  bool full = false;                    // header had Min/Max/Iterations columns
  bool validation = false;              // header had a Validation column
  std::vector<OsuRow> rows;
};

enum class OsuErrorKind {
  empty,              // no output at all
  no_header,          // data without an OSU header, or not OSU output
  malformed_line,     // a line that is neither comment, header nor a well-formed data line
  truncated,          // output stops mid-line or before any data / before the expected end
  validation_failed,  // "Fail" in the Validation column or "DATA VALIDATION ERROR"
  mpi_error,          // Open MPI abort banner / "MPI call failed" / MPI_ABORT
  benchmark_error,    // OSU's own error messages (bad option, too few processes, ...)
};

std::string_view to_string(OsuErrorKind kind);

struct OsuParseError {
  OsuErrorKind kind = OsuErrorKind::malformed_line;
  int line = 0;  // 1-based line in stdout (or 0 when the error comes from stderr)
  std::string message;
};

struct OsuParseResult {
  OsuOutput output;  // rows parsed before any error are kept (a truncated run's early sizes)
  std::optional<OsuParseError> error;
  bool ok() const { return !error.has_value(); }
};

// Parses the stdout of one run; `stderr_text` (optional) is scanned for MPI aborts and OSU
// error messages, which turn an otherwise clean stdout into an error.
OsuParseResult parse_osu_output(std::string_view stdout_text, std::string_view stderr_text = {});

// The first of OSU's bad-usage lines in `text` ("Invalid Option [-T]", "Invalid Message Size
// [-m foo]", "Option Missing Required Argument [-m]"), trimmed; nullopt when there is none.
std::optional<std::string> find_osu_bad_usage(std::string_view text);

}  // namespace colltune
