// Re-tuning through the daemon and the cron command, on the simulated backend (no MPI): a
// campaign's rules version records the fingerprint of its backend; `colltune retune
// --if-changed` does nothing while the cluster (here: the sim profile) is unchanged, and starts
// a warm-started campaign with exit code 10 once it changed, naming the changed fields.
#include <gtest/gtest.h>

#include <fstream>

#include "runner/sim/cluster_profile.h"
#include "tests/server/daemon_test_support.h"
#include "tests/support/process_runner.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

struct CommandResult {
  int exit_code = -1;
  std::string output;
};

// Runs the colltune binary with `args`, stdout and stderr captured (stdout first).
CommandResult colltune(const std::vector<std::string>& args, const TempDir&) {
  std::vector<std::string> argv = {COLLTUNE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto p = testing::run_process(argv, {}, 600);
  CommandResult r;
  r.exit_code = p.exit_code;
  r.output = p.out + p.err;
  return r;
}

std::string write_profile(const TempDir& dir, const std::string& name,
                          double intra_bandwidth_scale) {
  json p = sim::load_profile("local").to_json();
  // Pinned, so the expected fingerprint diff below does not move when `local` is re-calibrated.
  p["intra_node"]["pieces"][0]["bandwidth_gbps"] = 0.6087;
  for (auto& piece : p["intra_node"]["pieces"])
    piece["bandwidth_gbps"] = piece["bandwidth_gbps"].get<double>() * intra_bandwidth_scale;
  const std::string path = dir / name;
  std::ofstream(path) << p.dump(1);
  return path;
}

json daemon_config(const TempDir& shared, const std::string& profile) {
  return {{"database", shared / "colltune.db"},
          {"rules_dir", shared / "rules"},
          {"backends", {{"sim", {{"noise", "none"}, {"profile", profile}}}}}};
}

TEST(RetuneHttp, CronCommandReTunesOnlyAfterTheClusterChanged) {
  TempDir shared;
  const std::string before = write_profile(shared, "before.json", 1.0);
  const std::string after = write_profile(shared, "after.json", 0.7);  // shared memory 30 % slower
  std::int64_t source = 0;
  {
    InProcessDaemon d(daemon_config(shared, before));
    auto client = d.client();
    auto created =
        json_of(client.Post("/api/v1/campaigns", sim_campaign_spec().dump(), "application/json"));
    source = created.at("id").get<std::int64_t>();
    ASSERT_EQ(wait_for_state(client, source, {"done", "failed"}).at("state"), "done");
    const auto versions =
        json_of(client.Get("/api/v1/rules?campaign_id=" + std::to_string(source)));
    ASSERT_EQ(versions.at("items").size(), 1u);
    const auto version = versions.at("items").at(0);
    ASSERT_TRUE(version.at("fingerprint").is_object()) << version.dump();
    EXPECT_EQ(version.at("fingerprint").at("model").at("backend"), "sim");
    auto deployed =
        client.Post("/api/v1/rules/" + std::to_string(version.at("id").get<int>()) + "/deploy",
                    R"({"name": "colltune-rules.conf", "force": true})", "application/json");
    ASSERT_TRUE(deployed);
    ASSERT_EQ(deployed->status, 200) << deployed->body;

    // The current fingerprint, as the API gives it, is the recorded one.
    const auto now = json_of(client.Get("/api/v1/fingerprint"));
    EXPECT_EQ(now.at("backend"), "sim");
    EXPECT_EQ(now.at("fingerprint").at("hash"), version.at("fingerprint").at("hash"));

    const auto same =
        colltune({"retune", "--if-changed", "--server", d.url(), "--token", kAdminToken}, shared);
    EXPECT_EQ(same.exit_code, 0) << same.output;
    EXPECT_NE(same.output.find("no relevant change"), std::string::npos) << same.output;
    // A viewer may look but not re-tune.
    const auto viewer =
        colltune({"retune", "--if-changed", "--server", d.url(), "--token", kViewerToken}, shared);
    EXPECT_EQ(viewer.exit_code, 1) << viewer.output;
    EXPECT_NE(viewer.output.find("403"), std::string::npos) << viewer.output;
  }

  // The same cluster with slower shared memory: a relevant change.
  InProcessDaemon d(daemon_config(shared, after));
  auto client = d.client();
  const auto dry = colltune(
      {"retune", "--if-changed", "--dry-run", "--server", d.url(), "--token", kAdminToken}, shared);
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("would re-tune"), std::string::npos) << dry.output;

  const auto changed =
      colltune({"retune", "--if-changed", "--server", d.url(), "--token", kAdminToken}, shared);
  EXPECT_EQ(changed.exit_code, 10) << changed.output;
  EXPECT_NE(
      changed.output.find("model.profile.intra_node.pieces.0.bandwidth_gbps: 0.6087 -> 0.426"),
      std::string::npos)
      << changed.output;
  EXPECT_NE(changed.output.find("started re-tuning campaign"), std::string::npos) << changed.output;

  const auto all = json_of(client.Get("/api/v1/campaigns"));
  std::int64_t retune_id = 0;
  for (const auto& c : all.at("items"))
    if (c.at("id") != source) retune_id = c.at("id").get<std::int64_t>();
  ASSERT_GT(retune_id, 0) << all.dump();
  const auto c = wait_for_state(client, retune_id, {"done", "failed"});
  EXPECT_EQ(c.at("state"), "done") << c.dump();
  EXPECT_EQ(c.at("spec").at("warm_start_from"), source);

  // Its rules wait for a deploy: the cron command does not start another campaign meanwhile.
  const auto waiting =
      colltune({"retune", "--if-changed", "--server", d.url(), "--token", kAdminToken}, shared);
  EXPECT_EQ(waiting.exit_code, 0) << waiting.output;
  EXPECT_NE(waiting.output.find("deploy it"), std::string::npos) << waiting.output;

  // The event stream recorded why.
  bool announced = false;
  for (const auto& e : d.daemon().store().events_after(0, 10000))
    if (e.type == "retune_started") {
      announced = true;
      EXPECT_EQ(e.payload.at("source_campaign_id"), source);
      EXPECT_FALSE(e.payload.at("changes").empty());
    }
  EXPECT_TRUE(announced);

  // Bad bodies are refused with a clear message.
  auto bad = client.Post("/api/v1/retune", R"({"max_age_days": "soon"})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("max_age_days"), std::string::npos);
}

}  // namespace
}  // namespace colltune::testing
