// Fuzzes the rules-file reader (exact Open MPI 4.1.4 / v2 / main ports, rules/rules_reader.h)
// and validate/lint (rules/rules_validate.h) on the same bytes, in every dialect.
// Contracts checked: read_rules_text never throws; validate_rules_text never throws and its
// report prints; parse_rules throws only std::invalid_argument, exactly when the reader says
// the file is not loaded; a loaded 4.1 model that the classic writer accepts reads back equal
// (the writer's round-trip promise, rules_writer.h).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "rules/rules_reader.h"
#include "rules/rules_validate.h"
#include "rules/rules_writer.h"

using namespace colltune;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (RulesDialect dialect :
       {RulesDialect::ompi_4_1, RulesDialect::ompi_v2, RulesDialect::ompi_main}) {
    const RulesReadResult read = read_rules_text(text, dialect);
    FUZZ_CHECK(read.loaded == read.reason.empty());

    ValidationOptions options;
    options.dialect = dialect;
    const ValidationReport report = validate_rules_text(text, options);
    FUZZ_CHECK(report.loads() == read.loaded);
    FUZZ_CHECK(!report.verdict().empty());
    (void)report.to_text();

    bool parsed = false;
    try {
      const RulesModel model = parse_rules(text, dialect);
      parsed = true;
      FUZZ_CHECK(model == read.model);
    } catch (const std::invalid_argument&) {
    }
    FUZZ_CHECK(parsed == read.loaded);

    if (read.loaded && dialect == RulesDialect::ompi_4_1) {
      std::string written;
      try {
        written = write_rules(read.model, RulesFormat::classic_v1);
      } catch (const std::invalid_argument&) {
        continue;  // a model the classic format cannot express (negative values, ...)
      }
      const RulesReadResult back = read_rules_text(written, RulesDialect::ompi_4_1);
      FUZZ_CHECK(back.loaded);
      FUZZ_CHECK(back.model == read.model);
    }
  }
  return 0;
}
