// Parser for OSU Micro-Benchmarks collective latency output
// (docs/reference/osu-benchmarks.md §3, §4).
//
// Line classes, checked in this order on every stdout line:
//   1. fatal signatures (Open MPI abort banners, OSU error messages, DATA VALIDATION ERROR):
//      the run failed; they win over any structural problem seen earlier, because the mess
//      around an abort (cut lines, help text) is a symptom, not the cause;
//   2. known noise that may share the stream: OSU memory-limit warnings (which OMB 7 prints
//      without a newline, so they can be glued to the next line), Open MPI help blocks between
//      dashed rules, help-aggregation notes, "Forwarding signal" notes;
//   3. the OSU table itself: blank lines, "# OSU ... v<ver>" title, "# Datatype: X.", the column
//      header, data lines whose fields match the column header exactly.
// Anything else is an error with its line number. A stdout line without the final newline is
// treated as cut off (a number could be incomplete), so it is never turned into a row.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "core/text.h"
#include "osu/osu_output.h"

namespace colltune {

std::string_view to_string(OsuErrorKind kind) {
  switch (kind) {
    case OsuErrorKind::empty:
      return "empty";
    case OsuErrorKind::no_header:
      return "no_header";
    case OsuErrorKind::malformed_line:
      return "malformed_line";
    case OsuErrorKind::truncated:
      return "truncated";
    case OsuErrorKind::validation_failed:
      return "validation_failed";
    case OsuErrorKind::mpi_error:
      return "mpi_error";
    case OsuErrorKind::benchmark_error:
      return "benchmark_error";
  }
  return "unknown";
}

namespace {

struct Line {
  std::string_view text;
  int number = 0;           // 1-based
  bool terminated = false;  // ended with '\n'
};

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    const bool terminated = end != std::string_view::npos;
    if (!terminated) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({line, ++number, terminated});
    start = end + 1;
  }
  return lines;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    std::size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) fields.push_back(s.substr(start, i - start));
  }
  return fields;
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// Line text for messages: trimmed and bounded.
std::string quote(std::string_view line) {
  line = trim(line);
  constexpr std::size_t kMax = 160;
  std::string out = "'" + std::string(line.substr(0, kMax));
  if (line.size() > kMax) out += "...";
  return out + "'";
}

// ---- 1. fatal signatures ----

struct Signature {
  std::string_view text;
  OsuErrorKind kind;
};

constexpr std::array<Signature, 18> kFatalSignatures{{
    // OSU data validation (stdout, rank 0)
    {"DATA VALIDATION ERROR", OsuErrorKind::validation_failed},
    // Open MPI error handler / abort banners, mpirun / PRRTE job failure reports
    {"An error occurred in MPI_", OsuErrorKind::mpi_error},
    {"*** An error occurred", OsuErrorKind::mpi_error},
    {"MPI_ERRORS_ARE_FATAL", OsuErrorKind::mpi_error},
    {"MPI_ABORT was invoked", OsuErrorKind::mpi_error},
    {"noticed that process rank", OsuErrorKind::mpi_error},
    {"detected that one or more processes exited with non-zero status", OsuErrorKind::mpi_error},
    {"the job has been aborted", OsuErrorKind::mpi_error},
    {"*** Process received signal ***", OsuErrorKind::mpi_error},
    {"was unable to reliably start one or more daemons", OsuErrorKind::mpi_error},
    {"has lost communication with a remote daemon", OsuErrorKind::mpi_error},
    {"MPI call failed", OsuErrorKind::mpi_error},  // OSU's MPI_CHECK, "[f:l] MPI call failed"
    // OSU's own errors
    {"This test requires at least", OsuErrorKind::benchmark_error},  // "... two processes"
    {"Could Not Allocate Memory", OsuErrorKind::benchmark_error},
    {"Benchmark Does Not Support", OsuErrorKind::benchmark_error},
    {"Support Not Enabled", OsuErrorKind::benchmark_error},
    {"Please recompile benchmark with", OsuErrorKind::benchmark_error},
    {"] Error: '", OsuErrorKind::benchmark_error},  // OMB 7 OMB_ERROR_EXIT "[f:l] Error: '...'"
}};

// OSU's print_bad_usage_message: "<message> [-c]" or "<message> [-c optarg]".
bool is_bad_usage_message(std::string_view line) {
  line = trim(line);
  if (line.empty() || line.back() != ']') return false;
  std::size_t open = line.rfind(" [-");
  if (open == std::string_view::npos || open == 0) return false;
  std::string_view inside = line.substr(open + 3, line.size() - open - 4);  // after "[-", before ]
  if (inside.empty() || is_space(inside[0])) return false;
  return inside.size() == 1 || inside[1] == ' ';
}

std::optional<OsuErrorKind> fatal_kind(std::string_view line) {
  for (const auto& signature : kFatalSignatures)
    if (contains(line, signature.text)) return signature.kind;
  if (is_bad_usage_message(line)) return OsuErrorKind::benchmark_error;
  if (trim(line).starts_with("Usage: ")) return OsuErrorKind::benchmark_error;  // help text
  return std::nullopt;
}

// ---- 2. noise ----

// OSU warnings that may come without a newline. Returns what follows the warning on the same
// line (empty if the whole line is the warning); the input unchanged if it is no warning.
std::string_view strip_warning(std::string_view line) {
  struct GluedWarning {
    std::string_view prefix;
    std::string_view terminator;
  };
  static constexpr std::array<GluedWarning, 4> kWarnings{{
      {"Warning! Limiting max message size to:", "message sizes."},  // OMB 7
      {"Warning! Increase the Max Memory Limit", "bytes."},          // OMB 5/6, first line
      {"Continuing with max message size of ", " bytes"},            // OMB 5/6, second line
      {"Requested memory limit too low, using [", "] instead."},
  }};
  // Several warnings may be glued together: every rank parses options, so P ranks can print
  // P copies of the same note on one line. Each pass removes at least a prefix, so it ends.
  while (true) {
    bool stripped = false;
    for (const auto& warning : kWarnings) {
      if (!line.starts_with(warning.prefix)) continue;
      std::size_t end = line.find(warning.terminator, warning.prefix.size());
      line = end == std::string_view::npos ? std::string_view{}
                                           : line.substr(end + warning.terminator.size());
      stripped = true;
      break;
    }
    if (!stripped) break;
  }
  if (line.starts_with("Warning! ")) return {};  // other OSU warnings: whole line
  return line;
}

// Open MPI frames its help messages with a rule of dashes.
bool is_help_rule(std::string_view line) {
  line = trim(line);
  return line.size() >= 20 &&
         std::all_of(line.begin(), line.end(), [](char c) { return c == '-'; });
}

bool is_runtime_note(std::string_view line) {
  return contains(line, ": Forwarding signal ") ||  // mpirun / PRTE relaying a signal
         contains(line, "help message") ||          // "[h:p] N more processes have sent help ..."
         contains(line, "base_help_aggregate");     // "... Set MCA parameter ... to 0 to see all"
}

// ---- 3. the table ----

enum class Column { size, avg, min, max, iterations, validation, tail, transmit_size };

std::string_view column_name(Column c) {
  switch (c) {
    case Column::size:
      return "Size";
    case Column::avg:
      return "Avg Latency(us)";
    case Column::min:
      return "Min Latency(us)";
    case Column::max:
      return "Max Latency(us)";
    case Column::iterations:
      return "Iterations";
    case Column::validation:
      return "Validation";
    case Column::tail:
      return "P<n> Tail Lat(us)";
    case Column::transmit_size:
      return "Transmit Size";
  }
  return "?";
}

bool is_tail_percentile_token(std::string_view token) {  // "P50", "P99", ...
  if (token.size() < 2 || token[0] != 'P') return false;
  return std::all_of(token.begin() + 1, token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Column header tokens (after '#') to columns; nullopt if a name is unknown or misplaced.
std::optional<std::vector<Column>> parse_columns(const std::vector<std::string_view>& tokens) {
  std::vector<Column> columns;
  std::size_t i = 0;
  auto next_is = [&](std::initializer_list<std::string_view> words) {
    if (i + words.size() > tokens.size()) return false;
    std::size_t k = i;
    for (std::string_view word : words)
      if (tokens[k++] != word) return false;
    i = k;
    return true;
  };
  while (i < tokens.size()) {
    if (next_is({"Size"})) {
      columns.push_back(Column::size);
    } else if (next_is({"Avg", "Latency(us)"})) {
      columns.push_back(Column::avg);
    } else if (next_is({"Min", "Latency(us)"})) {
      columns.push_back(Column::min);
    } else if (next_is({"Max", "Latency(us)"})) {
      columns.push_back(Column::max);
    } else if (next_is({"Iterations"})) {
      columns.push_back(Column::iterations);
    } else if (next_is({"Validation"})) {
      columns.push_back(Column::validation);
    } else if (next_is({"Transmit", "Size"})) {
      columns.push_back(Column::transmit_size);
    } else if (is_tail_percentile_token(tokens[i]) && i + 2 < tokens.size() &&
               tokens[i + 1] == "Tail" && tokens[i + 2] == "Lat(us)") {
      i += 3;
      columns.push_back(Column::tail);
    } else {
      return std::nullopt;
    }
  }
  // OSU's layout: [Size] Avg, each non-tail column at most once, -f's three columns together.
  auto count = [&](Column c) { return std::count(columns.begin(), columns.end(), c); };
  std::size_t first = 0;
  if (!columns.empty() && columns[0] == Column::size) first = 1;
  if (columns.size() <= first || columns[first] != Column::avg) return std::nullopt;
  for (Column c : {Column::size, Column::avg, Column::min, Column::max, Column::iterations,
                   Column::validation, Column::transmit_size})
    if (count(c) > 1) return std::nullopt;
  if (count(Column::size) == 1 && columns[0] != Column::size) return std::nullopt;
  const auto full_columns = count(Column::min) + count(Column::max) + count(Column::iterations);
  if (full_columns != 0 && full_columns != 3) return std::nullopt;
  return columns;
}

// Whole-token numbers only: "12.3abc", "", "1e5", "inf", "nan", "-1" are rejected.
std::optional<double> parse_latency(std::string_view token) {
  double value = 0;
  auto [ptr, ec] =
      std::from_chars(token.data(), token.data() + token.size(), value, std::chars_format::fixed);
  if (ec != std::errc() || ptr != token.data() + token.size()) return std::nullopt;
  if (!std::isfinite(value) || value < 0 || token.front() == '-') return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_count(std::string_view token) {
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || ptr != token.data() + token.size() || value < 0) return std::nullopt;
  return value;
}

// Feeds the table lines (class 3 above) one by one and fills an OsuOutput.
class TableParser {
 public:
  explicit TableParser(OsuOutput& output) : output_(output) {}

  // nullopt when the line was accepted; otherwise the error it causes.
  std::optional<OsuParseError> feed(std::string_view text, int number) {
    if (text.starts_with("#")) return feed_comment(text, number);
    if (!seen_title_)
      return error(OsuErrorKind::no_header, number, "data before the OSU header: " + quote(text));
    if (!columns_)
      return error(OsuErrorKind::malformed_line, number,
                   "data line before the column header: " + quote(text));
    return feed_row(text, number);
  }

  bool seen_title() const { return seen_title_; }
  bool seen_columns() const { return first_section_columns_; }

 private:
  static OsuParseError error(OsuErrorKind kind, int line, std::string message) {
    return OsuParseError{kind, line, std::move(message)};
  }

  std::optional<OsuParseError> feed_comment(std::string_view text, int number) {
    if (text.starts_with("# OSU ")) {
      if (seen_title_)
        return error(OsuErrorKind::malformed_line, number, "second OSU header " + quote(text));
      seen_title_ = true;
      read_title(trim(text.substr(2)));
      return std::nullopt;
    }
    if (!seen_title_)
      return error(OsuErrorKind::no_header, number,
                   "expected the '# OSU ... Latency Test v<version>' header, got " + quote(text));
    if (text.starts_with("# Datatype:")) {
      std::string_view type = trim(text.substr(11));
      if (type.ends_with(".")) type.remove_suffix(1);
      if (type.empty() || contains(type, " "))
        return error(OsuErrorKind::malformed_line, number, "bad datatype line " + quote(text));
      if (seen_datatype_ || columns_) {  // a further datatype section: checked, not kept
        ++section_;
        columns_.reset();
        rows_in_section_ = 0;
      }
      if (section_ == 0) output_.datatype = std::string(type);
      seen_datatype_ = true;
      return std::nullopt;
    }
    std::vector<std::string_view> tokens = split_fields(text.substr(1));
    if (tokens.empty() || (tokens[0] != "Size" && tokens[0] != "Avg"))
      return std::nullopt;  // some other comment
    if (columns_)
      return error(OsuErrorKind::malformed_line, number, "repeated column header " + quote(text));
    columns_ = parse_columns(tokens);
    if (!columns_)
      return error(OsuErrorKind::malformed_line, number,
                   "unsupported column header " + quote(text));
    if (section_ == 0) {
      first_section_columns_ = true;
      auto has = [&](Column c) {
        return std::find(columns_->begin(), columns_->end(), c) != columns_->end();
      };
      output_.full = has(Column::min);
      output_.validation = has(Column::validation);
    }
    return std::nullopt;
  }

  // "OSU MPI Broadcast Latency Test v5.6.2" -> benchmark + version.
  void read_title(std::string_view title) {
    std::size_t v = title.rfind(" v");
    if (v != std::string_view::npos && v + 2 < title.size() && title[v + 2] >= '0' &&
        title[v + 2] <= '9') {
      output_.benchmark = std::string(trim(title.substr(0, v)));
      output_.version = std::string(trim(title.substr(v + 2)));
    } else {
      output_.benchmark = std::string(title);
    }
  }

  std::optional<OsuParseError> feed_row(std::string_view text, int number) {
    const std::vector<Column>& columns = *columns_;
    std::vector<std::string_view> fields = split_fields(text);
    if (fields.size() != columns.size())
      return error(OsuErrorKind::malformed_line, number,
                   "expected " + std::to_string(columns.size()) + " fields, got " +
                       std::to_string(fields.size()) + ": " + quote(text));
    OsuRow row;
    bool has_size = false;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string_view field = fields[i];
      auto bad = [&] {
        return error(OsuErrorKind::malformed_line, number,
                     "bad " + std::string(column_name(columns[i])) + " '" + std::string(field) +
                         "' in " + quote(text));
      };
      switch (columns[i]) {
        case Column::size: {
          auto size = parse_count(field);
          if (!size) return bad();
          row.size = *size;
          has_size = true;
          break;
        }
        case Column::avg:
        case Column::min:
        case Column::max:
        case Column::tail: {
          auto value = parse_latency(field);
          if (!value) return bad();
          if (columns[i] == Column::avg) row.avg_us = *value;
          if (columns[i] == Column::min) row.min_us = *value;
          if (columns[i] == Column::max) row.max_us = *value;
          break;
        }
        case Column::iterations: {
          auto iterations = parse_count(field);
          if (!iterations) return bad();
          row.iterations = *iterations;
          break;
        }
        case Column::transmit_size:
          if (!parse_count(field)) return bad();
          break;
        case Column::validation:
          if (field == "Pass") {
            row.validation_passed = true;
          } else if (field == "Fail") {
            row.validation_passed = false;
          } else {
            return bad();
          }
          break;
      }
    }
    if (has_size && rows_in_section_ > 0 && row.size <= last_size_)
      return error(OsuErrorKind::malformed_line, number,
                   "size " + std::to_string(row.size) + " does not follow " +
                       std::to_string(last_size_) + " in ascending order");
    if (!has_size && rows_in_section_ > 0)
      return error(OsuErrorKind::malformed_line, number,
                   "second row in a table without a size column " + quote(text));
    last_size_ = row.size;
    ++rows_in_section_;
    const bool failed = row.validation_passed == false;
    // The row's timing is real even when validation failed, so it is kept (flagged).
    if (section_ == 0) output_.rows.push_back(row);
    if (failed)
      return error(OsuErrorKind::validation_failed, number,
                   "validation failed at size " + std::to_string(row.size));
    return std::nullopt;
  }

  OsuOutput& output_;
  bool seen_title_ = false;
  bool seen_datatype_ = false;
  bool first_section_columns_ = false;
  int section_ = 0;
  std::optional<std::vector<Column>> columns_;
  int rows_in_section_ = 0;
  std::int64_t last_size_ = 0;
};

std::optional<OsuParseError> first_fatal_in_stderr(std::string_view stderr_text) {
  for (const Line& line : split_lines(stderr_text)) {
    std::string_view text = strip_warning(line.text);
    if (auto kind = fatal_kind(text))
      return OsuParseError{*kind, 0,
                           "stderr line " + std::to_string(line.number) + ": " + quote(text)};
  }
  return std::nullopt;
}

}  // namespace

OsuParseResult parse_osu_output(std::string_view stdout_text, std::string_view stderr_text) {
  OsuParseResult result;
  TableParser table(result.output);
  const std::vector<Line> lines = split_lines(stdout_text);

  std::optional<OsuParseError> stdout_fatal;  // a cause: ends the scan
  std::optional<OsuParseError> structural;    // a symptom: a later cause replaces it
  bool in_help_block = false;
  bool any_text = false;
  for (const Line& line : lines) {
    std::string_view text = line.text;
    if (!trim(text).empty()) any_text = true;
    if (auto kind = fatal_kind(text)) {
      stdout_fatal = OsuParseError{*kind, line.number, quote(text)};
      break;
    }
    if (structural) continue;  // only looking for a cause now
    text = strip_warning(text);
    if (trim(text).empty() || is_runtime_note(text)) continue;
    if (is_help_rule(text)) {
      in_help_block = !in_help_block;
      continue;
    }
    if (in_help_block) continue;
    if (!line.terminated) {
      structural = OsuParseError{OsuErrorKind::truncated, line.number,
                                 "output ends mid-line: " + quote(text)};
      continue;
    }
    if (auto error = table.feed(text, line.number)) {
      if (error->kind == OsuErrorKind::validation_failed) {
        stdout_fatal = std::move(error);
        break;
      }
      structural = std::move(error);
    }
  }

  std::optional<OsuParseError> stderr_fatal = first_fatal_in_stderr(stderr_text);
  if (stdout_fatal) {
    // OSU prints its usage text on stdout and the reason ("Invalid Option [-q]") on stderr.
    if (stdout_fatal->message.starts_with("'Usage: ") && stderr_fatal)
      stdout_fatal->message += " (" + stderr_fatal->message + ")";
    result.error = std::move(stdout_fatal);
  } else if (stderr_fatal) {
    result.error = std::move(stderr_fatal);
  } else if (structural) {
    result.error = std::move(structural);
  } else if (!any_text) {
    result.error = OsuParseError{OsuErrorKind::empty, 0, "no output on stdout"};
  } else if (!table.seen_title()) {
    result.error = OsuParseError{OsuErrorKind::no_header, static_cast<int>(lines.size()),
                                 "no '# OSU ... Latency Test' header in the output"};
  } else if (!table.seen_columns() || result.output.rows.empty()) {
    result.error = OsuParseError{OsuErrorKind::truncated, static_cast<int>(lines.size()),
                                 table.seen_columns() ? "no data rows after the column header"
                                                      : "output ends before the column header"};
  }
  return result;
}

std::optional<std::string> find_osu_bad_usage(std::string_view text) {
  for (std::string_view line : lines_of(text))
    if (line = trim(line); is_bad_usage_message(line)) return std::string(line);
  return std::nullopt;
}

}  // namespace colltune
