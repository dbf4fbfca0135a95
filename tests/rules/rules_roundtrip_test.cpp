// Property tests: model -> writer -> Open MPI reader -> model is the identity.
#include <gtest/gtest.h>

#include "random_models.h"
#include "rules/rules_reader.h"
#include "rules/rules_writer.h"
#include "rules/version_tables.h"

namespace colltune {
namespace {

using testing::random_model;
using testing::RandomModelShape;

constexpr int kCases = 400;

TEST(RulesRoundTrip, ClassicV1IsIdentityFor41) {
  Rng rng(20240601);
  RandomModelShape shape;
  shape.canonical = false;  // any order: the classic format stores it as written
  shape.allow_duplicates = true;
  for (int i = 0; i < kCases; ++i) {
    RulesModel m = random_model(rng, shape);
    std::string text = write_rules(m, RulesFormat::classic_v1);
    RulesReadResult r = read_rules_text(text, RulesDialect::ompi_4_1);
    ASSERT_TRUE(r.loaded) << "case " << i << ": " << r.reason << "\n" << text;
    ASSERT_EQ(r.model, m) << "case " << i << "\n" << text;
    ASSERT_TRUE(r.trailing_text.empty());
    ASSERT_TRUE(r.strays.empty()) << text;
    // The same text is also a valid 4.1.8 / 5.0.7 file (no header: version 1).
    RulesReadResult v2 = read_rules_text(text, RulesDialect::ompi_v2);
    ASSERT_TRUE(v2.loaded);
    ASSERT_EQ(v2.model, m);
  }
}

TEST(RulesRoundTrip, ClassicV2IsIdentityFor418) {
  Rng rng(7);
  RandomModelShape shape;
  shape.canonical = false;
  shape.with_max_requests = true;
  for (int i = 0; i < kCases; ++i) {
    RulesModel m = random_model(rng, shape);
    std::string text = write_rules(m, RulesFormat::classic_v2);
    RulesReadResult r = read_rules_text(text, RulesDialect::ompi_v2);
    ASSERT_TRUE(r.loaded) << r.reason << "\n" << text;
    ASSERT_EQ(r.header_version, 2);
    ASSERT_EQ(r.model, m) << text;
    // main reads the classic v2 format too (not JSON).
    RulesReadResult main_read = read_rules_text(text, RulesDialect::ompi_main);
    ASSERT_TRUE(main_read.loaded);
    ASSERT_FALSE(main_read.json);
    ASSERT_EQ(main_read.model, m);
    // 4.1.4 must reject it (header): never deploy a v2 file there.
    ASSERT_FALSE(read_rules_text(text, RulesDialect::ompi_4_1).loaded);
  }
}

TEST(RulesRoundTrip, JsonIsIdentityForMainOnCanonicalModels) {
  Rng rng(99);
  RandomModelShape shape;
  shape.with_max_requests = true;
  shape.algorithms = &algorithm_table_main();
  for (int i = 0; i < kCases; ++i) {
    RulesModel m = random_model(rng, shape);
    std::string text = write_rules(m, RulesFormat::json);
    RulesReadResult r = read_rules_text(text, RulesDialect::ompi_main);
    ASSERT_TRUE(r.loaded) << r.reason << "\n" << text;
    ASSERT_TRUE(r.json);
    ASSERT_EQ(r.model, m) << text;
  }
}

TEST(RulesRoundTrip, JsonKeepsThe41MeaningWhenTheFirstBlockIsAFloor) {
  // First comm size above 2: JSON cannot floor, so the writer starts the range at 2. The model
  // read back differs in that number but selects the same rules for every P >= 2.
  Rng rng(5);
  RandomModelShape shape;
  shape.algorithms = &algorithm_table_main();
  for (int i = 0; i < 200; ++i) {
    RulesModel m = random_model(rng, shape);
    for (auto& c : m.collectives)
      for (auto& b : c.blocks) b.comm_size += 3;  // still ascending, first block > 2
    RulesModel back = parse_rules(write_rules(m, RulesFormat::json), RulesDialect::ompi_main);
    for (const auto& c : m.collectives)
      for (int p : {2, 3, 4, 5, 7, 8, 63, 64, 65, 1000, 4099})
        for (std::int64_t key : {0LL, 1LL, 1000LL, 65536LL, 1LL << 30}) {
          auto a = lookup_rule(m, c.collective_id, p, key);
          auto b = lookup_rule(back, c.collective_id, p, key);
          MessageRule ra = a ? a->rule : MessageRule{};
          MessageRule rb = b ? b->rule : MessageRule{};
          ra.msg_size = rb.msg_size = 0;
          ASSERT_EQ(ra, rb) << "coll " << c.collective_id << " P " << p << " key " << key;
        }
  }
}

TEST(RulesRoundTrip, WritersRefuseWhatTheyCannotExpress) {
  RulesModel with_requests{{CollectiveRules{3, {{2, {{0, 4, 0, 0, 8}}}}}}};
  EXPECT_THROW(write_rules(with_requests, RulesFormat::classic_v1), std::invalid_argument);
  EXPECT_NO_THROW(write_rules(with_requests, RulesFormat::classic_v2));
  RulesModel negative{{CollectiveRules{7, {{2, {{0, -1}}}}}}};
  EXPECT_THROW(write_rules(negative, RulesFormat::classic_v1), std::invalid_argument);
  RulesModel unordered{{CollectiveRules{7, {{8, {{0, 1}}}, {4, {{0, 1}}}}}}};
  EXPECT_NO_THROW(write_rules(unordered, RulesFormat::classic_v1));
  EXPECT_THROW(write_rules(unordered, RulesFormat::json), std::invalid_argument);
  RulesModel twice{{CollectiveRules{7, {}}, CollectiveRules{7, {}}}};
  EXPECT_THROW(write_rules(twice, RulesFormat::json), std::invalid_argument);
}

TEST(RulesWriter, ClassicLooksLikeWhatAdminsExpect) {
  RulesModel m{{CollectiveRules{7, {{2, {{0, 0}}}, {64, {{0, 0}, {4096, 6, 0, 8192}}}}}}};
  RulesWriteOptions options;
  options.comment_lines = {"campaign 12\nsecond line"};
  std::string text = write_rules(m, RulesFormat::classic_v1, options);
  EXPECT_EQ(text.find("rule-file-version"), std::string::npos);
  EXPECT_NE(text.find("# campaign 12 second line\n"), std::string::npos);
  EXPECT_NE(text.find("4096 6 0 8192"), std::string::npos);
  EXPECT_NE(text.find("binomial, segments of 8 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("communicators of 2-63 ranks"), std::string::npos) << text;
  std::string v2 = write_rules(m, RulesFormat::classic_v2);
  EXPECT_EQ(v2.rfind("rule-file-version-2\n", 0), 0u);
  EXPECT_NE(v2.find("4096 6 0 8192 0"), std::string::npos);
}

TEST(RulesWriter, FormatForVersion) {
  EXPECT_EQ(rules_format_for({4, 1, 4}), RulesFormat::classic_v1);
  EXPECT_EQ(rules_format_for({4, 1, 8}), RulesFormat::classic_v2);
  EXPECT_EQ(rules_format_for({5, 0, 3}), RulesFormat::classic_v1);
  EXPECT_EQ(rules_format_for({5, 0, 7}), RulesFormat::classic_v2);
  EXPECT_EQ(rules_format_for({6, 0, 0}), RulesFormat::json);
  EXPECT_EQ(parse_rules_format("v2"), RulesFormat::classic_v2);
  EXPECT_FALSE(parse_rules_format("xml"));
}

TEST(RulesWriter, HumanBytes) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(4096), "4 KiB");
  EXPECT_EQ(human_bytes(1536), "1536 B");
  EXPECT_EQ(human_bytes(3LL << 30), "3 GiB");
}

}  // namespace
}  // namespace colltune
