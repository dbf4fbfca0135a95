// Fuzzes parse_osu_output (osu/osu_output.h). The input is stdout, optionally followed by a
// NUL byte and stderr, so both streams are explored. Contract checked: never crashes, never
// throws, every error has a kind and a message, and a clean parse has at least one row.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "osu/osu_output.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view out = input;
  std::string_view err;
  if (const auto nul = input.find('\0'); nul != std::string_view::npos) {
    out = input.substr(0, nul);
    err = input.substr(nul + 1);
  }
  const colltune::OsuParseResult result = colltune::parse_osu_output(out, err);
  if (result.error) {
    FUZZ_CHECK(!result.error->message.empty());
    FUZZ_CHECK(result.error->line >= 0);
    FUZZ_CHECK(!colltune::to_string(result.error->kind).empty());
  } else {
    FUZZ_CHECK(!result.output.rows.empty());
  }
  // "The parser never invents a number": every latency comes from text, so it is finite.
  for (const auto& row : result.output.rows) FUZZ_CHECK(!std::isnan(row.avg_us));
  return 0;
}
