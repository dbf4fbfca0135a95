// Fuzzes the daemon config (server/config.h): bytes -> nlohmann::json::parse ->
// parse_daemon_config, plus the text paths of the same keys (parse_listen_address and
// apply_config_override, used for flags and COLLTUNE_<KEY> variables). Contracts checked: bad
// input throws std::invalid_argument only; a parsed config always has a backend and a valid
// port.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "fuzz/fuzz_support.h"
#include "server/config.h"

using namespace colltune;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto [host, port] = parse_listen_address(text);
    FUZZ_CHECK(port >= 0 && port <= 65535);
  } catch (const std::invalid_argument&) {
  }
  // The first byte picks a key, the rest is its text value (a flag or an environment value).
  if (size > 0) {
    const auto& keys = daemon_config_keys();
    nlohmann::json config = nlohmann::json::object();
    try {
      apply_config_override(config, keys[data[0] % keys.size()], text.substr(1), "fuzz");
      (void)parse_daemon_config(config);
    } catch (const std::invalid_argument&) {
    }
  }

  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    const DaemonConfig config = parse_daemon_config(j);
    FUZZ_CHECK(!config.backends.empty());
    FUZZ_CHECK(config.listen_port >= 0 && config.listen_port <= 65535);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
