// End to end on the real thing: the `colltune serve` binary on a free loopback port, a campaign
// created over REST on the local backend (real mpirun, the bundled OSU-compatible benchmark),
// followed through Server-Sent Events to its end, then its report, rules file (validated and
// verified on the real Open MPI) and measurements downloaded.
#include <gtest/gtest.h>

#include <set>

#include "tests/server/daemon_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

TEST(DaemonEndToEnd, LocalCampaignOverRestFollowedBySse) {
  TempDir dir;
  const std::string config = dir / "colltune.json";
  write_json_file(config, {{"listen", "127.0.0.1:0"},
                           {"database", dir / "colltune.db"},
                           {"rules_dir", dir / "rules"},
                           {"backends", {{"local", {{"osu_dir", COLLTUNE_OSU_BENCH_DIR}}}}},
                           {"tokens", tokens_json()}});
  DaemonProcess daemon(COLLTUNE_BINARY, config, dir / "daemon.log");
  const std::string url = daemon.start();
  const auto started = std::chrono::steady_clock::now();

  httplib::Client admin(url);
  admin.set_default_headers({{"Authorization", std::string("Bearer ") + kAdminToken}});
  const json spec = {{"name", "e2e bcast"},
                     {"backend", "local"},
                     {"contexts", {{{"collective", "bcast"}, {"comm_size", 4}}}},
                     {"sizes", "4:4096"},
                     {"strategy", "random"},
                     {"budget", 4},
                     {"iterations", 20},
                     {"warmup", 2},
                     {"batch_size", 4},
                     {"final_candidates", 1},
                     {"final_repeats", 2},
                     {"seed", 5}};

  // Follow the stream from before the campaign exists.
  std::int64_t id = 0;
  std::thread creator([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto res = admin.Post("/api/v1/campaigns", spec.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 201) << res->body;
    auto c = json::parse(res->body);
    EXPECT_EQ(c.at("state"), "queued");
    id = c.at("id").get<std::int64_t>();
  });
  auto events = read_sse(url, "/api/v1/events", {{"Authorization", std::string("Bearer ") + kViewerToken}},
                         [](const SseEvent& e) {
                           return e.type == "campaign_state" &&
                                  (e.data["payload"]["state"] == "done" || e.data["payload"]["state"] == "failed");
                         },
                         std::chrono::seconds(150));
  creator.join();
  ASSERT_FALSE(events.empty());
  ASSERT_EQ(events.back().type, "campaign_state") << daemon.log();
  EXPECT_EQ(events.back().data["payload"]["state"], "done") << events.back().data.dump() << "\n" << daemon.log();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("[ figures  ] campaign over REST on the local backend: %.1f s, %zu events\n", seconds,
              events.size());

  std::map<std::string, int> counts;
  for (const auto& e : events) ++counts[e.type];
  EXPECT_GE(counts["run"], 4 + 4);  // search runs and final runs, at least
  EXPECT_GE(counts["job_started"], 2);
  EXPECT_GE(counts["new_best"], 1);
  EXPECT_EQ(counts["rules_version"], 1);

  // The report: every OSU size 4..4096, each with the default's and the pick's latency.
  auto report = json_of(admin.Get("/api/v1/campaigns/" + std::to_string(id) + "/report"));
  ASSERT_EQ(report.at("results").size(), 11u) << report.dump(2);
  for (const auto& r : report.at("results")) {
    EXPECT_TRUE(r.at("best_us").is_number());
    EXPECT_GT(r.at("best_us").get<double>(), 0);
  }
  EXPECT_EQ(report.at("campaign").at("state"), "done");

  // The rules file: loads in Open MPI (validation) and Open MPI ran what it says (verification).
  auto rules = json_of(admin.Get("/api/v1/campaigns/" + std::to_string(id) + "/rules"));
  EXPECT_TRUE(rules.at("validation").at("deployable").get<bool>()) << rules.dump(2);
  EXPECT_FALSE(rules.at("verification").at("skipped").get<bool>()) << rules.dump(2);
  EXPECT_TRUE(rules.at("verification").at("verified").get<bool>()) << rules.dump(2);
  auto text = admin.Get("/api/v1/campaigns/" + std::to_string(id) + "/rules?format=text");
  ASSERT_TRUE(text);
  EXPECT_FALSE(text->body.empty());

  // Deploy it into rules_dir.
  auto deploy = admin.Post("/api/v1/rules/" + rules.at("id").dump() + "/deploy", R"({"name":"bcast.conf"})",
                           "application/json");
  ASSERT_TRUE(deploy);
  EXPECT_EQ(deploy->status, 200) << deploy->body;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rules" / "bcast.conf"));

  // Measurements as CSV: a header and one line per (run, size).
  auto csv = admin.Get("/api/v1/campaigns/" + std::to_string(id) + "/measurements?format=csv");
  ASSERT_TRUE(csv);
  const auto lines = std::count(csv->body.begin(), csv->body.end(), '\n');
  EXPECT_GE(lines, 1 + 8 * 11);

  // The CLI client sees the same campaign.
  ASSERT_EQ(run_program({COLLTUNE_BINARY, "campaign", "show", "--server", url, "--token", kViewerToken,
                         std::to_string(id)},
                        dir / "show.json"),
            0);
  std::ifstream show(dir / "show.json");
  EXPECT_EQ(json::parse(show).at("state"), "done");

  EXPECT_EQ(WEXITSTATUS(daemon.stop(SIGTERM)), 0);
}

}  // namespace
}  // namespace colltune::testing
