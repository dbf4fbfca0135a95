// Writes a RulesModel in the format a given Open MPI release reads
// (docs/reference/open-mpi-rules.md §1.4):
// - classic_v1: 4.1.0-4.1.7 and 5.0.0-5.0.6. No header, 4 decimal integers per rule, '#'
//   comments. Cannot express max_requests.
// - classic_v2: 4.1.8+ and 5.0.7+. "rule-file-version-2" as the very first line, 5 integers
//   per rule (MAXREQ always written, so the MCA default never leaks in).
// - json: Open MPI main / 6.0 (rule_file_version 3). Ranges are written so that main applies
//   the model exactly as 4.1.x applies the classic file, including the first block's floor for
//   communicators of 2 ranks and more; open ends are omitted rather than written as "inf".
// Every writer emits decimal numbers without leading zeros, and what it writes reads back
// (rules_reader.h) to the same model.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/algorithm_table.h"
#include "core/ompi_version.h"
#include "rules/rules_model.h"

namespace colltune {

enum class RulesFormat { classic_v1, classic_v2, json };

// The newest format `version` reads: 4.1.8+ / 5.0.7+ -> classic_v2, 6.0+ (main) -> json,
// everything else -> classic_v1.
RulesFormat rules_format_for(const OmpiVersion& version);
std::string_view to_string(RulesFormat format);
// "classic" / "v1", "v2", "json"; nullopt otherwise.
std::optional<RulesFormat> parse_rules_format(std::string_view text);

struct RulesWriteOptions {
  // Names for comments; default AlgorithmTable::builtin_4_1().
  const AlgorithmTable* algorithms = nullptr;
  // Lines written as '#' comments at the top of classic files (newlines become spaces).
  std::vector<std::string> comment_lines;
  // Per-line explanations ("# bcast", "# 4 KiB and up: binomial, ...") in classic files.
  bool annotate = true;
};

// Throws std::invalid_argument when the model cannot be written faithfully in `format`:
// negative values, max_requests != 0 in classic_v1, and for json: duplicate collective ids,
// comm or message sizes not strictly ascending, or a block not starting at message size 0.
std::string write_rules(const RulesModel& model, RulesFormat format,
                        const RulesWriteOptions& options = {});

// "4 KiB", "1 MiB", "1536 B", "3 GiB" (exact: binary units only when divisible).
std::string human_bytes(std::int64_t bytes);

}  // namespace colltune
