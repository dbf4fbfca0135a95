#include "campaign/campaign_spec.h"

#include <gtest/gtest.h>

namespace colltune {
namespace {

nlohmann::json minimal() {
  return {{"backend", "local"},
          {"contexts", {{{"collective", "bcast"}, {"comm_size", 4}}}},
          {"sizes", "4:1M"}};
}

TEST(CampaignSpec, MinimalSpecGetsDefaults) {
  auto spec = parse_campaign_spec(minimal());
  EXPECT_EQ(spec.backend, "local");
  ASSERT_EQ(spec.contexts.size(), 1u);
  EXPECT_EQ(spec.contexts[0].collective, Collective::bcast);
  EXPECT_EQ(spec.min_size, 4);
  EXPECT_EQ(spec.max_size, 1 << 20);
  EXPECT_FALSE(spec.name.empty());
  // Round trip through JSON.
  auto again = parse_campaign_spec(to_json(spec));
  EXPECT_EQ(again.contexts, spec.contexts);
  EXPECT_EQ(again.max_size, spec.max_size);
}

TEST(CampaignSpec, RejectsBadInputWithTheFieldName) {
  auto expect_error = [](nlohmann::json j, const std::string& field) {
    try {
      parse_campaign_spec(j);
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  auto j = minimal();
  j["surprise"] = 1;
  expect_error(j, "surprise");
  j = minimal();
  j["contexts"][0]["collective"] = "bcastt";
  expect_error(j, "contexts[0].collective");
  j = minimal();
  j["contexts"][0]["comm_size"] = "4";
  expect_error(j, "contexts[0].comm_size");
  j = minimal();
  j["sizes"] = "1M:4";
  expect_error(j, "sizes");
  j = minimal();
  j["backend"] = "local; rm -rf /";
  expect_error(j, "backend");
  j = minimal();
  j.erase("contexts");
  expect_error(j, "contexts");
  j = minimal();
  j["repeats"] = 0;
  expect_error(j, "repeats");
  j = minimal();
  j["contexts"][0]["nodes"] = 2;
  j["contexts"][0]["ppn"] = 3;
  expect_error(j, "ppn");
  j = minimal();
  j["contexts"].push_back(j["contexts"][0]);
  expect_error(j, "duplicate");
}

TEST(CampaignSpec, SizesWithASignOrBlanksAreRefused) {
  // Issue 20 item 12: std::stoll skipped the blank and took the sign, so these were accepted.
  for (const char* text : {"+4:64", " 4:64", "4: 64", "4:+64", "-4:64", "4:64 ", "\t4:64"}) {
    auto j = minimal();
    j["sizes"] = text;
    EXPECT_THROW(parse_campaign_spec(j), std::invalid_argument) << "'" << text << "'";
  }
  EXPECT_EQ(parse_size_range("4:64"), std::make_pair(std::int64_t{4}, std::int64_t{64}));
  EXPECT_EQ(parse_size_range("4K:1M").second, 1 << 20);
}

TEST(CampaignSpec, OsuSizesDoubleAndReductionsStartAtFour) {
  auto s = osu_message_sizes(Collective::bcast, 1, 16);
  EXPECT_EQ(s, (std::vector<std::int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(osu_message_sizes(Collective::allreduce, 1, 16), (std::vector<std::int64_t>{4, 8, 16}));
  EXPECT_EQ(osu_message_sizes(Collective::barrier, 1, 16), (std::vector<std::int64_t>{0}));
  // -m 6:100 on a reduction: OSU prints 4 8 16 32 64.
  EXPECT_EQ(osu_message_sizes(Collective::reduce, 6, 100),
            (std::vector<std::int64_t>{4, 8, 16, 32, 64}));
  EXPECT_EQ(osu_message_sizes(Collective::bcast, 6, 100),
            (std::vector<std::int64_t>{6, 12, 24, 48, 96}));
}

}  // namespace
}  // namespace colltune
