// Security claims of docs/reliability/security.md, each proved against the real `colltune
// serve` binary over HTTP on loopback: who reaches which route (anonymous, viewer, admin), the
// static web root, and the REST paths into files and programs.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/openapi.h"
#include "tests/server/daemon_test_support.h"
#include "tests/server/raw_http.h"

namespace colltune::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Every (method, concrete path) the daemon routes, from its OpenAPI document (a test in
// http_openapi_test.cpp checks that document against the router, route by route).
std::vector<std::pair<std::string, std::string>> every_route() {
  const json doc = json::parse(openapi_text());
  std::vector<std::pair<std::string, std::string>> routes;
  for (const auto& [path, item] : doc.at("paths").items())
    for (const auto& [method, op] : item.items()) {
      std::string concrete = std::regex_replace(path, std::regex("\\{[a-z_]+\\}"), "1");
      std::string upper = method;
      for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      routes.emplace_back(upper, concrete);
    }
  return routes;
}

bool is_public(const std::string& path) {
  return path == "/api/v1/health" || path == "/api/openapi.json";
}

// The real daemon binary. `config` may name files in dir() (pass a function of it); listen
// and database are filled in when absent.
class RealDaemon {
 public:
  explicit RealDaemon(const json& config)
      : RealDaemon([&config](const TempDir&) { return config; }) {}
  explicit RealDaemon(const std::function<json(const TempDir&)>& make_config) {
    json config = make_config(dir_);
    if (!config.contains("listen")) config["listen"] = "127.0.0.1:0";
    if (!config.contains("database")) config["database"] = dir_ / "colltune.db";
    write_json_file(dir_ / "config.json", config);
    process_ =
        std::make_unique<DaemonProcess>(COLLTUNE_BINARY, dir_ / "config.json", dir_ / "serve.log");
  }
  std::string start() { return url_ = process_->start(); }
  const TempDir& dir() const { return dir_; }
  const std::string& url() const { return url_; }
  int port() const { return std::stoi(url_.substr(url_.rfind(':') + 1)); }
  std::string log() const { return process_->log(); }
  httplib::Client client(const std::string& token = "") const { return bearer_client(url_, token); }

 private:
  TempDir dir_;
  std::unique_ptr<DaemonProcess> process_;
  std::string url_;
};

// Sends `method path` (empty JSON body for POST). For the event stream only the status and
// type are read: the stream is left at once.
struct Answer {
  int status = 0;
  std::string type;
  std::string body;
};
Answer call(httplib::Client& client, const std::string& method, const std::string& path,
            const httplib::Headers& headers = {}) {
  Answer a;
  if (path.rfind("/api/v1/events", 0) == 0 && method == "GET") {
    client.Get(
        path, headers,
        [&](const httplib::Response& r) {
          a.status = r.status;
          a.type = r.get_header_value("Content-Type");
          return r.status != 200;  // an error body is read whole; a stream is dropped
        },
        [&](const char* data, std::size_t n) {
          a.body.append(data, n);
          return true;
        });
    return a;
  }
  httplib::Result res = method == "GET"    ? client.Get(path, headers)
                        : method == "HEAD" ? client.Head(path, headers)
                                           : client.Post(path, headers, "{}", "application/json");
  if (!res) return a;
  a.status = res->status;
  a.type = res->get_header_value("Content-Type");
  a.body = res->body;
  return a;
}

// Anonymous sweep: every route but health and the API description answers 401 with a JSON
// error, whatever the query string or body looks like.
void expect_anonymous_sees_only_health(const std::string& url) {
  httplib::Client client(url);
  client.set_read_timeout(30);
  const auto routes = every_route();
  ASSERT_GE(routes.size(), 20u);
  for (const auto& [method, path] : routes) {
    const Answer a = call(client, method, path);
    if (is_public(path)) {
      EXPECT_EQ(a.status, 200) << method << " " << path;
      continue;
    }
    EXPECT_EQ(a.status, 401) << method << " " << path << ": " << a.body;
    const auto body = json::parse(a.body, nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << method << " " << path << " answered no JSON: " << a.body;
    EXPECT_EQ(body["error"]["code"], "unauthorized") << method << " " << path;
    // Validation never runs before authentication: no list of allowed parameters leaks.
    const Answer bad = call(client, method, path + "?limit=abc&no_such_parameter=1");
    EXPECT_EQ(bad.status, 401) << method << " " << path << "?...: " << bad.body;
    EXPECT_EQ(bad.body.find("allowed"), std::string::npos) << bad.body;
    if (method == "GET") {
      EXPECT_EQ(call(client, "HEAD", path).status, 401) << "HEAD " << path;
    }
  }
  // A form or text body is not a way around it either.
  auto res = client.Post("/api/v1/campaigns", "backend=sim", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401) << res->body;
  // A wrong or malformed token is no better than none.
  for (const char* header : {"Bearer not-a-token-0123456789", "Basic YWRtaW46YWRtaW4=", "Bearer"}) {
    auto r = client.Get("/api/v1/campaigns", {{"Authorization", header}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << header;
  }
}

TEST(SecurityAnonymous, DefaultConfigAnswersOnlyHealthAndTheApiDescription) {
  RealDaemon d(json::object());  // the defaults: no tokens, anonymous_read false, no web_root set
  d.start();
  expect_anonymous_sees_only_health(d.url());
  // No web_root in the config: the dashboard the binary finds (its installed or build-tree
  // assets, or a page saying how to get them) at / and /index.html, nothing else, least of
  // all the store next to it.
  httplib::Client client(d.url());
  for (const char* path : {"/", "/index.html", "/colltune.db", "/config.json", "/serve.log"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    const bool dashboard = std::string(path) == "/" || std::string(path) == "/index.html";
    if (dashboard)
      EXPECT_NE(res->body.find("<html"), std::string::npos) << path;
    else
      EXPECT_EQ(res->status, 404) << path;
    EXPECT_EQ(res->body.find("SQLite"), std::string::npos) << path;
    EXPECT_EQ(res->body.find("listen"), std::string::npos) << path;
  }
  auto health = json_of(client.Get("/api/v1/health"));
  EXPECT_EQ(health.size(), 2u) << health.dump();  // status and active_campaigns, nothing more
  EXPECT_EQ(health["status"], "ok");
}

TEST(SecurityAnonymous, WithTokensConfiguredAnonymousStillOnlyReachesHealth) {
  RealDaemon d({{"backends", {{"sim", {{"noise", "none"}}}}}, {"tokens", tokens_json()}});
  d.start();
  expect_anonymous_sees_only_health(d.url());
}

TEST(SecurityAnonymous, ApiDescriptionIsTheStaticDocumentAndHoldsNoSecrets) {
  const TempDir rules_dir("colltune-security-rules-dir-marker");
  RealDaemon d({{"backends", {{"sim", {{"noise", "none"}}}}},
                {"tokens", tokens_json()},
                {"rules_dir", rules_dir.path().string()}});
  d.start();
  httplib::Client client(d.url());
  auto res = client.Get("/api/openapi.json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  std::ifstream in(COLLTUNE_SOURCE_DIR "/server/openapi.json");
  ASSERT_TRUE(in);
  EXPECT_EQ(json::parse(res->body), json::parse(in))
      << "the served document is not the shipped file";
  for (const std::string& secret :
       {std::string(kAdminToken), std::string(kViewerToken), d.dir().path().string(),
        std::string("colltune-security-rules-dir-marker"),
        std::string("127.0.0.1:") + std::to_string(d.port())})
    EXPECT_EQ(res->body.find(secret), std::string::npos) << secret;
}

TEST(SecurityAnonymous, AnonymousReadFromLoopbackReadsButNeverWrites) {
  RealDaemon d({{"backends", {{"sim", {{"noise", "none"}}}}},
                {"tokens", tokens_json()},
                {"anonymous_read", true}});
  d.start();
  httplib::Client client(d.url());
  client.set_read_timeout(30);
  for (const auto& [method, path] : every_route()) {
    const Answer a = call(client, method, path);
    if (method == "GET")
      EXPECT_TRUE(a.status == 200 || a.status == 404)
          << method << " " << path << " -> " << a.status;
    else
      EXPECT_EQ(a.status, 401) << method << " " << path << ": " << a.body;
  }
  auto admin = d.client(kAdminToken);
  EXPECT_EQ(json_of(admin.Get("/api/v1/campaigns"))["total"], 0)
      << "an anonymous POST created something";
}

// A finished sim campaign (id 1) with its rules version (id 1), for the role sweeps.
void finished_campaign(const RealDaemon& d) {
  auto admin = d.client(kAdminToken);
  auto res = admin.Post("/api/v1/campaigns", sim_campaign_spec(4).dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  ASSERT_EQ(wait_for_state(admin, 1, {"done"})["state"], "done");
}

json store_view(const RealDaemon& d) {
  auto admin = d.client(kAdminToken);
  json view;
  view["campaigns"] = json_of(admin.Get("/api/v1/campaigns"));
  for (auto& c : view["campaigns"]["items"]) c.erase("active");
  view["rules"] = json_of(admin.Get("/api/v1/rules"));
  view["jobs"] = json_of(admin.Get("/api/v1/jobs"))["total"];
  return view;
}

TEST(SecurityViewer, ReadsEveryReadRouteAndIsRefusedEveryMutation) {
  RealDaemon d({{"backends", {{"sim", {{"noise", "none"}}}}},
                {"tokens", tokens_json()},
                {"rules_dir", std::string()}});
  d.start();
  finished_campaign(d);
  const json before = store_view(d);
  auto viewer = d.client(kViewerToken);
  int reads = 0, refused = 0;
  for (const auto& [method, path] : every_route()) {
    const Answer a = call(viewer, method, path);
    if (method == "GET") {
      EXPECT_EQ(a.status, 200) << method << " " << path << ": " << a.body;
      if (path == "/api/v1/events") {
        EXPECT_EQ(a.type.rfind("text/event-stream", 0), 0u) << a.type;
      }
      ++reads;
    } else {
      EXPECT_EQ(a.status, 403) << method << " " << path << ": " << a.body;
      const auto body = json::parse(a.body, nullptr, false);
      ASSERT_FALSE(body.is_discarded()) << a.body;
      EXPECT_EQ(body["error"]["code"], "forbidden");
      ++refused;
    }
  }
  EXPECT_GE(reads, 18);
  EXPECT_EQ(refused,
            8);  // create, pause, resume, cancel, deploy, rollback, retune, sentinel report
  EXPECT_EQ(store_view(d), before) << "a viewer's call changed the store";
}

TEST(SecurityAdmin, AdminCreatesCancelsAndDeploysOnlyIntoRulesDir) {
  RealDaemon d([](const TempDir& dir) {
    return json{{"rules_dir", dir / "rules"},
                {"backends", {{"sim", {{"noise", "none"}}}}},
                {"tokens", tokens_json()}};
  });
  const std::string rules_dir = d.dir() / "rules";
  d.start();
  finished_campaign(d);
  auto admin = d.client(kAdminToken);
  auto second = admin.Post("/api/v1/campaigns", sim_campaign_spec(40).dump(), "application/json");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 201);
  auto cancel = admin.Post("/api/v1/campaigns/2/cancel", "", "application/json");
  ASSERT_TRUE(cancel);
  EXPECT_TRUE(cancel->status == 200 || cancel->status == 202 || cancel->status == 409)
      << cancel->body;
  for (const char* name :
       {"../escape.conf", "/tmp/escape.conf", "sub/dir.conf", ".hidden", "a;touch x"}) {
    auto res =
        admin.Post("/api/v1/rules/1/deploy", json{{"name", name}}.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << name << ": " << res->body;
  }
  auto res = admin.Post("/api/v1/rules/1/deploy",
                        json{{"name", "site.conf"}, {"force", true}}.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body)["deployment"]["target"],
            (fs::path(rules_dir) / "site.conf").string());
  EXPECT_TRUE(fs::is_regular_file(fs::path(rules_dir) / "site.conf"));
  EXPECT_FALSE(fs::exists(d.dir().path() / "escape.conf"));
  EXPECT_FALSE(fs::exists("/tmp/escape.conf"));
  // Everything the deploy wrote stays under rules_dir.
  for (const auto& entry : fs::recursive_directory_iterator(d.dir().path())) {
    const auto p = entry.path().string();
    if (p.find("colltune.db") != std::string::npos || p.find("config.json") != std::string::npos ||
        p.find("serve.log") != std::string::npos)
      continue;
    EXPECT_EQ(p.rfind(rules_dir, 0), 0u) << p << " written outside rules_dir";
  }
}

// A built dashboard: index.html and one hashed asset; a secret next to the folder.
fs::path make_web_root(const TempDir& dir) {
  const fs::path web = dir.path() / "web";
  fs::create_directories(web / "assets");
  std::ofstream(web / "index.html") << "<!doctype html><title>colltune dashboard</title>\n";
  std::ofstream(web / "assets" / "app-1a2b3c.js") << "console.log('dashboard');\n";
  std::ofstream(dir.path() / "secret.txt") << "TOPSECRET\n";
  return web;
}

TEST(SecurityPaths, StaticWebRootServesItsFilesAndNothingAboveIt) {
  RealDaemon d([](const TempDir& dir) {
    return json{{"web_root", make_web_root(dir).string()},
                {"backends", {{"sim", {{"noise", "none"}}}}},
                {"tokens", tokens_json()}};
  });
  d.start();
  httplib::Client client(d.url());
  auto index = client.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("colltune dashboard"), std::string::npos);
  EXPECT_NE(index->get_header_value("Content-Security-Policy").find("default-src 'self'"),
            std::string::npos);
  auto asset = client.Get("/assets/app-1a2b3c.js");
  ASSERT_TRUE(asset);
  EXPECT_EQ(asset->status, 200);
  // The dashboard's files are public; the API behind them is not.
  expect_anonymous_sees_only_health(d.url());
  for (const char* path :
       {"/../secret.txt", "/%2e%2e/secret.txt", "/assets/../../secret.txt",
        "/assets/%2e%2e/%2e%2e/secret.txt", "/..%2fsecret.txt", "/assets/..%2f..%2fsecret.txt",
        "/%2e%2e%2fsecret.txt", "//secret.txt", "/assets/..\\..\\secret.txt", "/../colltune.db",
        "/../../../../etc/passwd", "/assets/%00../../secret.txt"}) {
    const std::string answer = raw_exchange(
        d.port(), std::string("GET ") + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_FALSE(answer.empty()) << path;
    EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), std::string::npos)
        << path << ": " << answer.substr(0, 80);
    EXPECT_EQ(answer.find("TOPSECRET"), std::string::npos) << path;
    EXPECT_EQ(answer.find("SQLite format"), std::string::npos) << path;
    EXPECT_EQ(answer.find("root:"), std::string::npos) << path;
  }
}

TEST(SecurityPaths, WebRootHoldingTheStoreRulesOrKeyIsRefusedAtStart) {
  for (const std::string key : {"database", "rules_dir", "tls_key"}) {
    TempDir dir;
    const fs::path web = make_web_root(dir);
    json config = {{"listen", "127.0.0.1:0"},
                   {"database", dir / "colltune.db"},
                   {"web_root", web.string()},
                   {"backends", {{"sim", json::object()}}}};
    if (key == "database") config["database"] = (web / "colltune.db").string();
    if (key == "rules_dir") config["rules_dir"] = (web / "rules").string();
    if (key == "tls_key") {
      config["tls_cert"] = (web / "cert.pem").string();
      config["tls_key"] = (web / "key.pem").string();
    }
    write_json_file(dir / "config.json", config);
    DaemonProcess process(COLLTUNE_BINARY, dir / "config.json", dir / "serve.log");
    try {
      process.start(std::chrono::seconds(20));
      ADD_FAILURE() << "the daemon started with " << key << " inside web_root";
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("web_root"), std::string::npos) << message;
      EXPECT_NE(message.find(key), std::string::npos) << message;
    }
    EXPECT_FALSE(fs::exists(web / "colltune.db")) << "the store was created before the refusal";
  }
}

TEST(SecurityPaths, RestNamesNoFileNoProgramAndNoUnconfiguredBackend) {
  RealDaemon d({{"backends", {{"sim", {{"noise", "none"}}}}}, {"tokens", tokens_json()}});
  d.start();
  auto admin = d.client(kAdminToken);
  const std::string marker = d.dir() / "pwned";
  // Fields that would name a file or a program are not part of the spec.
  for (const char* field :
       {"osu_dir", "database", "rules_dir", "profile", "profile_dirs", "dataset", "landscape",
        "mpirun", "mpirun_args", "ompi_info", "command", "path", "output"}) {
    auto spec = sim_campaign_spec();
    spec[field] = "/etc/passwd; touch " + marker;
    auto res = admin.Post("/api/v1/campaigns", spec.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << field;
    EXPECT_NE(res->body.find("unknown field"), std::string::npos) << field << ": " << res->body;
  }
  // Backends are the configured ones only (their settings come from the config file).
  for (const char* backend : {"local", "slurm", "../../bin/sh", "/bin/sh", "sim;id"}) {
    auto spec = sim_campaign_spec();
    spec["backend"] = backend;
    auto res = admin.Post("/api/v1/campaigns", spec.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << backend << ": " << res->body;
  }
  // The fingerprint's backend parameter only names configured backends (400 otherwise).
  auto fp = admin.Get("/api/v1/fingerprint?backend=%24%28touch%20" + marker + "%29");
  ASSERT_TRUE(fp);
  EXPECT_EQ(fp->status, 400) << fp->body;
  EXPECT_EQ(json_of(admin.Get("/api/v1/campaigns"))["total"], 0);
  EXPECT_FALSE(fs::exists(marker));
}

// The local backend with a recording stand-in for mpirun: what reaches the argv of a program
// when a campaign's free text is full of shell syntax.
TEST(SecurityShell, CampaignTextNeverReachesAProgramsArguments) {
  TempDir dir;
  const std::string argv_log = dir / "argv.log";
  const std::string marker = dir / "pwned";
  const std::string fake_mpirun = dir / "mpirun";
  // An OMB folder the backend accepts; mpirun (the stand-in) never starts it.
  fs::create_directories(dir.path() / "osu");
  std::ofstream(dir / "osu/osu_bcast") << "#!/bin/sh\nexit 1\n";
  fs::permissions(dir / "osu/osu_bcast", fs::perms::owner_all);
  {
    std::ofstream script(fake_mpirun);
    script << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> '" << argv_log
           << "'\necho --- >> '" << argv_log << "'\nexit 3\n";
  }
  fs::permissions(fake_mpirun, fs::perms::owner_all);
  RealDaemon d(
      {{"backends", {{"local", {{"mpirun", fake_mpirun}, {"osu_dir", dir / "osu"}, {"cores", 2}}}}},
       {"tokens", tokens_json()}});
  d.start();
  auto admin = d.client(kAdminToken);
  const std::string hostile =
      "$(touch " + marker + ") `touch " + marker + "`; touch " + marker + " | x & y";
  json spec = {{"name", hostile},
               {"backend", "local"},
               {"contexts", {{{"collective", "bcast"}, {"comm_size", 2}}}},
               {"sizes", "4:64"},
               {"strategy", "random"},
               {"budget", 2},
               {"batch_size", 2},
               {"final_repeats", 1},
               {"verify", false}};
  auto res = admin.Post("/api/v1/campaigns", spec.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  EXPECT_EQ(json::parse(res->body)["name"], hostile) << "the name is kept as data";
  const auto c = wait_for_state(admin, 1, {"done", "failed"}, std::chrono::seconds(120));
  EXPECT_TRUE(c["state"] == "done" || c["state"] == "failed") << c.dump();
  std::ifstream in(argv_log);
  ASSERT_TRUE(in) << "mpirun was never run: " << d.log();
  const std::regex plain("[A-Za-z0-9_./:=,+@%^-]*");  // ^ as in --mca coll ^hcoll
  int args = 0;
  for (std::string line; std::getline(in, line);) {
    ++args;
    EXPECT_TRUE(std::regex_match(line, plain)) << "argument with shell syntax: '" << line << "'";
    EXPECT_EQ(line.find("touch"), std::string::npos) << line;
  }
  EXPECT_GT(args, 5);
  EXPECT_FALSE(fs::exists(marker)) << "a shell ran the campaign's text";
}

}  // namespace
}  // namespace colltune::testing
