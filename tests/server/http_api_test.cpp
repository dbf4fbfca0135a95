// The REST API end to end on an in-process daemon with the simulated backend: campaigns from
// creation to rules, paging, CSV, convergence, transitions, deploy/rollback, events, metrics.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "core/file_text.h"
#include "tests/server/daemon_test_support.h"
#include "tests/server/tls_test_cert.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

std::int64_t create_campaign(httplib::Client& client, const json& spec) {
  auto res = client.Post("/api/v1/campaigns", spec.dump(), "application/json");
  EXPECT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
  auto c = json::parse(res->body);
  EXPECT_TRUE(c.contains("id"));
  EXPECT_TRUE(c.contains("state"));
  return c.at("id").get<std::int64_t>();
}

TEST(HttpApi, HealthIsPublicAndReadsNeedAToken) {
  InProcessDaemon d;
  auto anonymous = d.client("");
  auto health = anonymous.Get("/api/v1/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body).at("status"), "ok");

  auto version = anonymous.Get("/api/v1/version");
  ASSERT_TRUE(version);
  EXPECT_EQ(version->status, 401);
  EXPECT_EQ(json::parse(version->body)["error"]["code"], "unauthorized");
  EXPECT_EQ(version->get_header_value("WWW-Authenticate"), "Bearer realm=\"colltune\"");

  auto viewer = d.client(kViewerToken);
  version = viewer.Get("/api/v1/version");
  ASSERT_TRUE(version);
  EXPECT_EQ(version->status, 200);
  EXPECT_EQ(json::parse(version->body).at("backends")[0].at("name"), "sim");
}

TEST(HttpApi, CampaignTheBackendCannotRunIsRefusedAtCreate) {
  // Issue 20 items 9 and 12: refused with the reason (400), nothing created.
  InProcessDaemon d;
  auto admin = d.client(kAdminToken);
  auto refused = [&](json spec, const std::string& text) {
    auto res = admin.Post("/api/v1/campaigns", spec.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << res->body;
    EXPECT_NE(res->body.find(text), std::string::npos) << res->body;
  };
  auto spec = sim_campaign_spec();
  spec["contexts"][0]["collective"] = "alltoall";
  refused(spec, "not alltoall");
  spec = sim_campaign_spec();
  spec["contexts"][0]["comm_size"] = 10000000;
  refused(spec, "MiB cap");
  spec = sim_campaign_spec();
  spec["warm_start_from"] = 4242;
  refused(spec, "warm_start_from: no campaign 4242");
  spec = sim_campaign_spec();
  spec["sizes"] = "+4:64";
  refused(spec, "sizes");
  auto list = admin.Get("/api/v1/campaigns");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->body.find("alltoall"), std::string::npos) << list->body;
}

TEST(HttpApi, AnonymousReadsOnlyWhenConfiguredFromLoopback) {
  InProcessDaemon d(json{{"anonymous_read", true}});
  auto anonymous = d.client("");
  auto res = anonymous.Get("/api/v1/campaigns");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  // Writes still need an admin token.
  res = anonymous.Post("/api/v1/campaigns", sim_campaign_spec().dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  // A wrong token is refused even where anonymous reads are allowed.
  auto wrong = d.client("not-a-valid-token-at-all");
  res = wrong.Get("/api/v1/campaigns");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
}

TEST(HttpApi, ViewerCannotMutate) {
  InProcessDaemon d;
  auto viewer = d.client(kViewerToken);
  auto res = viewer.Post("/api/v1/campaigns", sim_campaign_spec().dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "forbidden");
  EXPECT_EQ(d.daemon().store().count_campaigns(), 0);
}

TEST(HttpApi, CampaignRunsToRulesAndEveryViewAgrees) {
  InProcessDaemon d;
  auto client = d.client();
  const auto id = create_campaign(client, sim_campaign_spec(8));
  auto c = wait_for_state(client, id, {"done", "failed"});
  ASSERT_EQ(c.at("state"), "done") << c.dump();
  EXPECT_EQ(c.at("progress").at("contexts_done"), 1);

  // Report: one result per OSU size 4..4096.
  auto report = json_of(client.Get("/api/v1/campaigns/" + std::to_string(id) + "/report"));
  EXPECT_EQ(report.at("results").size(), 11u);
  EXPECT_GT(report.at("cost").at("runs").get<int>(), 8);

  // Measurements: paging covers every row once; CSV has the same rows.
  const auto total = d.daemon().store().count_measurements(id);
  ASSERT_GT(total, 0);
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  for (int offset = 0; offset < total; offset += 37) {
    auto page = json_of(client.Get("/api/v1/campaigns/" + std::to_string(id) +
                                   "/measurements?limit=37&offset=" + std::to_string(offset)));
    EXPECT_EQ(page.at("total"), total);
    for (const auto& m : page.at("items"))
      EXPECT_TRUE(
          seen.insert({m.at("run_id").get<std::int64_t>(), m.at("msg_size").get<std::int64_t>()})
              .second);
  }
  EXPECT_EQ(static_cast<std::int64_t>(seen.size()), total);
  auto csv = client.Get("/api/v1/campaigns/" + std::to_string(id) + "/measurements?format=csv");
  ASSERT_TRUE(csv);
  EXPECT_EQ(csv->status, 200);
  EXPECT_EQ(csv->get_header_value("Content-Type"), "text/csv; charset=utf-8");
  const auto lines = std::count(csv->body.begin(), csv->body.end(), '\n');
  EXPECT_EQ(lines, total + 1);
  EXPECT_EQ(csv->body.rfind("run_id,job_id,context_id,collective,comm_size,purpose,", 0), 0u);

  // Convergence: one point per search run, best-so-far never increases, default known.
  auto conv = json_of(client.Get("/api/v1/campaigns/" + std::to_string(id) + "/convergence"));
  const auto& ctx = conv.at("contexts").at(0);
  const auto search_runs =
      d.daemon().store().runs_of_context(ctx.at("context_id"), JobPurpose::search).size();
  EXPECT_EQ(ctx.at("evaluations").size(), search_runs);
  ASSERT_FALSE(ctx.at("sizes").empty());
  for (const auto& s : ctx.at("sizes")) {
    EXPECT_TRUE(s.at("default_us").is_number());
    double previous = 1e300;
    for (const auto& v : s.at("best_us")) {
      if (v.is_null()) continue;
      EXPECT_LE(v.get<double>(), previous);
      previous = v.get<double>();
    }
  }

  // Rules: stored as a version with its validation; text form is the file itself.
  auto rules = json_of(client.Get("/api/v1/campaigns/" + std::to_string(id) + "/rules"));
  EXPECT_TRUE(rules.at("validation").at("deployable").get<bool>()) << rules.dump();
  EXPECT_TRUE(rules.at("verification").at("skipped").get<bool>());  // sim: no real Open MPI
  auto text = client.Get("/api/v1/campaigns/" + std::to_string(id) + "/rules?format=text");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->body, rules.at("content").get<std::string>());

  // Contexts and jobs.
  auto contexts = json_of(client.Get("/api/v1/campaigns/" + std::to_string(id) + "/contexts"));
  EXPECT_EQ(contexts.at("items").size(), 1u);
  auto jobs = json_of(client.Get("/api/v1/campaigns/" + std::to_string(id) + "/jobs?limit=1"));
  EXPECT_EQ(jobs.at("items").size(), 1u);
  EXPECT_EQ(jobs.at("total"), d.daemon().store().jobs(id).size());
  auto all_jobs = json_of(client.Get("/api/v1/jobs?state=done&campaign_id=" + std::to_string(id)));
  EXPECT_EQ(all_jobs.at("total"), d.daemon().store().jobs(id).size());

  // A finished campaign cannot be paused or cancelled.
  auto res =
      client.Post("/api/v1/campaigns/" + std::to_string(id) + "/cancel", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "conflict");
}

TEST(HttpApi, ListFiltersAndPages) {
  InProcessDaemon d;
  auto client = d.client();
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(create_campaign(client, sim_campaign_spec(4, 10 + i)));
  for (auto id : ids) wait_for_state(client, id, {"done", "failed"});
  auto page = json_of(client.Get("/api/v1/campaigns?limit=2"));
  EXPECT_EQ(page.at("total"), 3);
  ASSERT_EQ(page.at("items").size(), 2u);
  EXPECT_EQ(page.at("items")[0].at("id"), ids[2]);  // newest first
  page = json_of(client.Get("/api/v1/campaigns?limit=2&offset=2"));
  ASSERT_EQ(page.at("items").size(), 1u);
  EXPECT_EQ(page.at("items")[0].at("id"), ids[0]);
  page = json_of(client.Get("/api/v1/campaigns?state=running"));
  EXPECT_EQ(page.at("total"), 0);
  page = json_of(client.Get("/api/v1/campaigns?state=done"));
  EXPECT_EQ(page.at("total"), 3);
}

TEST(HttpApi, PauseResumeAndCancelFollowTheStateMachine) {
  // A paced simulation so the campaign is still running when we pause it.
  InProcessDaemon d(json{{"backends", {{"sim", {{"noise", "none"}, {"pace", 0.1}}}}}});
  auto client = d.client();
  auto spec = sim_campaign_spec(40);
  const auto id = create_campaign(client, spec);
  wait_for_state(client, id, {"running"}, std::chrono::seconds(5));
  auto res =
      client.Post("/api/v1/campaigns/" + std::to_string(id) + "/pause", "", "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body).at("state"), "paused");
  const auto runs_at_pause = d.daemon().store().count_runs(id);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(d.daemon().store().count_runs(id), runs_at_pause);  // nothing runs while paused

  res = client.Post("/api/v1/campaigns/" + std::to_string(id) + "/pause", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);

  res = client.Post("/api/v1/campaigns/" + std::to_string(id) + "/resume", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  wait_for_state(client, id, {"running"}, std::chrono::seconds(5));
  res = client.Post("/api/v1/campaigns/" + std::to_string(id) + "/cancel", "", "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body).at("state"), "cancelled");
  for (const auto& job : d.daemon().store().jobs(id))
    EXPECT_TRUE(job.state == JobState::done || job.state == JobState::cancelled)
        << job.tag << " " << to_string(job.state);
  res = client.Post("/api/v1/campaigns/" + std::to_string(id) + "/resume", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
}

TEST(HttpApi, DeployWritesOnlyIntoRulesDirAndRollsBack) {
  InProcessDaemon d;
  auto client = d.client();
  const auto first = create_campaign(client, sim_campaign_spec(4, 21));
  wait_for_state(client, first, {"done", "failed"});
  const auto second = create_campaign(client, sim_campaign_spec(4, 22));
  wait_for_state(client, second, {"done", "failed"});
  auto versions = json_of(client.Get("/api/v1/rules"));
  ASSERT_EQ(versions.at("total"), 2);
  const auto v2 = versions.at("items")[0].at("id").get<std::int64_t>();
  const auto v1 = versions.at("items")[1].at("id").get<std::int64_t>();
  EXPECT_FALSE(versions.at("items")[0].contains("content"));

  const std::string target = d.dir() / "rules/tuned.conf";
  // Sim campaigns are not verified on the real Open MPI: refused unless forced (issue 17.5).
  auto res = client.Post("/api/v1/rules/" + std::to_string(v1) + "/deploy",
                         R"({"name":"tuned.conf"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409) << res->body;
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "not_verified");
  EXPECT_NE(res->body.find("sim backend does not run the real Open MPI"), std::string::npos)
      << res->body;
  EXPECT_FALSE(std::filesystem::exists(target));
  res = client.Post("/api/v1/rules/" + std::to_string(v1) + "/deploy",
                    R"({"name":"tuned.conf","force":"yes"})", "application/json");
  EXPECT_EQ(res->status, 400) << res->body;
  res = client.Post("/api/v1/rules/" + std::to_string(v1) + "/deploy",
                    R"({"name":"tuned.conf","force":true})", "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  {
    const auto answer = json::parse(res->body);
    EXPECT_NE(answer.at("forced").get<std::string>().find("not verified"), std::string::npos);
    const auto snippet = answer.at("mca_snippet");
    EXPECT_TRUE(snippet.at("detected").get<bool>()) << snippet.dump();
    EXPECT_EQ(snippet.at("params_file"), "/etc/openmpi/openmpi-mca-params.conf");
    EXPECT_NE(
        snippet.at("text").get<std::string>().find("coll_tuned_dynamic_rules_filename = " + target),
        std::string::npos);
  }
  EXPECT_EQ(read_file_text(target).value_or(""), d.daemon().store().rules_version(v1)->content);
  res = client.Post("/api/v1/rules/" + std::to_string(v2) + "/deploy",
                    R"({"name":"tuned.conf","force":true})", "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(read_file_text(target).value_or(""), d.daemon().store().rules_version(v2)->content);
  EXPECT_EQ(d.daemon().store().rules_version(v2)->deployed_to, target);
  EXPECT_EQ(d.daemon().store().rules_version(v1)->deployed_to, "");

  res = client.Post("/api/v1/rules/rollback", R"({"name":"tuned.conf"})", "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body).at("rules_version_id"), v1);
  EXPECT_EQ(read_file_text(target).value_or(""), d.daemon().store().rules_version(v1)->content);
  EXPECT_EQ(d.daemon().store().rules_version(v1)->deployed_to, target);
  EXPECT_EQ(d.daemon().store().rules_version(v2)->deployed_to, "");

  // Back past the first deploy: the file did not exist, so it is removed; then nothing left.
  res = client.Post("/api/v1/rules/rollback", R"({"name":"tuned.conf"})", "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_FALSE(std::filesystem::exists(target));
  res = client.Post("/api/v1/rules/rollback", R"({"name":"tuned.conf"})", "application/json");
  EXPECT_EQ(res->status, 409);

  // Default name.
  res = client.Post("/api/v1/rules/" + std::to_string(v1) + "/deploy", R"({"force":true})",
                    "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_TRUE(std::filesystem::exists(d.dir() / "rules/colltune-rules.conf"));
}

TEST(HttpApi, DeployIsRefusedWithoutRulesDir) {
  InProcessDaemon d(json{{"rules_dir", ""}});
  auto client = d.client();
  const auto id = create_campaign(client, sim_campaign_spec(4));
  wait_for_state(client, id, {"done", "failed"});
  auto versions = json_of(client.Get("/api/v1/rules?campaign_id=" + std::to_string(id)));
  ASSERT_EQ(versions.at("total"), 1);
  auto res = client.Post("/api/v1/rules/" + versions["items"][0]["id"].dump() + "/deploy", "{}",
                         "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
  EXPECT_NE(json::parse(res->body)["error"]["message"].get<std::string>().find("rules_dir"),
            std::string::npos);
}

TEST(HttpApi, EventsStreamLiveAndResumeFromLastEventId) {
  InProcessDaemon d;
  auto client = d.client();
  const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kViewerToken}};
  std::int64_t id = 0;
  // Start following before the campaign exists; create it from another thread.
  std::thread creator([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto c = d.client();
    id = create_campaign(c, sim_campaign_spec(6));
  });
  auto events = read_sse(
      d.url(), "/api/v1/events", auth,
      [](const SseEvent& e) {
        return e.type == "campaign_state" && e.data["payload"]["state"] == "done";
      },
      std::chrono::seconds(60));
  creator.join();
  std::set<std::string> types;
  std::vector<std::int64_t> ids;
  for (const auto& e : events) {
    types.insert(e.type);
    if (!e.id.empty()) ids.push_back(std::stoll(e.id));
  }
  for (const char* t : {"campaign_created", "campaign_state", "context_started", "job_started",
                        "run", "job_done", "context_done", "new_best", "rules_version"})
    EXPECT_TRUE(types.count(t)) << "no " << t << " event";
  ASSERT_GT(ids.size(), 5u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::set<std::int64_t>(ids.begin(), ids.end()).size(), ids.size());
  for (const auto& e : events) {
    if (e.type == "run") {
      EXPECT_TRUE(e.id.empty());  // transient: no id
    }
  }

  // Resume after the fifth durable event: exactly the later durable ones come back, in order.
  httplib::Headers resume = auth;
  resume.emplace("Last-Event-ID", std::to_string(ids[4]));
  const auto last = ids.back();
  auto replayed = read_sse(
      d.url(), "/api/v1/events?campaign_id=" + std::to_string(id), resume,
      [&](const SseEvent& e) { return !e.id.empty() && std::stoll(e.id) >= last; },
      std::chrono::seconds(10));
  std::vector<std::int64_t> replayed_ids;
  for (const auto& e : replayed)
    if (!e.id.empty()) replayed_ids.push_back(std::stoll(e.id));
  std::vector<std::int64_t> expected(ids.begin() + 5, ids.end());
  EXPECT_EQ(replayed_ids, expected);
}

TEST(HttpApi, MetricsExposeStateCountsAndLatency) {
  InProcessDaemon d;
  auto client = d.client();
  const auto id = create_campaign(client, sim_campaign_spec(4));
  wait_for_state(client, id, {"done", "failed"});
  client.Get("/api/v1/campaigns");
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const auto& m = res->body;
  EXPECT_NE(m.find("colltune_campaigns{state=\"done\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("colltune_jobs{state=\"done\"}"), std::string::npos);
  EXPECT_NE(m.find("colltune_runs{outcome=\"ok\"}"), std::string::npos);
  EXPECT_NE(
      m.find("colltune_measurements " + std::to_string(d.daemon().store().count_measurements(0))),
      std::string::npos);
  EXPECT_NE(m.find("colltune_http_request_duration_seconds_bucket{method=\"GET\",route=\"/api/v1/"
                   "campaigns\",le=\"+Inf\"}"),
            std::string::npos);
  EXPECT_NE(m.find("colltune_optimizer_decision_seconds_count "), std::string::npos);
  EXPECT_EQ(m.find("colltune_optimizer_decision_seconds_count 0\n"), std::string::npos);
}

TEST(HttpApi, UnknownRoutesAndMethodsAnswerJson) {
  InProcessDaemon d;
  auto client = d.client();
  auto res = client.Get("/api/v1/nothing-here");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "not_found");
  res = client.Delete("/api/v1/campaigns");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "GET, POST");
  res = client.Get("/api/v1/campaigns/12345");
  EXPECT_EQ(res->status, 404);
  EXPECT_NE(json::parse(res->body)["error"]["message"].get<std::string>().find("12345"),
            std::string::npos);
}

TEST(HttpApi, CampaignsLeftRunningResumeWhenTheDaemonStartsAgain) {
  TempDir dir;
  json config = {{"listen", "127.0.0.1:0"},
                 {"database", dir / "colltune.db"},
                 {"backends", {{"sim", {{"noise", "none"}, {"pace", 0.1}}}}},
                 {"tokens", tokens_json()}};
  std::int64_t id = 0;
  std::int64_t runs_before = 0;
  {
    Daemon daemon(parse_daemon_config(config));
    daemon.start();
    httplib::Client client(daemon.url());
    client.set_default_headers({{"Authorization", std::string("Bearer ") + kAdminToken}});
    id = create_campaign(client, sim_campaign_spec(12));
    wait_for_state(client, id, {"running"}, std::chrono::seconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    daemon.stop();  // a clean stop: the campaign stays "running"
    EXPECT_EQ(daemon.store().campaign(id)->state, CampaignState::running);
    runs_before = daemon.store().count_runs(id);
  }
  config["backends"] = {{"sim", {{"noise", "none"}}}};
  Daemon daemon(parse_daemon_config(config));
  daemon.start();
  httplib::Client client(daemon.url());
  client.set_default_headers({{"Authorization", std::string("Bearer ") + kAdminToken}});
  auto c = wait_for_state(client, id, {"done", "failed"});
  EXPECT_EQ(c.at("state"), "done") << c.dump();
  EXPECT_GE(daemon.store().count_runs(id), runs_before);
}

TEST(HttpApi, ServesHttpsWhenACertificateIsConfigured) {
  TempDir certs;
  const std::string cert = certs / "cert.pem";
  const std::string key = certs / "key.pem";
  write_self_signed(cert, key);
  InProcessDaemon d(json{{"tls_cert", cert}, {"tls_key", key}});
  ASSERT_EQ(d.url().rfind("https://127.0.0.1:", 0), 0u);
  httplib::SSLClient tls("127.0.0.1", d.daemon().port());
  tls.set_ca_cert_path(cert.c_str());
  tls.enable_server_certificate_verification(true);
  tls.set_default_headers({{"Authorization", std::string("Bearer ") + kViewerToken}});
  auto res = tls.Get("/api/v1/version");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(json::parse(res->body).at("tls").get<bool>());
  // Plain HTTP on the TLS port gets nowhere.
  httplib::Client plain("http://127.0.0.1:" + std::to_string(d.daemon().port()));
  plain.set_read_timeout(3);
  auto clear = plain.Get("/api/v1/health");
  EXPECT_TRUE(!clear || clear->status != 200);
}

TEST(HttpApi, BadCertificateFailsAtStart) {
  TempDir dir;
  const std::string bogus = dir / "bogus.pem";
  std::ofstream(bogus) << "not a certificate\n";
  json config = {{"listen", "127.0.0.1:0"},
                 {"database", dir / "db"},
                 {"backends", {{"sim", json::object()}}},
                 {"tls_cert", bogus},
                 {"tls_key", bogus}};
  Daemon daemon(parse_daemon_config(config));
  EXPECT_THROW(daemon.start(), std::runtime_error);
}

TEST(HttpApi, BusyPortFailsAtStart) {
  InProcessDaemon first;
  TempDir dir;
  json config = {{"listen", "127.0.0.1:" + std::to_string(first.daemon().port())},
                 {"database", dir / "db"},
                 {"backends", {{"sim", json::object()}}}};
  Daemon second(parse_daemon_config(config));
  EXPECT_THROW(second.start(), std::runtime_error);
}

}  // namespace
}  // namespace colltune::testing
