// Validation of a rules file for an Open MPI release: first the exact answer to "does Open MPI
// load this file, or silently ignore it (why, where)?" (rules_reader.h), then lint for what
// Open MPI does not check but should: values it reads differently from how they look (octal,
// hex, digits inside words), rules that abort jobs (algorithm ids outside the release's table,
// two_proc on more than 2 ranks), rules that can never apply (order), rules that leak onto
// other communicators (first-block floor), non-commutative-unsafe algorithms, duplicate
// collectives, ignored trailing content.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/algorithm_table.h"
#include "core/ompi_version.h"
#include "rules/rules_reader.h"

namespace colltune {

enum class Severity { error, warning, info };
std::string_view to_string(Severity severity);

struct LintFinding {
  Severity severity = Severity::warning;
  std::string code;  // stable identifier, e.g. "octal-number", "alg-out-of-range"
  int line = 0;      // 1-based; 0 when not tied to a line
  std::string message;
};

struct ValidationOptions {
  RulesDialect dialect = RulesDialect::ompi_4_1;
  // The target release's algorithms (AlgorithmTable::from_ompi_info of the target is best).
  // Default: 4.1 table for ompi_4_1 / ompi_v2, algorithm_table_main() for ompi_main.
  const AlgorithmTable* algorithms = nullptr;
  // Applications may call reductions with non-commutative user-defined operations.
  bool non_commutative_ops_possible = true;
};

// Dialect and algorithm table for a release (5.0.x gets the 5.0 table).
ValidationOptions validation_options_for(const OmpiVersion& version);

struct ValidationReport {
  RulesReadResult read;
  std::vector<LintFinding> findings;  // ordered by line

  bool loads() const { return read.loaded; }
  bool has_errors() const;
  // Loads and no lint errors: safe to deploy.
  bool deployable() const { return loads() && !has_errors(); }
  // One sentence: "Open MPI 4.1.x would load this file." or "Open MPI 4.1.x would silently
  // ignore this file, because <reason> (line N)."
  std::string verdict() const;
  // Verdict plus every finding, one per line ("line 12: error [octal-number] ...").
  std::string to_text() const;
};

ValidationReport validate_rules_text(std::string_view text, const ValidationOptions& options = {});
ValidationReport validate_rules_file(const std::filesystem::path& path,
                                     const ValidationOptions& options = {});

// The lint part alone, for a read result.
std::vector<LintFinding> lint_rules(const RulesReadResult& read, const ValidationOptions& options);

}  // namespace colltune
