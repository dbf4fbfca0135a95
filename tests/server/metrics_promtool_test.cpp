// /metrics of a running daemon (in process, real HTTP, simulated backend) passes
// `promtool check metrics` (Debian's prometheus package): every family has # HELP and # TYPE,
// names and values are well formed. It also carries the build info, the deployed rules version,
// the last sentinel verdict and the last re-tune time, and every campaign state even at 0.
#include <gtest/gtest.h>

#include <cstring>
#include <regex>
#include <set>
#include <sstream>

#include "core/version.h"
#include "runner/process.h"
#include "tests/server/daemon_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

std::string metrics_text(httplib::Client& client) {
  auto res = client.Get("/metrics");
  EXPECT_TRUE(res);
  if (!res) return {};
  EXPECT_EQ(res->status, 200);
  return res->body;
}

// promtool's verdict on `text`: its exit code and what it printed.
std::pair<int, std::string> promtool_check(const std::string& text) {
  ProcessOptions options;
  options.stdin_text = text;
  options.timeout_s = 60;
  const auto r = run_process({"promtool", "check", "metrics"}, options);
  EXPECT_TRUE(r.spawn_error.empty()) << "promtool (scripts/install-deps build): " << r.spawn_error;
  return {r.exit_code, r.stdout_text + r.stderr_text};
}

double sample(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(MetricsPromtool, FreshDaemonPassesAndShowsZeroStatesAndNoVerdict) {
  InProcessDaemon d;
  auto client = d.client();
  const std::string m = metrics_text(client);
  const auto [rc, out] = promtool_check(m);
  EXPECT_EQ(rc, 0) << out << "\n" << m;
  EXPECT_TRUE(out.empty()) << "promtool lint: " << out;
  for (const char* state : {"queued", "running", "paused", "done", "failed", "cancelled"})
    EXPECT_EQ(sample(m, std::string("colltune_campaigns{state=\"") + state + "\"}"), 0) << state;
  for (const char* state : {"submitting", "running", "done", "cancelled"})
    EXPECT_EQ(sample(m, std::string("colltune_jobs{state=\"") + state + "\"}"), 0) << state;
  EXPECT_EQ(sample(m, "colltune_jobs{state=\"failed\"}"), -1) << "no job is ever failed";
  EXPECT_EQ(sample(m, "colltune_runs{outcome=\"timeout\"}"), 0);
  EXPECT_NE(m.find("colltune_build_info{version=\"" + std::string(kColltuneVersion) + "\""),
            std::string::npos)
      << m;
  EXPECT_EQ(sample(m, "colltune_rules_deployed_version"), 0);
  EXPECT_EQ(sample(m, "colltune_sentinel_last_verdict{verdict=\"none\"}"), 1);
  EXPECT_EQ(sample(m, "colltune_retune_last_timestamp_seconds"), 0);
}

TEST(MetricsPromtool, EveryFamilyHasHelpAndType) {
  InProcessDaemon d;
  auto client = d.client();
  client.Get("/api/v1/campaigns");  // a request histogram, the gate's gauges
  const std::string m = metrics_text(client);
  std::set<std::string> help, type, families;
  std::istringstream in(m);
  std::string line;
  const std::regex sample_re(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? \S+$)");
  while (std::getline(in, line)) {
    std::smatch match;
    if (line.rfind("# HELP ", 0) == 0) {
      help.insert(line.substr(7, line.find(' ', 7) - 7));
    } else if (line.rfind("# TYPE ", 0) == 0) {
      type.insert(line.substr(7, line.find(' ', 7) - 7));
    } else if (std::regex_match(line, match, sample_re)) {
      std::string name = match[1];
      for (const char* suffix : {"_bucket", "_sum", "_count"})
        if (!type.count(name) && name.size() > std::strlen(suffix) &&
            name.compare(name.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
          name.resize(name.size() - std::strlen(suffix));
      families.insert(name);
    } else {
      ADD_FAILURE() << "not a metrics line: " << line;
    }
  }
  EXPECT_GT(families.size(), 15u);
  for (const auto& f : families) {
    EXPECT_TRUE(help.count(f)) << f << " has no # HELP";
    EXPECT_TRUE(type.count(f)) << f << " has no # TYPE";
  }
  EXPECT_TRUE(families.count("colltune_http_connections_open")) << m;
  // Totals since the start are counters (a gauge would make rate() and resets meaningless);
  // what is true "now" stays a gauge.
  for (const char* counter :
       {"colltune_http_connections_accepted_total", "colltune_http_connections_refused_total",
        "colltune_http_head_timeouts_total", "colltune_http_bad_heads_total"})
    EXPECT_NE(m.find(std::string("# TYPE ") + counter + " counter\n"), std::string::npos)
        << counter << "\n"
        << m;
  EXPECT_NE(m.find("# TYPE colltune_http_connections_open gauge\n"), std::string::npos) << m;
}

TEST(MetricsPromtool, SentinelVerdictRetuneAndDeployShowUp) {
  InProcessDaemon d;
  auto client = d.client();
  auto res = client.Post("/api/v1/campaigns", sim_campaign_spec(4).dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const auto id = json::parse(res->body).at("id").get<std::int64_t>();
  wait_for_state(client, id, {"done", "failed"});

  // A report without its verdict is refused; a real one is kept.
  res = client.Post("/api/v1/sentinel/reports", R"({"cells": []})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
  res = client.Post("/api/v1/sentinel/reports", R"({"regression": true, "cells": []})",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
  std::string m = metrics_text(client);
  EXPECT_EQ(sample(m, "colltune_sentinel_last_verdict{verdict=\"regression\"}"), 1) << m;
  EXPECT_EQ(sample(m, "colltune_sentinel_last_verdict{verdict=\"ok\"}"), 0);
  EXPECT_GT(sample(m, "colltune_sentinel_last_report_timestamp_seconds"), 1e9);
  res = client.Post("/api/v1/sentinel/reports", R"({"regression": false})", "application/json");
  ASSERT_TRUE(res);
  m = metrics_text(client);
  EXPECT_EQ(sample(m, "colltune_sentinel_last_verdict{verdict=\"ok\"}"), 1) << m;

  // A forced re-tune starts a campaign: its time shows.
  res = client.Post("/api/v1/retune", R"({"force": true, "reason": "test"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
  m = metrics_text(client);
  EXPECT_GT(sample(m, "colltune_retune_last_timestamp_seconds"), 1e9) << m;

  // A deployed rules version shows with its target.
  const auto versions = d.daemon().store().rules_versions(id);
  ASSERT_FALSE(versions.empty());
  d.daemon().store().set_rules_deployed(versions.front().id, "/etc/openmpi/colltune.conf");
  m = metrics_text(client);
  EXPECT_EQ(sample(m, "colltune_rules_deployed_version{target=\"/etc/openmpi/colltune.conf\"}"),
            static_cast<double>(versions.front().id))
      << m;
  const auto [rc, out] = promtool_check(m);
  EXPECT_EQ(rc, 0) << out << "\n" << m;
  EXPECT_TRUE(out.empty()) << "promtool lint: " << out;
}

}  // namespace
}  // namespace colltune::testing
