// The OpenAPI document matches the router: every registered route is documented with the same
// method, path parameters and query parameters, and every documented operation is registered.
#include <gtest/gtest.h>

#include <set>

#include "server/openapi.h"
#include "tests/server/daemon_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const json& document() {
  static const json doc = json::parse(openapi_text());
  return doc;
}

std::set<std::string> parameters_in(const json& operation, const std::string& where) {
  std::set<std::string> names;
  if (operation.contains("parameters"))
    for (const auto& p : operation.at("parameters"))
      if (p.at("in") == where) names.insert(p.at("name").get<std::string>());
  return names;
}

TEST(HttpOpenApi, DocumentIsOpenApi3WithErrorSchema) {
  const auto& doc = document();
  EXPECT_EQ(doc.at("openapi").get<std::string>().substr(0, 2), "3.");
  EXPECT_TRUE(doc.at("components").at("schemas").contains("Error"));
  EXPECT_EQ(doc.at("components").at("securitySchemes").at("bearer").at("scheme"), "bearer");
}

TEST(HttpOpenApi, EveryRouteIsDocumentedAndEveryOperationIsRouted) {
  TempDir dir;
  Daemon daemon(parse_daemon_config({{"database", dir / "db"}, {"backends", {{"sim", json::object()}}}}));
  const auto& doc = document();
  std::set<std::pair<std::string, std::string>> routed;
  for (const auto& route : daemon.router().routes()) {
    const std::string method = lower(route.method);
    routed.insert({route.path, method});
    ASSERT_TRUE(doc.at("paths").contains(route.path)) << route.path << " is not documented";
    const auto& item = doc.at("paths").at(route.path);
    ASSERT_TRUE(item.contains(method)) << route.method << " " << route.path << " is not documented";
    const auto& op = item.at(method);
    EXPECT_EQ(parameters_in(op, "query"), route.query) << route.method << " " << route.path;
    EXPECT_EQ(parameters_in(op, "path"), std::set<std::string>(route.params.begin(), route.params.end()))
        << route.method << " " << route.path;
    // Public routes say so (security: []); others inherit the bearer requirement.
    const bool documented_public = op.contains("security") && op.at("security").empty();
    EXPECT_EQ(documented_public, route.access == Access::public_) << route.path;
    // Admin routes document 403.
    if (route.access == Access::admin) {
      EXPECT_TRUE(op.at("responses").contains("403")) << route.path;
    }
  }
  for (const auto& [path, item] : doc.at("paths").items())
    for (const auto& [method, op] : item.items())
      EXPECT_TRUE(routed.count({path, method})) << method << " " << path << " is documented but not routed";
}

TEST(HttpOpenApi, ServedDocumentIsTheEmbeddedOne) {
  InProcessDaemon d;
  auto client = d.client("");
  auto res = client.Get("/api/openapi.json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body), document());
}

}  // namespace
}  // namespace colltune::testing
