// The daemon's parts on their own: config layering and validation, token hashing and bearer
// parsing, the event hub's ordering and replay, Prometheus rendering.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <fstream>

#include "campaign/store.h"
#include "server/auth.h"
#include "server/config.h"
#include "server/events.h"
#include "server/metrics.h"
#include "tests/server/daemon_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

// ---- Config.

TEST(DaemonConfig, DefaultsAreSafe) {
  const auto c = parse_daemon_config(json::object());
  EXPECT_EQ(c.listen_host, "127.0.0.1");
  EXPECT_EQ(c.listen_port, 8080);
  EXPECT_FALSE(c.anonymous_read);
  EXPECT_TRUE(c.tokens.empty());
  ASSERT_EQ(c.backends.size(), 1u);
  EXPECT_EQ(c.backends[0].name, "local");
  EXPECT_EQ(c.max_body_bytes, 1u << 20);
}

TEST(DaemonConfig, RejectsUnknownKeysWrongTypesAndRanges) {
  auto error = [](const json& j) {
    try {
      parse_daemon_config(j);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error({{"listn", "x"}}).find("listn: unknown key"), std::string::npos);
  EXPECT_NE(error({{"listen", 8080}}).find("listen: must be a string"), std::string::npos);
  EXPECT_NE(error({{"listen", "127.0.0.1:99999"}}).find("above 65535"), std::string::npos);
  EXPECT_NE(error({{"listen", "127.0.0.1"}}).find("host:port"), std::string::npos);
  EXPECT_NE(error({{"listen", "a b:80"}}).find("not a host"), std::string::npos);
  EXPECT_NE(error({{"anonymous_read", "yes"}}).find("true or false"), std::string::npos);
  EXPECT_NE(error({{"max_concurrent_jobs", 0}}).find("between 1 and"), std::string::npos);
  EXPECT_NE(error({{"backends", {{"cloud", json::object()}}}}).find("unknown backend"),
            std::string::npos);
  EXPECT_NE(
      error({{"backends", {{"sim", {{"max_concurrent_jobs", -1}}}}}}).find("max_concurrent_jobs"),
      std::string::npos);
  EXPECT_NE(error({{"backends", {{"sim", {{"nosie", "none"}}}}}}).find("nosie"), std::string::npos);
  EXPECT_NE(error({{"tokens", {{{"token", "short"}, {"role", "admin"}}}}}).find("at least 16"),
            std::string::npos);
  EXPECT_NE(error({{"tokens", {{{"token", "0123456789abcdefg"}, {"role", "root"}}}}})
                .find("admin or viewer"),
            std::string::npos);
  EXPECT_NE(error({{"tokens", {{{"sha256", "abc"}, {"role", "admin"}}}}}).find("64 hex"),
            std::string::npos);
  EXPECT_NE(error({{"tokens",
                    {{{"token", "0123456789abcdefg"},
                      {"sha256", std::string(64, 'a')},
                      {"role", "admin"}}}}})
                .find("exactly one"),
            std::string::npos);
  EXPECT_NE(error({{"tls_cert", "/x.pem"}}).find("go together"), std::string::npos);
  // The front door's bounds (server/http_gate.h).
  EXPECT_NE(error({{"http_header_timeout", 0}}).find("http_header_timeout"), std::string::npos);
  EXPECT_NE(error({{"http_idle_timeout", 4000}}).find("http_idle_timeout"), std::string::npos);
  EXPECT_NE(error({{"max_connections", 5}}).find("max_connections"), std::string::npos);
  EXPECT_NE(error({{"max_connections_per_client", 0}}).find("max_connections_per_client"),
            std::string::npos);
  EXPECT_NE(error({{"max_event_streams_per_client", "8"}}).find("max_event_streams_per_client"),
            std::string::npos);
  const auto c =
      parse_daemon_config({{"http_header_timeout", 3}, {"max_connections_per_client", 7}});
  EXPECT_EQ(c.http_header_timeout, 3);
  EXPECT_EQ(c.max_connections_per_client, 7);
  EXPECT_EQ(c.max_connections, 4096);
}

TEST(DaemonConfig, TokensAreKeptOnlyAsDigests) {
  const std::string token = "0123456789abcdef-secret";
  const auto c = parse_daemon_config(
      {{"tokens",
        {{{"token", token}, {"role", "admin"}, {"name", "ops"}},
         {{"sha256", to_hex(sha256("viewer-secret-0123456"))}, {"role", "viewer"}}}}});
  ASSERT_EQ(c.tokens.size(), 2u);
  EXPECT_EQ(c.tokens[0].digest, sha256(token));
  EXPECT_EQ(c.tokens[0].name, "ops");
  TokenAuthenticator auth(c.tokens);
  ASSERT_TRUE(auth.authenticate(token));
  EXPECT_EQ(auth.authenticate(token)->role, Role::admin);
  ASSERT_TRUE(auth.authenticate("viewer-secret-0123456"));
  EXPECT_EQ(auth.authenticate("viewer-secret-0123456")->role, Role::viewer);
  EXPECT_FALSE(auth.authenticate(token + "x"));
  EXPECT_FALSE(auth.authenticate(""));
}

TEST(DaemonConfig, FlagsBeatEnvironmentBeatFile) {
  TempDir dir;
  const std::string file = dir / "c.json";
  write_json_file(
      file, {{"listen", "127.0.0.1:1000"}, {"database", "file.db"}, {"max_concurrent_jobs", 2}});
  std::map<std::string, std::string> env = {
      {"COLLTUNE_DATABASE", "env.db"},
      {"COLLTUNE_MAX_CONCURRENT_JOBS", "3"},
      {"COLLTUNE_ANONYMOUS_READ", "true"},
      {"COLLTUNE_BACKENDS", R"({"sim": {"max_concurrent_jobs": 4}})"}};
  auto getenv_fn = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto c =
      parse_daemon_config(layered_daemon_config(file, getenv_fn, {{"max_concurrent_jobs", "5"}}));
  EXPECT_EQ(c.listen_port, 1000);       // file
  EXPECT_EQ(c.database, "env.db");      // environment over file
  EXPECT_EQ(c.max_concurrent_jobs, 5);  // flag over environment
  EXPECT_TRUE(c.anonymous_read);        // environment
  ASSERT_EQ(c.backends.size(), 1u);
  EXPECT_EQ(c.backends[0].name, "sim");
  EXPECT_EQ(c.backends[0].max_concurrent_jobs, 4);  // per backend beats the default
  EXPECT_FALSE(
      c.backends[0].settings.contains("max_concurrent_jobs"));  // not passed to make_backend

  env["COLLTUNE_MAX_CONCURRENT_JOBS"] = "three";
  EXPECT_THROW(layered_daemon_config(file, getenv_fn, {}), std::invalid_argument);
  env.erase("COLLTUNE_MAX_CONCURRENT_JOBS");
  env["COLLTUNE_TOKENS"] = "[not json";
  EXPECT_THROW(layered_daemon_config(file, getenv_fn, {}), std::invalid_argument);
  EXPECT_THROW(layered_daemon_config(dir / "missing.json", getenv_fn, {}), std::invalid_argument);
}

TEST(DaemonConfig, ListenAddresses) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:8080"), std::make_pair(std::string("127.0.0.1"), 8080));
  EXPECT_EQ(parse_listen_address("[::1]:0"), std::make_pair(std::string("::1"), 0));
  EXPECT_EQ(parse_listen_address("localhost:9"), std::make_pair(std::string("localhost"), 9));
  EXPECT_THROW(parse_listen_address(":80"), std::invalid_argument);
  EXPECT_THROW(parse_listen_address("[::1]80"), std::invalid_argument);
  EXPECT_THROW(parse_listen_address("host:-1"), std::invalid_argument);
}

// ---- Auth.

TEST(DaemonAuth, Sha256KnownAnswers) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto parsed =
      parse_sha256_hex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, sha256("abc"));
  EXPECT_FALSE(parse_sha256_hex(std::string(63, 'a')));
  EXPECT_FALSE(parse_sha256_hex(std::string(64, 'g')));
}

// core/sha256.h is our own SHA-256 (the campaign core links no TLS library): the same digest as
// OpenSSL's for every length across the one- and two-block padding boundaries.
TEST(DaemonAuth, Sha256MatchesOpenSsl) {
  std::string data;
  for (int n = 0; n <= 200; ++n) {
    Sha256Digest expected{};
    unsigned int length = 0;
    ASSERT_EQ(EVP_Digest(data.data(), data.size(), expected.data(), &length, EVP_sha256(), nullptr),
              1);
    EXPECT_EQ(sha256(data), expected) << "length " << n;
    data.push_back(static_cast<char>('a' + n * 7 % 26));
  }
}

TEST(DaemonAuth, BearerParsing) {
  EXPECT_EQ(parse_bearer("Bearer abc.DEF-123_~+/="), "abc.DEF-123_~+/=");
  EXPECT_EQ(parse_bearer("bearer  tok  "), "tok");
  EXPECT_FALSE(parse_bearer("Basic dXNlcjpwYXNz"));
  EXPECT_FALSE(parse_bearer("Bearer"));
  EXPECT_FALSE(parse_bearer("Bearer "));
  EXPECT_FALSE(parse_bearer("Bearer a b"));
  EXPECT_FALSE(parse_bearer("Bearer tok\r\nX-Evil: 1"));
  EXPECT_FALSE(parse_bearer("Bearer " + std::string(513, 'a')));
  EXPECT_TRUE(parse_bearer("Bearer " + std::string(512, 'a')));
}

TEST(DaemonAuth, LoopbackAddresses) {
  EXPECT_TRUE(is_loopback_address("127.0.0.1"));
  EXPECT_TRUE(is_loopback_address("127.8.9.10"));
  EXPECT_TRUE(is_loopback_address("::1"));
  EXPECT_TRUE(is_loopback_address("::ffff:127.0.0.1"));
  EXPECT_FALSE(is_loopback_address("10.0.0.1"));
  EXPECT_FALSE(is_loopback_address("::ffff:10.0.0.1"));
  EXPECT_FALSE(is_loopback_address("1127.0.0.1"));
  EXPECT_FALSE(is_loopback_address(""));
}

// ---- Event hub.

TEST(DaemonEvents, HubAsSinkStoresDurableEventsOnceAndTransientOnesNever) {
  TempDir dir;
  Store store(dir / "db");
  const auto campaign = store.create_campaign("c", json::object(), CampaignState::running);
  EventHub hub(store);
  std::vector<StreamEvent> seen;
  hub.add_listener([&](const StreamEvent& e) { seen.push_back(e); });
  EventSink& sink = hub;

  const json started = {{"campaign_id", campaign}, {"job_id", 1}};
  const auto id = sink.durable(campaign, "job_started", started);
  // The same durable event twice is two events of the log, each with its own id.
  const json done = {{"campaign_id", campaign}, {"job_id", 1}, {"ok", true}};
  const auto done1 = sink.durable(campaign, "job_done", done);
  const auto done2 = sink.durable(campaign, "job_done", done);
  // Transient: published, never stored.
  sink.transient(campaign, "run", {{"campaign_id", campaign}, {"done", 1}});

  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].type, "job_started");
  EXPECT_EQ(seen[0].id, id);
  EXPECT_EQ(seen[1].id, done1);
  EXPECT_EQ(seen[2].id, done2);
  EXPECT_NE(done1, done2);
  EXPECT_EQ(seen[3].type, "run");
  EXPECT_EQ(seen[3].id, 0);
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i].seq, seen[i - 1].seq);
  const auto stored = store.events_after(0, 100);
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored[0].type, "job_started");
  EXPECT_EQ(stored[2].payload, done);
}

// Before the sink, the hub guessed which engine callbacks were durable by matching them against
// recently stored events: a transient event with the payload of a stored one (here stored by
// another writer) was swallowed as "already published". Now each call says what it is.
TEST(DaemonEvents, ATransientEventLikeAStoredOneIsStillPublished) {
  TempDir dir;
  Store store(dir / "db");
  const auto campaign = store.create_campaign("c", json::object(), CampaignState::running);
  EventHub hub(store);
  std::vector<StreamEvent> seen;
  hub.add_listener([&](const StreamEvent& e) { seen.push_back(e); });
  const json payload = {{"campaign_id", campaign}, {"done", 1}};
  const auto stored_id = store.add_event(campaign, "run", payload);
  hub.sync();
  hub.transient(campaign, "run", payload);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].id, stored_id);
  EXPECT_EQ(seen[1].id, 0);
  EXPECT_EQ(seen[1].payload, payload);
  EXPECT_EQ(store.events_after(0, 100).size(), 1u);
}

TEST(DaemonEvents, SubscriptionReplaysFromTheStoreThenGoesLive) {
  TempDir dir;
  Store store(dir / "db");
  const auto a = store.create_campaign("a", json::object(), CampaignState::running);
  const auto b = store.create_campaign("b", json::object(), CampaignState::running);
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 10; ++i)
    ids.push_back(store.add_event(i % 2 ? a : b, "e" + std::to_string(i), json::object()));
  EventHub hub(store, /*capacity=*/4);

  EventSubscription from_start(hub, 0, std::nullopt);
  EventSubscription only_a(hub, ids[3], a);
  EventSubscription live(hub, std::nullopt, std::nullopt);
  std::vector<std::int64_t> got;
  for (auto batch = from_start.next(std::chrono::milliseconds(0)); !batch.empty();
       batch = from_start.next(std::chrono::milliseconds(0)))
    for (const auto& e : batch) got.push_back(e.id);
  EXPECT_EQ(got, ids);
  got.clear();
  for (auto batch = only_a.next(std::chrono::milliseconds(0)); !batch.empty();
       batch = only_a.next(std::chrono::milliseconds(0)))
    for (const auto& e : batch) got.push_back(e.id);
  EXPECT_EQ(got, (std::vector<std::int64_t>{ids[5], ids[7], ids[9]}));
  EXPECT_TRUE(live.next(std::chrono::milliseconds(10)).empty());

  // Ten more events overflow the in-memory window of 4: the live subscriber still gets every
  // durable one, from the store.
  std::vector<std::int64_t> later;
  for (int i = 0; i < 10; ++i) later.push_back(hub.record(a, "late", {{"i", i}}));
  got.clear();
  for (auto batch = live.next(std::chrono::milliseconds(0)); !batch.empty();
       batch = live.next(std::chrono::milliseconds(0)))
    for (const auto& e : batch) got.push_back(e.id);
  EXPECT_EQ(got, later);
}

TEST(DaemonEvents, SseFormat) {
  StreamEvent e{42, 7, "job_done", {{"job_id", 3}}, 1.5, 1};
  const auto text = format_sse(e);
  EXPECT_EQ(text.rfind("id: 42\nevent: job_done\ndata: {", 0), 0u) << text;
  EXPECT_EQ(text.substr(text.size() - 2), "\n\n");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
  StreamEvent transient{0, 7, "run", {{"note", "line\nbreak"}}, 1.5, 2};
  const auto t = format_sse(transient);
  EXPECT_EQ(t.rfind("event: run\n", 0), 0u);
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 3);  // the newline in the payload is escaped
}

// ---- Metrics.

TEST(DaemonMetrics, HistogramIsCumulative) {
  Histogram h({0.1, 1});
  h.observe(0.05);
  h.observe(0.5);
  h.observe(5);
  std::string out;
  h.render(out, "x", "a=\"b\"");
  EXPECT_NE(out.find("x_bucket{a=\"b\",le=\"0.1\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{a=\"b\",le=\"1\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{a=\"b\",le=\"+Inf\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_count{a=\"b\"} 3\n"), std::string::npos) << out;
  EXPECT_EQ(prometheus_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

}  // namespace
}  // namespace colltune::testing
