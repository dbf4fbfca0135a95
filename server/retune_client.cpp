#include "server/retune_client.h"

#include <httplib.h>

#include <cstdlib>
#include <stdexcept>

namespace colltune {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

DaemonAnswer daemon_request(const DaemonEndpoint& endpoint, const std::string& method,
                            const std::string& path, const std::string& body, int read_timeout_s) {
  std::string server = endpoint.server.empty() ? env_or("COLLTUNE_SERVER", "http://127.0.0.1:8080")
                                               : endpoint.server;
  if (server.rfind("http://", 0) != 0 && server.rfind("https://", 0) != 0)
    throw std::invalid_argument("--server must start with http:// or https:// (got '" + server +
                                "')");
  while (!server.empty() && server.back() == '/') server.pop_back();
  httplib::Client client(server);
  if (!endpoint.ca_cert.empty()) client.set_ca_cert_path(endpoint.ca_cert.c_str());
  client.set_connection_timeout(10);
  client.set_read_timeout(read_timeout_s);
  httplib::Headers headers;
  const std::string token = endpoint.token.empty() ? env_or("COLLTUNE_TOKEN", "") : endpoint.token;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  httplib::Result res =
      method == "POST" ? client.Post(path, headers, body.empty() ? "{}" : body, "application/json")
                       : client.Get(path, headers);
  if (!res)
    throw std::runtime_error(method + " " + server + path + ": " + httplib::to_string(res.error()) +
                             " (is the daemon running? see --server)");
  auto json = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status >= 400) {
    std::string message = res->body;
    if (!json.is_discarded() && json.contains("error") && json["error"].is_object())
      message = json["error"].value("message", res->body);
    throw std::runtime_error("the daemon answered " + std::to_string(res->status) + ": " + message);
  }
  if (json.is_discarded())
    throw std::runtime_error(method + " " + path + ": the answer is not JSON");
  return {res->status, std::move(json)};
}

}  // namespace colltune
