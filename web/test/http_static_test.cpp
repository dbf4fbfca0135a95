// serve_web_root (server/http_static.h) on a real cpp-httplib server: the dashboard's files at
// `/` with their cache and security headers, every other path left to the API's handlers, and
// no way out of the folder.
#include "server/http_static.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

namespace colltune {
namespace {

namespace fs = std::filesystem;

class WebRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("colltune-web-root-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "dist" / "assets");
    write(root_ / "dist" / "index.html", "<!doctype html><title>colltune</title>");
    write(root_ / "dist" / "assets" / "index-abc123.js", "console.log(1)");
    write(root_ / "secret.txt", "outside the web root");
  }
  void TearDown() override {
    if (listener_.joinable()) {
      server_.stop();
      listener_.join();
    }
    fs::remove_all(root_);
  }

  static void write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  // Serves root_/dist (or, without_dashboard, the page saying how to get one), with a
  // catch-all standing in for the API router.
  httplib::Client start(bool without_dashboard = false) {
    if (without_dashboard)
      serve_dashboard_missing_page(server_);
    else
      serve_web_root(server_, root_ / "dist");
    server_.Get(".*", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 404;
      res.set_content("{\"error\":{\"code\":\"not_found\",\"message\":\"no route " + req.path + "\"}}",
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    listener_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 200 && !server_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return httplib::Client("127.0.0.1", port_);
  }

  fs::path root_;
  httplib::Server server_;
  std::thread listener_;
  int port_ = 0;
};

TEST_F(WebRootTest, ServesIndexAtSlashRevalidatedWithSecurityHeaders) {
  auto client = start();
  auto res = client.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "<!doctype html><title>colltune</title>");
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html");
  EXPECT_EQ(res->get_header_value("Cache-Control"), "no-cache");
  EXPECT_EQ(res->get_header_value("Content-Security-Policy"), kWebContentSecurityPolicy);
  EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
}

TEST_F(WebRootTest, HashedAssetsAreCachedForAYear) {
  auto client = start();
  auto res = client.Get("/assets/index-abc123.js");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "console.log(1)");
  EXPECT_NE(res->get_header_value("Content-Type").find("javascript"), std::string::npos);
  EXPECT_EQ(res->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
}

TEST_F(WebRootTest, PathsNamingNoFileReachTheApiHandlers) {
  auto client = start();
  for (const char* path : {"/api/v1/campaigns", "/no-such-file.js", "/assets/"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_NE(res->body.find("no route"), std::string::npos) << path;
    EXPECT_EQ(res->get_header_value("Content-Security-Policy"), "") << path;
  }
}

// No dashboard installed: / says how to get it (not the API's "no route /"); the API's paths
// still reach the router.
TEST_F(WebRootTest, WithoutADashboardSlashSaysHowToGetIt) {
  auto client = start(/*without_dashboard=*/true);
  for (const char* path : {"/", "/index.html"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path;
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
    EXPECT_NE(res->body.find("web/build.sh"), std::string::npos) << res->body;
    EXPECT_NE(res->body.find("/api/v1/health"), std::string::npos) << res->body;
    EXPECT_EQ(res->get_header_value("Content-Security-Policy"), kWebContentSecurityPolicy);
  }
  auto api = client.Get("/api/v1/campaigns");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 404);
  EXPECT_NE(api->body.find("no route"), std::string::npos);
  auto post = client.Post("/", "", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->body.find("web/build.sh"), std::string::npos) << "POST / got the page";
}

TEST_F(WebRootTest, NothingOutsideTheFolderIsServed) {
  auto client = start();
  for (const char* path : {"/../secret.txt", "/assets/../../secret.txt", "/%2e%2e/secret.txt"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_NE(res->body, "outside the web root") << path;
  }
}

TEST(WebRootCheck, RejectsAFolderWithoutIndexHtml) {
  const fs::path empty = fs::temp_directory_path() / ("colltune-web-empty-" + std::to_string(::getpid()));
  fs::create_directories(empty);
  try {
    check_web_root(empty);
    ADD_FAILURE() << "accepted a folder without index.html";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("web/build.sh"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_web_root(empty / "missing"), std::invalid_argument);
  fs::remove_all(empty);
}

TEST(WebRootCheck, CacheControlByPath) {
  EXPECT_EQ(web_cache_control("/"), "no-cache");
  EXPECT_EQ(web_cache_control("/index.html"), "no-cache");
  EXPECT_EQ(web_cache_control("/assets/index-1.css"), "public, max-age=31536000, immutable");
  EXPECT_EQ(web_cache_control("/x/assets/y.js"), "no-cache");
}

}  // namespace
}  // namespace colltune
