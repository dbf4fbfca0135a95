// The OpenAPI document matches the router: every registered route is documented with the same
// method, path parameters and query parameters, and every documented operation is registered.
#include <gtest/gtest.h>

#include <set>

#include "campaign/campaign_spec.h"
#include "server/http_api_internal.h"
#include "server/openapi.h"
#include "tests/server/daemon_test_support.h"
#include "tests/server/raw_http.h"

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
  Daemon daemon(
      parse_daemon_config({{"database", dir / "db"}, {"backends", {{"sim", json::object()}}}}));
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
    EXPECT_EQ(parameters_in(op, "path"),
              std::set<std::string>(route.params.begin(), route.params.end()))
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
      EXPECT_TRUE(routed.count({path, method}))
          << method << " " << path << " is documented but not routed";
}

TEST(HttpOpenApi, ServedDocumentIsTheEmbeddedOne) {
  InProcessDaemon d;
  auto client = d.client("");
  auto res = client.Get("/api/openapi.json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body), document());
}

std::set<std::string> property_names(const json& schema) {
  std::set<std::string> names;
  for (const auto& [name, property] : schema.at("properties").items()) names.insert(name);
  return names;
}

// Every field parse_campaign_spec accepts is in the CampaignSpec schema with a description, and
// the schema lists no field the parser would refuse (spec, contexts[] entries, stop).
TEST(HttpOpenApi, CampaignSpecSchemaHasExactlyTheParsersFields) {
  const auto& spec = document().at("components").at("schemas").at("CampaignSpec");
  const auto& context = spec.at("properties").at("contexts").at("items");
  const auto& stop = spec.at("properties").at("stop");
  const std::pair<const json*, CampaignSpecPart> parts[] = {{&spec, CampaignSpecPart::spec},
                                                            {&context, CampaignSpecPart::context},
                                                            {&stop, CampaignSpecPart::stop}};
  for (const auto& [schema, part] : parts) {
    EXPECT_EQ(property_names(*schema), campaign_spec_fields(part));
    EXPECT_FALSE(schema->value("additionalProperties", true));
    for (const auto& [name, property] : schema->at("properties").items())
      EXPECT_FALSE(property.value("description", std::string()).empty())
          << "CampaignSpec field " << name << " has no description";
  }
}

int raw_status(const std::string& answer) {
  return answer.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(answer.substr(9, 3)) : 0;
}

// A POST whose body is optional (the document gives it no required requestBody) is accepted
// with no body and no Content-Type, framed either way (no Content-Length, Content-Length: 0):
// the answer is about the resource (404 unknown id, 409 nothing to roll back, 200 ...), never
// 411, 415 or a complaint about the body.
// The states a client reads and filters by are the code's, in its order: a state the code
// dropped (jobs were documented and filtered as "failed", which no job ever is) or added
// shows here.
TEST(HttpOpenApi, DocumentedStatesAreTheCodesStates) {
  const auto& doc = document();
  const auto& schemas = doc.at("components").at("schemas");
  auto state_enum = [](const json& schema) {
    return schema.at("enum").get<std::vector<std::string>>();
  };
  const auto campaign = http_api::names_of(kCampaignStates);
  const auto context = http_api::names_of(kContextStates);
  const auto job = http_api::names_of(kJobStates);
  EXPECT_EQ(state_enum(schemas.at("Campaign").at("properties").at("state")), campaign);
  EXPECT_EQ(state_enum(schemas.at("Context").at("properties").at("state")), context);
  EXPECT_EQ(state_enum(schemas.at("Job").at("properties").at("state")), job);
  auto filter = [&](const std::string& path) {
    for (const auto& p : doc.at("paths").at(path).at("get").at("parameters"))
      if (p.at("name") == "state") return state_enum(p.at("schema"));
    ADD_FAILURE() << path << " documents no state filter";
    return std::vector<std::string>{};
  };
  EXPECT_EQ(filter("/api/v1/campaigns"), campaign);
  EXPECT_EQ(filter("/api/v1/jobs"), job);
  EXPECT_EQ(filter("/api/v1/campaigns/{id}/jobs"), job);
}

TEST(HttpOpenApi, PostsWithAnOptionalBodyAcceptAnEmptyRequestWithoutContentType) {
  InProcessDaemon d;
  int checked = 0;
  for (const auto& [path, item] : document().at("paths").items()) {
    if (!item.contains("post")) continue;
    const auto& op = item.at("post");
    if (op.contains("requestBody") && op.at("requestBody").value("required", false)) continue;
    std::string target = path;
    for (auto open = target.find('{'); open != std::string::npos; open = target.find('{'))
      target.replace(open, target.find('}', open) - open + 1, "999");
    for (const std::string framing : {"", "Content-Length: 0\r\n"}) {
      const std::string answer = raw_exchange(
          d.daemon().port(), "POST " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                                 std::string(kAdminToken) + "\r\n" + framing + "\r\n");
      const int status = raw_status(answer);
      EXPECT_NE(status, 0) << "no answer to POST " << target;
      EXPECT_NE(status, 411) << target << ": " << answer;
      EXPECT_NE(status, 415) << target << ": " << answer;
      EXPECT_EQ(answer.find("body"), std::string::npos) << target << ": " << answer;
      ++checked;
    }
  }
  EXPECT_GE(checked, 2 * 6) << "fewer optional-body POST routes than the daemon has";
}

}  // namespace
}  // namespace colltune::testing
