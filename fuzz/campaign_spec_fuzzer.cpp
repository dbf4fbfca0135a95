// Fuzzes the campaign JSON spec (campaign/campaign_spec.h) as the daemon receives it: bytes ->
// nlohmann::json::parse -> parse_campaign_spec. Contracts checked: bad specs throw
// std::invalid_argument only (any other exception escaping is a crash); a spec that parses
// serialises with to_json and parses back to the same JSON; parse_size_range on the "sizes"
// text and osu_message_sizes on the parsed range stay bounded.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "campaign/campaign_spec.h"
#include "fuzz/fuzz_support.h"

using namespace colltune;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The size-range grammar on its own (the whole input as a "sizes" value).
  try {
    const auto [lo, hi] = parse_size_range(text);
    FUZZ_CHECK(lo <= hi);
    (void)format_size_range(lo, hi);
  } catch (const std::invalid_argument&) {
  }

  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  CampaignSpec spec;
  try {
    spec = parse_campaign_spec(j);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  FUZZ_CHECK(!spec.contexts.empty());
  FUZZ_CHECK(spec.min_size <= spec.max_size);
  const nlohmann::json again = to_json(spec);
  CampaignSpec back;
  try {
    back = parse_campaign_spec(again);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "to_json output rejected: %s\n%s\n", e.what(), again.dump().c_str());
    std::abort();
  }
  FUZZ_CHECK(to_json(back) == again);
  for (const auto& context : spec.contexts) {
    const auto sizes = osu_message_sizes(context.collective, spec.min_size, spec.max_size);
    FUZZ_CHECK(sizes.size() <= 64);
  }
  return 0;
}
