// `colltune campaign watch` prints the same progress lines as `colltune tune` (plain lines with
// ISO times when stdout is not a terminal), not raw events, and ends with the campaign even when
// it ended between the state check and the start of the event stream (replay from the start).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "runner/process.h"
#include "tests/server/daemon_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

TEST(CampaignWatch, ShowsProgressLinesAndEndsWithACampaignThatJustEnded) {
  InProcessDaemon d;
  auto client = d.client();
  auto res = client.Post("/api/v1/campaigns", sim_campaign_spec(4).dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const auto id = json::parse(res->body).at("id").get<std::int64_t>();
  wait_for_state(client, id, {"done"});
  // As if the watch asked while the campaign still ran: the state it reads is not an end.
  d.daemon().store().set_campaign_state(id, CampaignState::running, "");
  ProcessOptions options;
  options.env["COLLTUNE_TOKEN"] = kAdminToken;
  options.timeout_s = 60;
  const auto r = run_process(
      {COLLTUNE_BINARY, "campaign", "watch", std::to_string(id), "--server", d.url()}, options);
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_FALSE(r.timed_out) << "the watch must end with the campaign";
  const std::string& out = r.stdout_text;
  EXPECT_NE(out.find("[bcast P=8] search space"), std::string::npos) << out;
  EXPECT_NE(out.find("[bcast P=8] done:"), std::string::npos) << out;
  EXPECT_NE(out.find("campaign done"), std::string::npos) << out;
  EXPECT_EQ(out.find("{\""), std::string::npos) << "raw event JSON: " << out;
  static const std::regex line_re(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z \S.*)");
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    EXPECT_TRUE(std::regex_match(line, line_re)) << "not a timestamped line: " << line;
}

}  // namespace
}  // namespace colltune::testing
