// Reads a coll_tuned dynamic rules file exactly as a given Open MPI release does, and reports
// whether that release loads it or silently ignores it (docs/reference/open-mpi-rules.md §1.2,
// §1.4, §1.8).
//
// The classic reader is a line-by-line port of ompi_coll_tuned_read_rules_config_file() and
// ompi_coll_base_file_getnext_long() (4.1.4; 4.1.8/5.0.7 for the header and MAXREQ; main for
// range semantics). It calls the same C library functions on the same bytes (fscanf "%li" on
// an in-memory FILE), so numbers, octal/hex prefixes, signs, stray words and comments are
// tokenised exactly as Open MPI's glibc build does. Unlike Open MPI it reports the real
// 1-based line of the offending token (Open MPI's own counter only counts newlines consumed
// while skipping comments and junk).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/algorithm_table.h"
#include "core/ompi_version.h"
#include "rules/rules_model.h"

namespace colltune {

enum class RulesDialect {
  ompi_4_1,   // 4.1.0-4.1.7, 5.0.0-5.0.6: classic, no header, exactly 4 integers per rule
  ompi_v2,    // 4.1.8+, 5.0.7+: optional "rule-file-version-N" first line; if N > 1 an
              // optional 5th integer (MAXREQ) on the same line as the rule
  ompi_main,  // main / 6.0: JSON when the whole file parses as JSON, else classic (as ompi_v2)
              // with range semantics (LookupSemantics::ompi_main_classic)
};

RulesDialect rules_dialect_for(const OmpiVersion& version);
std::string_view to_string(RulesDialect dialect);
std::optional<RulesDialect> parse_rules_dialect(std::string_view text);  // "4.1", "v2", "main"

// One number the tokenizer read.
struct RulesToken {
  long value = 0;
  std::string text;  // as written, e.g. "010", "0x10", "+5"
  int line = 0;      // 1-based
  std::size_t offset = 0;
};

// Text outside comments that the tokenizer skipped one character at a time.
struct StrayText {
  std::string text;
  int line = 0;
  std::size_t offset = 0;        // of the first character
  std::size_t end = 0;           // one past the last character
  bool glued_to_number = false;  // a number was read directly after it (e.g. "alg3")
};

struct RulesReadResult {
  bool loaded = false;  // the Open MPI release would load the file
  std::string reason;   // why it is ignored; empty when loaded
  int line = 0;         // 1-based line of the offending token, or of the end of the file
  int ompi_line = 0;    // what Open MPI's own "Read afar as line %d" would say

  RulesModel model;  // complete when loaded; what was read before the error otherwise
  LookupSemantics semantics = LookupSemantics::ompi_4_1;  // how Open MPI looks the model up
  RulesDialect dialect = RulesDialect::ompi_4_1;
  bool json = false;       // read by main's JSON reader
  int header_version = 0;  // N of a "rule-file-version-N" header that was consumed; 0 = none

  // Source positions (classic format): every number read, skipped text, and the text after
  // the last number Open MPI reads (which it ignores).
  std::vector<RulesToken> tokens;
  std::vector<StrayText> strays;
  std::string trailing_text;  // without comments / whitespace; empty when none
  int trailing_line = 0;

  // Line of each model element, parallel to model: [collective], [collective][block],
  // [collective][block][rule]. 0 when unknown (JSON).
  std::vector<int> collective_lines;
  std::vector<std::vector<int>> block_lines;
  std::vector<std::vector<std::vector<int>>> rule_lines;

  // Values Open MPI stores into int fields although they exceed INT_MAX (truncated).
  std::vector<RulesToken> truncated_values;
  // JSON only: how the file was mapped onto the model (disabled rules, skipped rules, ...).
  std::vector<std::string> notes;
};

// Reads `text` as the release family `dialect` would. Never throws for bad content.
// `algorithms` is only used by main's JSON reader, which disables rules naming an algorithm the
// release does not have (default: algorithm_table_for(dialect)).
RulesReadResult read_rules_text(std::string_view text, RulesDialect dialect,
                                const AlgorithmTable* algorithms = nullptr);
// Reads a file; a file that cannot be opened is "not loaded" (Open MPI ignores it silently).
RulesReadResult read_rules_file(const std::filesystem::path& path, RulesDialect dialect,
                                const AlgorithmTable* algorithms = nullptr);

// Parses text meant to be loadable; throws std::invalid_argument with the reason and line when
// Open MPI would ignore it. For `rules show` and round trips.
RulesModel parse_rules(std::string_view text, RulesDialect dialect);

// Open MPI's name for a collective id in JSON files ("bcast", "reducescatter", ...); empty for
// ids >= 22.
std::string_view ompi_json_collective_name(int collective_id);
std::optional<int> ompi_collective_id_from_json_name(std::string_view name);

}  // namespace colltune
