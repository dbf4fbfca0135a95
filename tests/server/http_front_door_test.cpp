// The daemon's HTTP front door against hostile clients (issue 20, items 1, 4, 5 and the HTTP
// parts of 12): request framing, header bytes, the web_root guard, and slow or idle connections
// that must not take the workers away from health and authenticated calls.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/http_head.h"
#include "tests/server/daemon_test_support.h"
#include "tests/server/raw_http.h"
#include "tests/server/tls_test_cert.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

using Clock = std::chrono::steady_clock;

int status_of(const std::string& answer) {
  if (answer.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::stoi(answer.substr(9, 3));
}

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---- issue 20 item 5: framing ----

TEST(HttpFrontDoor, BodylessPostIsAnsweredAtOnce) {
  InProcessDaemon daemon;
  const auto start = Clock::now();
  // No Content-Length, no Transfer-Encoding: no body (RFC 9112 6.3), so no wait for one.
  const auto answer = raw_exchange(daemon.daemon().port(),
                                   "POST /api/v1/campaigns/999/cancel HTTP/1.1\r\nHost: x\r\n"
                                   "Authorization: Bearer " +
                                       std::string(kAdminToken) + "\r\n\r\n");
  EXPECT_EQ(status_of(answer), 404) << answer;
  EXPECT_LT(seconds_since(start), 2.0) << "a body-less POST stalled";
}

TEST(HttpFrontDoor, PipelinedRequestsAreAnsweredInOrder) {
  InProcessDaemon daemon;
  const int fd = raw_connect(daemon.daemon().port());
  ASSERT_GE(fd, 0);
  const std::string auth = "Authorization: Bearer " + std::string(kAdminToken) + "\r\n";
  const std::string three =
      "GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /api/v1/campaigns/998/cancel HTTP/1.1\r\nHost: x\r\n" +
      auth +
      "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
      "GET /api/v1/campaigns/997 HTTP/1.1\r\nHost: x\r\n" +
      auth + "Connection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, three.data(), three.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(three.size()));
  const auto start = Clock::now();
  const std::string answers = raw_read_all(fd);
  ::close(fd);
  EXPECT_LT(seconds_since(start), 3.0);
  ASSERT_EQ(count_of(answers, "HTTP/1.1 "), 3) << answers;
  const auto first = answers.find("HTTP/1.1 200");
  const auto second = answers.find("no campaign 998");
  const auto third = answers.find("no campaign 997");
  EXPECT_NE(first, std::string::npos) << answers;
  EXPECT_NE(second, std::string::npos) << answers;
  EXPECT_NE(third, std::string::npos) << answers;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
}

TEST(HttpFrontDoor, AmbiguousFramingIsRejectedWith400) {
  InProcessDaemon daemon;
  const std::string post = "POST /api/v1/campaigns/999/cancel HTTP/1.1\r\nHost: x\r\n";
  static constexpr char kNulHeader[] = "X-Nul: a\0b\r\n\r\n";  // the NUL is part of the head
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}", "conflicting Content-Length"},
      {"Content-Length: 2, 40\r\n\r\n{}", "conflicting Content-Length"},
      {"Content-Length: +2\r\n\r\n{}", "Content-Length is not a number"},
      {"Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n0\r\n\r\n", "both"},
      {"Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", "Transfer-Encoding"},
      {"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "Transfer-Encoding"},
      {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       "Transfer-Encoding"},
      {"Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n", "header name"},
      {"X-Folded: a\r\n b\r\n\r\n", "obs-fold"},
      {std::string(kNulHeader, sizeof kNulHeader - 1), "control character"},
      {"Host: y\r\n\r\n", "Host"},
  };
  for (const auto& [rest, needle] : cases) {
    const auto start = Clock::now();
    const auto answer = raw_exchange(daemon.daemon().port(), post + rest);
    EXPECT_EQ(status_of(answer), 400) << rest << "\n" << answer;
    EXPECT_NE(answer.find(needle), std::string::npos) << rest << "\n" << answer;
    EXPECT_LT(seconds_since(start), 2.0) << rest;
  }
  // A well-framed chunked request still works.
  const auto chunked =
      raw_exchange(daemon.daemon().port(),
                   post + "Authorization: Bearer " + kAdminToken +
                       "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                       "2\r\n{}\r\n0\r\n\r\n");
  EXPECT_EQ(status_of(chunked), 404) << chunked;
}

TEST(HttpHead, WhereTheHeadEndsAndWhatIsAddedToIt) {
  EXPECT_FALSE(request_head_length("GET / HTTP/1.1\r\nHost: x\r\n"));
  EXPECT_EQ(request_head_length("GET / HTTP/1.1\r\n\r\nnext"), 18u);
  EXPECT_EQ(request_head_length("GET / HTTP/1.1\n\n"), 16u);  // complete, so refused at once
  EXPECT_EQ(inspect_request_head("GET / HTTP/1.1\n\n").status, 400);
  // No length: none is waited for; a POST is told so explicitly, a GET is left alone.
  auto post = inspect_request_head("POST /x HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(post.status, 0);
  EXPECT_EQ(post.head, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  auto get = inspect_request_head("GET /x HTTP/1.1\r\n\r\n");
  EXPECT_EQ(get.head, "GET /x HTTP/1.1\r\n\r\n");
  // Equal duplicates agree; the length and chunking are reported.
  auto same =
      inspect_request_head("POST /x HTTP/1.1\r\nContent-Length: 12\r\ncontent-length: 012\r\n\r\n");
  EXPECT_EQ(same.status, 0) << same.message;
  EXPECT_EQ(same.content_length, 12u);
  EXPECT_TRUE(
      inspect_request_head("POST /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n").chunked);
  EXPECT_EQ(inspect_request_head("POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n").status,
            400);
  EXPECT_EQ(inspect_request_head("GET / HTTP/2.0\r\n\r\n").status, 505);
  EXPECT_EQ(inspect_request_head("GET / FTP/1.0\r\n\r\n").status, 400);
  EXPECT_EQ(inspect_request_head("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n").status, 400);
  EXPECT_EQ(
      inspect_request_head("GET / HTTP/1.1\r\nContent-Length: 99999999999999999\r\n\r\n").status,
      400);
  EXPECT_TRUE(
      inspect_request_head("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
          .expects_continue);
}

// ---- issue 20 item 1: slow and idle connections ----

// `count` connections from 127.0.0.2.. that trickle a request head, one header line every
// `every`, from `threads` threads, until stop() (or the daemon closes them).
class SlowClients {
 public:
  SlowClients(int port, int count, std::chrono::milliseconds every, bool send_nothing = false) {
    for (int i = 0; i < count; ++i) {
      const std::string from = "127.0.0." + std::to_string(2 + i % 50);
      const int fd = raw_connect(port, from.c_str());
      if (fd < 0) continue;
      fds_.push_back(fd);
      if (!send_nothing) send(fd, "GET /api/v1/health HTTP/1.1\r\n");
    }
    if (!send_nothing)
      thread_ = std::thread([this, every] {
        for (int line = 0; !stop_; ++line) {
          for (int waited = 0; waited < every.count() && !stop_; waited += 20)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          for (int fd : fds_) send(fd, "X-Slow-" + std::to_string(line) + ": 1\r\n");
        }
      });
  }
  ~SlowClients() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (int fd : fds_) ::close(fd);
    fds_.clear();
  }
  std::size_t connected() const { return fds_.size(); }

 private:
  static void send(int fd, const std::string& bytes) {
    ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Health (anonymous) and the campaign list (a viewer token) answer within `bound` seconds.
void expect_prompt_answers(InProcessDaemon& daemon, double bound) {
  for (const char* token : {"", kViewerToken}) {
    auto client = bearer_client(daemon.url(), token, 15);
    client.set_connection_timeout(15);
    const auto start = Clock::now();
    auto res = client.Get(*token ? "/api/v1/campaigns" : "/api/v1/health");
    const double took = seconds_since(start);
    ASSERT_TRUE(res) << httplib::to_string(res.error()) << " after " << took << " s";
    EXPECT_EQ(res->status, 200) << res->body;
    EXPECT_LT(took, bound) << (*token ? "campaign list" : "health") << " took " << took << " s";
  }
}

const json kFewWorkers = {{"http_threads", 4}, {"max_event_streams", 2}};

TEST(HttpFrontDoor, SlowHeadersHoldNoWorker) {
  // 150 clients trickling a header line every second, against 4 workers: before the gate, each
  // held a worker for as long as it kept trickling (10 s per line) and health went unanswered.
  InProcessDaemon daemon(kFewWorkers);
  SlowClients slow(daemon.daemon().port(), 150, std::chrono::milliseconds(1000));
  ASSERT_EQ(slow.connected(), 150u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  expect_prompt_answers(daemon, 2.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  expect_prompt_answers(daemon, 2.0);
}

TEST(HttpFrontDoor, IdleConnectionsHoldNoWorker) {
  InProcessDaemon daemon(kFewWorkers);
  SlowClients idle(daemon.daemon().port(), 150, std::chrono::milliseconds(0), true);
  ASSERT_EQ(idle.connected(), 150u);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  expect_prompt_answers(daemon, 2.0);
  // Idle keep-alive connections (one request answered, then silence) hold none either.
  std::vector<int> kept;
  for (int i = 0; i < 8; ++i) {
    const int fd = raw_connect(daemon.daemon().port(), "127.0.0.99");
    ASSERT_GE(fd, 0);
    const std::string get = "GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n";
    ::send(fd, get.data(), get.size(), MSG_NOSIGNAL);
    char buf[4096];
    ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);
    kept.push_back(fd);
  }
  expect_prompt_answers(daemon, 2.0);
  for (int fd : kept) ::close(fd);
}

TEST(HttpFrontDoor, SlowLargeBodiesHoldAtMostAQuarterOfTheWorkers) {
  // A body over 64 KiB is read by a worker; 20 clients trickling one (no token needed: the
  // body is read before routing) may hold 1 of the 4 workers, not all of them.
  InProcessDaemon daemon(kFewWorkers);
  std::vector<int> uploads;
  const std::string head =
      "POST /api/v1/campaigns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: 200000\r\n\r\n{\"name\": \"";
  for (int i = 0; i < 20; ++i) {
    const int fd =
        raw_connect(daemon.daemon().port(), ("127.0.0." + std::to_string(2 + i)).c_str());
    ASSERT_GE(fd, 0);
    ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    uploads.push_back(fd);
  }
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    while (!done) {
      for (int fd : uploads) ::send(fd, "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  expect_prompt_answers(daemon, 2.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  expect_prompt_answers(daemon, 2.0);
  done = true;
  trickle.join();
  for (int fd : uploads) ::close(fd);
}

TEST(HttpFrontDoor, UnfinishedTlsHandshakesHoldNoWorker) {
  TempDir certs;
  const std::string cert = certs / "cert.pem";
  const std::string key = certs / "key.pem";
  write_self_signed(cert, key);
  json config = kFewWorkers;
  config.update(json{{"tls_cert", cert}, {"tls_key", key}, {"http_header_timeout", 2}});
  InProcessDaemon daemon(config);
  // 100 clients that connect and send nothing, and one that stops in the middle of its
  // ClientHello (a TLS record header announcing 512 bytes, then 3 of them).
  SlowClients silent(daemon.daemon().port(), 100, std::chrono::milliseconds(0), true);
  ASSERT_EQ(silent.connected(), 100u);
  const int partial = raw_connect(daemon.daemon().port(), "127.0.0.60");
  ASSERT_GE(partial, 0);
  const std::string hello_start("\x16\x03\x01\x02\x00\x01\x00\x01", 8);
  ::send(partial, hello_start.data(), hello_start.size(), MSG_NOSIGNAL);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  httplib::SSLClient tls("127.0.0.1", daemon.daemon().port());
  tls.set_ca_cert_path(cert.c_str());
  tls.enable_server_certificate_verification(true);
  tls.set_read_timeout(15);
  const auto start = Clock::now();
  auto res = tls.Get("/api/v1/health");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_LT(seconds_since(start), 2.0);
  // The half-done handshake is closed at the deadline (2 s after its connect).
  const std::string rest = raw_read_all(partial, 8);
  ::close(partial);
  EXPECT_LT(seconds_since(start), 4.5);
}

TEST(HttpFrontDoor, ServesOverIpv6) {
  InProcessDaemon daemon(json{{"listen", "[::1]:0"}});
  ASSERT_EQ(daemon.url().rfind("http://[::1]:", 0), 0u) << daemon.url();
  auto client = daemon.client(kViewerToken);
  for (int i = 0; i < 3; ++i) {  // one keep-alive connection, three requests
    auto res = client.Get("/api/v1/campaigns");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
  }
}

TEST(HttpFrontDoor, HeadDeadlineIsTotalNotPerLine) {
  InProcessDaemon daemon(json{{"http_header_timeout", 1}});
  // A line every 200 ms never trips a per-read timeout; the 1 s total deadline closes it.
  const int fd = raw_connect(daemon.daemon().port());
  ASSERT_GE(fd, 0);
  const auto start = Clock::now();
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    std::string line = "GET /api/v1/health HTTP/1.1\r\n";
    for (int i = 0; !done && i < 50; ++i) {
      ::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
      line = "X-" + std::to_string(i) + ": 1\r\n";
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  const std::string answer = raw_read_all(fd, 8);
  const double took = seconds_since(start);
  done = true;
  trickle.join();
  ::close(fd);
  EXPECT_EQ(status_of(answer), 408) << answer;
  EXPECT_GT(took, 0.9);
  EXPECT_LT(took, 3.0);
}

TEST(HttpFrontDoor, ConnectionsPerClientAreCapped) {
  InProcessDaemon daemon(json{{"max_connections_per_client", 10}});
  std::vector<int> held;
  for (int i = 0; i < 10; ++i) {
    const int fd = raw_connect(daemon.daemon().port(), "127.0.0.7");
    ASSERT_GE(fd, 0);
    held.push_back(fd);
  }
  // The 11th from that address is answered 503 at once and closed ...
  const int extra = raw_connect(daemon.daemon().port(), "127.0.0.7");
  ASSERT_GE(extra, 0);
  const auto start = Clock::now();
  const std::string answer = raw_read_all(extra, 5);
  ::close(extra);
  EXPECT_EQ(status_of(answer), 503) << answer;
  EXPECT_LT(seconds_since(start), 2.0);
  // ... while other clients are served; /metrics counts the refusal.
  expect_prompt_answers(daemon, 2.0);
  auto metrics = daemon.client(kViewerToken).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("colltune_http_connections_refused_total 1\n"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("colltune_http_connections_open "), std::string::npos);
  for (int fd : held) ::close(fd);
}

TEST(HttpFrontDoor, EventStreamsPerClientAreCapped) {
  InProcessDaemon daemon(json{{"max_event_streams_per_client", 2}});
  std::vector<int> streams;
  const std::string get = "GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                          std::string(kViewerToken) + "\r\n\r\n";
  for (int i = 0; i < 2; ++i) {
    const int fd = raw_connect(daemon.daemon().port());
    ASSERT_GE(fd, 0);
    ::send(fd, get.data(), get.size(), MSG_NOSIGNAL);
    char buf[4096];
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    ASSERT_GT(n, 0);
    EXPECT_EQ(status_of(std::string(buf, static_cast<std::size_t>(n))), 200);
    streams.push_back(fd);
  }
  const auto third = raw_exchange(daemon.daemon().port(), get);
  EXPECT_EQ(status_of(third), 429) << third;
  for (int fd : streams) ::close(fd);
}

// ---- issue 20 item 4: web_root ----

std::filesystem::path make_dashboard(const TempDir& dir) {
  const auto web = dir.path() / "web";
  std::filesystem::create_directories(web / "assets");
  std::ofstream(web / "index.html") << "<!doctype html><title>colltune dashboard</title>\n";
  std::ofstream(web / "assets" / "app.js") << "console.log('dashboard');\n";
  return web;
}

TEST(HttpFrontDoor, WebRootLinkToTheStoreIsRefusedAtStart) {
  TempDir dir;
  const auto web = make_dashboard(dir);
  const auto data = dir.path() / "data";
  std::filesystem::create_directories(data);
  std::filesystem::create_directory_symlink(data, web / "assets" / "data");
  json config = {{"listen", "127.0.0.1:0"},
                 {"database", (data / "colltune.db").string()},
                 {"web_root", web.string()},
                 {"backends", {{"sim", json::object()}}}};
  try {
    Daemon d(parse_daemon_config(config));
    ADD_FAILURE() << "a web_root linking to the store's folder was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("links"), std::string::npos) << message;
    EXPECT_NE(message.find("database"), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(data / "colltune.db"));
  // A link to the key file itself, and one to the rules folder, likewise.
  std::filesystem::remove(web / "assets" / "data");
  std::ofstream(dir.path() / "key.pem") << "KEY";
  std::filesystem::create_symlink(dir.path() / "key.pem", web / "k.pem");
  config["tls_cert"] = (dir.path() / "cert.pem").string();
  config["tls_key"] = (dir.path() / "key.pem").string();
  EXPECT_THROW(Daemon(parse_daemon_config(config)), std::invalid_argument);
  std::filesystem::remove(web / "k.pem");
  config.erase("tls_cert");
  config.erase("tls_key");
  std::filesystem::create_directories(dir.path() / "rules" / "history");
  std::filesystem::create_directory_symlink(dir.path() / "rules" / "history", web / "h");
  config["rules_dir"] = (dir.path() / "rules").string();
  EXPECT_THROW(Daemon(parse_daemon_config(config)), std::invalid_argument);
}

TEST(HttpFrontDoor, WebRootServesOnlyRegularFilesUnderItsRealPath) {
  TempDir web_dir;
  const auto web = make_dashboard(web_dir);
  InProcessDaemon daemon(json{{"web_root", web.string()}});
  auto client = bearer_client(daemon.url(), "");
  auto index = client.Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("colltune dashboard"), std::string::npos);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html");
  auto asset = client.Get("/assets/app.js");
  ASSERT_TRUE(asset);
  EXPECT_EQ(asset->status, 200);
  EXPECT_EQ(asset->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  // Links planted after start: to the store's folder (database, WAL) and to a file outside.
  std::ofstream(web_dir.path() / "secret.txt") << "TOPSECRET\n";
  std::filesystem::create_directory_symlink(daemon.dir().path(), web / "assets" / "data");
  std::filesystem::create_symlink(web_dir.path() / "secret.txt", web / "secret.txt");
  std::filesystem::create_directory(web / "sub");  // a folder is not a file either
  for (const char* path : {"/assets/data/colltune.db", "/assets/data/colltune.db-wal",
                           "/secret.txt", "/sub", "/sub/", "/assets/data/"}) {
    for (bool head : {false, true}) {
      auto res = head ? client.Head(path) : client.Get(path);
      ASSERT_TRUE(res) << path;
      EXPECT_NE(res->status, 200) << path << (head ? " (HEAD)" : "");
      EXPECT_EQ(res->body.find("SQLite format"), std::string::npos) << path;
      EXPECT_EQ(res->body.find("TOPSECRET"), std::string::npos) << path;
    }
  }
}

// ---- issue 20 item 12: the HTTP parts ----

TEST(HttpFrontDoor, FingerprintOfAnUnknownBackendIs400) {
  InProcessDaemon daemon;
  auto client = daemon.client();
  auto known = client.Get("/api/v1/fingerprint?backend=sim");
  ASSERT_TRUE(known);
  EXPECT_EQ(known->status, 200) << known->body;
  auto unknown = client.Get("/api/v1/fingerprint?backend=nosuch");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 400) << unknown->body;
  EXPECT_NE(unknown->body.find("nosuch"), std::string::npos) << unknown->body;
}

TEST(HttpFrontDoor, NulInAuthorizationIsRejectedNotTruncated) {
  InProcessDaemon daemon;
  const std::string list = "GET /api/v1/campaigns HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  // The token itself passes...
  EXPECT_EQ(status_of(raw_exchange(daemon.daemon().port(),
                                   list + "Authorization: Bearer " + kAdminToken + "\r\n\r\n")),
            200);
  // ... but not with a NUL and anything after it.
  std::string nul = list + "Authorization: Bearer " + kAdminToken;
  nul += '\0';
  nul += "junk\r\n\r\n";
  const int status = status_of(raw_exchange(daemon.daemon().port(), nul));
  EXPECT_TRUE(status == 400 || status == 401) << status;
  // Two Authorization headers are ambiguous too.
  EXPECT_EQ(status_of(raw_exchange(daemon.daemon().port(),
                                   list + "Authorization: Bearer " + kAdminToken +
                                       "\r\nAuthorization: Bearer other\r\n\r\n")),
            401);
}

TEST(HttpFrontDoor, CampaignNameLimitCountsCharactersNotBytes) {
  InProcessDaemon daemon;
  auto client = daemon.client();
  auto spec = sim_campaign_spec(4);
  std::string name;
  for (int i = 0; i < 200; ++i) name += "\xc3\xa9";  // 200 x U+00E9: 400 bytes
  spec["name"] = name;
  auto ok = client.Post("/api/v1/campaigns", spec.dump(), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 201) << ok->body;
  spec["name"] = name + "\xc3\xa9";  // 201 characters
  auto too_long = client.Post("/api/v1/campaigns", spec.dump(), "application/json");
  ASSERT_TRUE(too_long);
  EXPECT_EQ(too_long->status, 400) << too_long->body;
  EXPECT_NE(too_long->body.find("200 characters"), std::string::npos) << too_long->body;
}

}  // namespace
}  // namespace colltune::testing
