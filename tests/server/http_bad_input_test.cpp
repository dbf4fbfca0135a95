// Malformed and hostile requests: each gets a 4xx with a JSON error naming the problem, and
// none changes the store or writes a file.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <regex>

#include "tests/server/daemon_test_support.h"
#include "tests/server/raw_http.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

class HttpBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    auto client = daemon_.client();
    // One finished campaign with a rules version, so that ids 1 exist.
    auto res = client.Post("/api/v1/campaigns", sim_campaign_spec(4).dump(), "application/json");
    ASSERT_EQ(res->status, 201);
    wait_for_state(client, 1, {"done", "failed"});
    before_ = snapshot();
  }

  void TearDown() override {
    EXPECT_EQ(snapshot(), before_) << "a rejected request changed the store or rules_dir";
  }

  // Everything a request could change: store tables and the files under the test folder.
  json snapshot() {
    auto& store = daemon_.daemon().store();
    json s;
    s["campaigns"] = store.count_campaigns();
    s["jobs"] = store.count_jobs(std::nullopt, 0);
    s["measurements"] = store.count_measurements(0);
    s["rules"] = store.rules_versions().size();
    json states = json::array();
    for (const auto& c : store.campaigns())
      states.push_back({c.id, to_string(c.state), c.updated_at});
    s["states"] = states;
    json deployed = json::array();
    for (const auto& r : store.rules_versions()) deployed.push_back(r.deployed_to);
    s["deployed"] = deployed;
    json files = json::array();
    for (const auto& entry : std::filesystem::recursive_directory_iterator(daemon_.dir().path()))
      if (entry.path().string().find("colltune.db") == std::string::npos)
        files.push_back(entry.path().string());
    s["files"] = files;
    return s;
  }

  // Sends and checks: a 4xx JSON error whose message contains `needle`.
  void expect_error(const httplib::Result& res, int status, const std::string& needle) {
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, status) << res->body;
    auto body = json::parse(res->body, nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << "not JSON: " << res->body;
    ASSERT_TRUE(body.contains("error")) << res->body;
    EXPECT_TRUE(body["error"]["code"].is_string());
    const auto message = body["error"]["message"].get<std::string>();
    EXPECT_NE(message.find(needle), std::string::npos)
        << "message '" << message << "' lacks '" << needle << "'";
  }

  httplib::Result post(const std::string& path, const std::string& body,
                       const std::string& type = "application/json",
                       const char* token = kAdminToken) {
    auto client = daemon_.client(token);
    return client.Post(path, body, type);
  }

  InProcessDaemon daemon_;
  json before_;
};

TEST_F(HttpBadInput, MalformedJson) {
  expect_error(post("/api/v1/campaigns", "{\"backend\": \"sim\","), 400, "invalid JSON");
  expect_error(post("/api/v1/campaigns", "[1, 2, 3]"), 400, "must be a JSON object");
  expect_error(post("/api/v1/campaigns", "\"just a string\""), 400, "must be a JSON object");
  expect_error(post("/api/v1/campaigns", ""), 400, "body is required");
  expect_error(post("/api/v1/campaigns", std::string("{\"name\": \"\xff\xfe\"}")), 400,
               "invalid JSON");
  expect_error(post("/api/v1/campaigns", std::string(20000, '[') + std::string(20000, ']')), 400,
               "nested deeper");
}

TEST_F(HttpBadInput, WrongTypesRangesAndUnknownFields) {
  auto spec = sim_campaign_spec();
  auto with = [&](const std::string& key, const json& value) {
    auto s = spec;
    s[key] = value;
    return s.dump();
  };
  expect_error(post("/api/v1/campaigns", with("budget", "10")), 400, "budget");
  expect_error(post("/api/v1/campaigns", with("budget", -1)), 400, "budget");
  expect_error(post("/api/v1/campaigns", with("repeats", 1e9)), 400, "repeats");
  expect_error(post("/api/v1/campaigns", with("seed", -5)), 400, "seed");
  expect_error(post("/api/v1/campaigns", with("sizes", "1:99G")), 400, "sizes");
  expect_error(post("/api/v1/campaigns", with("sizes", 1024)), 400, "sizes");
  expect_error(post("/api/v1/campaigns", with("evil", true)), 400, "evil");
  expect_error(post("/api/v1/campaigns", with("strategy", "gradient-descent")), 400, "strategy");
  expect_error(post("/api/v1/campaigns", with("backend", "slurm")), 400, "not configured");
  expect_error(post("/api/v1/campaigns", with("contexts", json::array())), 400, "contexts");
  expect_error(post("/api/v1/campaigns",
                    with("contexts", json::array({{{"collective", "bcast"}, {"comm_size", 1}}}))),
               400, "comm_size");
  expect_error(
      post("/api/v1/campaigns",
           with("contexts", json::array({{{"collective", "bcast"}, {"comm_size", 8}, {"x", 1}}}))),
      400, "contexts[0].x");
  expect_error(post("/api/v1/campaigns", with("name", std::string(5000, 'n'))), 400, "name");
  auto no_backend = spec;
  no_backend.erase("backend");
  expect_error(post("/api/v1/campaigns", no_backend.dump()), 400, "backend");
  json too_many = json::array();
  for (int i = 0; i < 1001; ++i)
    too_many.push_back({{"collective", "bcast"}, {"comm_size", 2 + i}});
  expect_error(post("/api/v1/campaigns", with("contexts", too_many)), 400, "contexts");
}

TEST_F(HttpBadInput, ShellMetacharactersNeverRun) {
  const std::string marker = daemon_.dir() / "pwned";
  auto spec = sim_campaign_spec();
  spec["backend"] = "sim;touch " + marker;
  expect_error(post("/api/v1/campaigns", spec.dump()), 400, "backend");
  spec = sim_campaign_spec();
  spec["contexts"][0]["collective"] = "bcast$(touch " + marker + ")";
  expect_error(post("/api/v1/campaigns", spec.dump()), 400, "collective");
  spec = sim_campaign_spec();
  spec["sizes"] = "4:`touch " + marker + "`";
  expect_error(post("/api/v1/campaigns", spec.dump()), 400, "sizes");
  expect_error(post("/api/v1/rules/1/deploy", json{{"name", "x;touch " + marker}}.dump()), 400,
               "name");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(HttpBadInput, HugeBodiesAreRefused) {
  // A body above the limit: discarded unparsed (httplib reads past it to keep the connection
  // in sync) and refused.
  const std::string answer = raw_exchange(
      daemon_.daemon().port(),
      std::string("POST /api/v1/campaigns HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") +
          kAdminToken +
          "\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\nConnection: "
          "close\r\n\r\n" +
          std::string(2097152, '{'));
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
  const auto body = json::parse(answer.substr(answer.find("\r\n\r\n") + 4));
  EXPECT_EQ(body["error"]["code"], "payload_too_large");
  EXPECT_NE(body["error"]["message"].get<std::string>().find("larger than 1048576"),
            std::string::npos);

  // A chunked body without Content-Length: refused once past the limit (httplib answers 400
  // here; the client may also see the connection closed while still sending).
  auto client = daemon_.client();
  std::size_t sent = 0;
  auto res = client.Post(
      "/api/v1/campaigns",
      [&](std::size_t, httplib::DataSink& sink) {
        const std::string chunk(64 << 10, 'b');
        if (sent >= (3u << 20)) {
          sink.done();
          return true;
        }
        sent += chunk.size();
        return sink.write(chunk.data(), chunk.size());
      },
      "application/json");
  if (res) {
    EXPECT_TRUE(res->status == 413 || res->status == 400) << res->status;
  }
}

TEST_F(HttpBadInput, WrongContentType) {
  expect_error(post("/api/v1/campaigns", sim_campaign_spec().dump(), "text/plain"), 415,
               "application/json");
  expect_error(
      post("/api/v1/campaigns", sim_campaign_spec().dump(), "application/x-www-form-urlencoded"),
      415, "application/json");
}

TEST_F(HttpBadInput, PathTraversalGoesNowhere) {
  auto client = daemon_.client();
  for (const char* path :
       {"/api/v1/campaigns/../../../etc/passwd", "/api/v1/campaigns/1%2F..%2F..%2Fetc%2Fpasswd",
        "/api/v1/campaigns/..%2f..%2fetc", "/api/v1/rules/%2e%2e/deploy", "/api/v1/campaigns/-1",
        "/api/v1/campaigns/0", "/api/v1/campaigns/1e3", "/api/v1/campaigns/99999999999999999999",
        "/api/v1/campaigns/1/report/../../x"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_TRUE(res->status == 404 || res->status == 400) << path << " -> " << res->status;
    EXPECT_FALSE(json::parse(res->body, nullptr, false).is_discarded()) << path;
    EXPECT_EQ(res->body.find("root:"), std::string::npos) << path;
  }
  for (const char* name : {"../escape.conf", "../../etc/passwd", "/etc/passwd", "a/b.conf",
                           ".hidden", "..", "x.history", "", "name with space", "tab\tname"}) {
    expect_error(post("/api/v1/rules/1/deploy", json{{"name", name}}.dump()), 400, "name");
    expect_error(post("/api/v1/rules/rollback", json{{"name", name}}.dump()), 400, "name");
  }
  expect_error(post("/api/v1/rules/1/deploy", json{{"name", 42}}.dump()), 400, "name");
  expect_error(post("/api/v1/rules/1/deploy", json{{"name", "ok.conf"}, {"path", "/etc"}}.dump()),
               400, "path");
  EXPECT_FALSE(std::filesystem::exists(daemon_.dir().path() / "escape.conf"));
}

TEST_F(HttpBadInput, SymlinkPlantedInRulesDirIsNotFollowed) {
  const auto outside = daemon_.dir().path() / "outside.conf";
  const auto link = daemon_.dir().path() / "rules" / "linked.conf";
  { std::ofstream(outside) << "precious\n"; }
  std::filesystem::create_symlink(outside, link);
  before_ = snapshot();
  expect_error(post("/api/v1/rules/1/deploy", R"({"name":"linked.conf"})"), 409, "symbolic link");
  std::ifstream in(outside);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "precious");
}

TEST_F(HttpBadInput, MissingAndInvalidTokens) {
  expect_error(post("/api/v1/campaigns", sim_campaign_spec().dump(), "application/json", ""), 401,
               "token");
  expect_error(post("/api/v1/campaigns", sim_campaign_spec().dump(), "application/json",
                    "wrong-token-xxxxxxxxxx"),
               401, "invalid token");
  expect_error(
      post("/api/v1/campaigns", sim_campaign_spec().dump(), "application/json", kViewerToken), 403,
      "admin");
  expect_error(post("/api/v1/campaigns/1/cancel", "", "application/json", kViewerToken), 403,
               "admin");
  expect_error(post("/api/v1/rules/1/deploy", "{}", "application/json", kViewerToken), 403,
               "admin");
  httplib::Client raw(daemon_.url());
  for (const char* header : {"Basic YWRtaW46YWRtaW4=", "Bearer", "Bearer  ", "bearer\ttoken",
                             "Token abc", "Bearer a b c", "Bearer <script>"}) {
    auto res = raw.Get("/api/v1/campaigns", {{"Authorization", header}});
    expect_error(res, 401, "");
  }
  auto res = raw.Get("/api/v1/campaigns", {{"Authorization", "Bearer " + std::string(600, 'a')}});
  expect_error(res, 401, "Authorization");
}

TEST_F(HttpBadInput, BadQueryParameters) {
  auto client = daemon_.client(kViewerToken);
  expect_error(client.Get("/api/v1/campaigns?limit=-1"), 400, "limit");
  expect_error(client.Get("/api/v1/campaigns?limit=abc"), 400, "limit");
  expect_error(client.Get("/api/v1/campaigns?limit=0"), 400, "limit");
  expect_error(client.Get("/api/v1/campaigns?limit=99999999999999999999999"), 400, "limit");
  expect_error(client.Get("/api/v1/campaigns?offset=1.5"), 400, "offset");
  expect_error(client.Get("/api/v1/campaigns?state=bogus"), 400, "state");
  // A job whose runs failed is done: "failed" names no job state (it read as an empty page).
  expect_error(client.Get("/api/v1/jobs?state=failed"), 400, "cancelled");
  expect_error(client.Get("/api/v1/campaigns/1/jobs?state=failed"), 400, "state");
  expect_error(client.Get("/api/v1/campaigns?state=done&state=failed"), 400, "twice");
  expect_error(client.Get("/api/v1/campaigns?sort=id"), 400, "sort");
  expect_error(client.Get("/api/v1/campaigns/1/measurements?format=xml"), 400, "format");
  expect_error(client.Get("/api/v1/campaigns?state=" + std::string(300, 'x')), 400, "state");
  expect_error(client.Get("/api/v1/events?campaign_id=abc"), 400, "campaign_id");
  expect_error(client.Get("/api/v1/events", {{"Last-Event-ID", "12; DROP TABLE events"}}), 400,
               "Last-Event-ID");
  expect_error(client.Get("/api/v1/health?x=1"), 400, "x");
}

TEST_F(HttpBadInput, ActionsTakeNoFieldsAndUnknownIdsAre404) {
  expect_error(post("/api/v1/campaigns/1/pause", R"({"force": true})"), 400, "force");
  expect_error(post("/api/v1/campaigns/999/pause", ""), 404, "999");
  expect_error(post("/api/v1/campaigns/999/resume", ""), 404, "999");
  expect_error(post("/api/v1/campaigns/999/cancel", ""), 404, "999");
  expect_error(post("/api/v1/rules/999/deploy", "{}"), 404, "999");
  expect_error(post("/api/v1/campaigns/1/cancel", ""), 409, "already done");
  auto client = daemon_.client();
  expect_error(client.Delete("/api/v1/campaigns/1"), 405, "DELETE");
  expect_error(client.Put("/api/v1/campaigns/1", "{}", "application/json"), 405, "PUT");
}

TEST_F(HttpBadInput, GarbageOnTheSocketGetsA400) {
  const std::string answer =
      raw_exchange(daemon_.daemon().port(), "NOT HTTP AT ALL \x01\x02\r\n\r\n");
  if (!answer.empty()) {
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  }
  const std::string long_uri = raw_exchange(
      daemon_.daemon().port(), "GET /api/v1/campaigns?x=" + std::string(20000, 'a') +
                                   " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  if (!long_uri.empty()) {
    EXPECT_EQ(long_uri.rfind("HTTP/1.1 414", 0), 0u) << long_uri.substr(0, 200);
  }
}

}  // namespace
}  // namespace colltune::testing
