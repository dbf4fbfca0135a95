// Inputs the campaign-spec and daemon-config fuzzers (fuzz/campaign_spec_fuzzer.cpp,
// fuzz/daemon_config_fuzzer.cpp) found, and their seed corpora, fed to the parsers as the
// daemon gets them (bytes -> JSON -> parse): a value or std::invalid_argument naming the field,
// never a crash or another exception.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "campaign/campaign_spec.h"
#include "core/file_text.h"
#include "server/config.h"
#include "tests/fuzz_inputs.h"

namespace colltune {
namespace {

using fuzz_inputs::inputs;

TEST(ParsersFuzzRegression, CampaignSpecsParseOrNameTheField) {
  const auto files = inputs("campaign_spec_fuzzer");
  ASSERT_GE(files.size(), 10u) << COLLTUNE_FUZZ_DIR;
  int accepted = 0;
  int rejected = 0;
  for (const auto& f : files) {
    const auto j = nlohmann::json::parse(read_file_text(f).value_or(""), nullptr, false);
    if (j.is_discarded()) continue;
    try {
      const CampaignSpec spec = parse_campaign_spec(j);
      ++accepted;
      // What to_json writes parses back to the same document.
      EXPECT_EQ(to_json(parse_campaign_spec(to_json(spec))), to_json(spec)) << f;
    } catch (const std::invalid_argument& e) {
      ++rejected;
      EXPECT_NE(std::string(e.what()).find(':'), std::string::npos) << f << ": " << e.what();
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

// Found by the campaign-spec fuzzer: "666666666666666666K:5K" overflowed value * 1024 (UBSan);
// 18014398509481985 KiB wrapped around to exactly 1 KiB and was accepted as that.
TEST(ParsersFuzzRegression, HugeSizesAreRejectedNotWrapped) {
  EXPECT_THROW(parse_size_range("666666666666666666K:5K"), std::invalid_argument);
  EXPECT_THROW(parse_size_range("18014398509481985K"), std::invalid_argument);
  EXPECT_THROW(parse_size_range("4:9223372036854775807G"), std::invalid_argument);
  try {
    parse_size_range("18014398509481985K");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_size_range("4K:1M"), (std::pair<std::int64_t, std::int64_t>{4096, 1 << 20}));
}

// Found by the daemon-config fuzzer: a structured key given as text (flag or COLLTUNE_BACKENDS)
// holding a number JSON cannot represent ("2e422") threw nlohmann's out_of_range, which is not
// a parse_error, so it escaped as an uncaught exception (the daemon died in std::terminate).
// The config file path had the same catch.
TEST(ParsersFuzzRegression, OutOfRangeNumbersInConfigTextAreCleanErrors) {
  nlohmann::json config = nlohmann::json::object();
  EXPECT_THROW(apply_config_override(config, "backends", "2e422", "--backends"),
               std::invalid_argument);
  EXPECT_THROW(apply_config_override(config, "tokens", "[1e999]", "COLLTUNE_TOKENS"),
               std::invalid_argument);
  const auto file = std::filesystem::temp_directory_path() /
                    ("colltune-fuzz-config-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"max_body_bytes": 1e999})";
  const auto no_env = [](const char*) -> const char* { return nullptr; };
  EXPECT_THROW(layered_daemon_config(file.string(), no_env, {}), std::invalid_argument);
  std::filesystem::remove(file);
  EXPECT_NO_THROW(apply_config_override(config, "backends", R"({"sim": {}})", "--backends"));
}

TEST(ParsersFuzzRegression, DaemonConfigsParseOrNameTheKey) {
  const auto files = inputs("daemon_config_fuzzer");
  ASSERT_GE(files.size(), 10u) << COLLTUNE_FUZZ_DIR;
  int accepted = 0;
  int rejected = 0;
  for (const auto& f : files) {
    const std::string text = read_file_text(f).value_or("");
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) {
      // Override inputs: first byte picks the key, the rest is the flag / variable text.
      nlohmann::json config = nlohmann::json::object();
      const auto& keys = daemon_config_keys();
      try {
        apply_config_override(config, keys[static_cast<unsigned char>(text[0]) % keys.size()],
                              text.substr(1), "test");
        (void)parse_daemon_config(config);
      } catch (const std::invalid_argument&) {
      }
      continue;
    }
    try {
      const DaemonConfig config = parse_daemon_config(j);
      ++accepted;
      EXPECT_FALSE(config.backends.empty()) << f;
    } catch (const std::invalid_argument& e) {
      ++rejected;
      EXPECT_NE(std::string(e.what()).find("config "), std::string::npos) << f << ": " << e.what();
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace colltune
