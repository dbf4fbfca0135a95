// A small router over cpp-httplib: routes are declared once (method, path template, access,
// allowed query parameters, handler) and that list is the single source for dispatch, the
// OpenAPI check, metrics labels and 404/405 answers. Errors are JSON:
//   {"error": {"code": "not_found", "message": "no campaign 12"}}
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "server/auth.h"
#include "server/metrics.h"

namespace colltune {

// An error answer. `code` is a stable identifier ("bad_request", "not_found", ...).
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string code, const std::string& message)
      : std::runtime_error(message), status_(status), code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string code_;
};

ApiError bad_request(const std::string& message);
ApiError not_found(const std::string& message);
ApiError conflict(const std::string& message);

nlohmann::json error_body(const std::string& code, const std::string& message);
// The error code used for an HTTP status when none is more specific.
std::string default_error_code(int status);

// public_: anyone (health). read: viewer or admin token (or anonymous on loopback when
// allowed). admin: admin token.
enum class Access { public_, read, admin };

struct ApiRequest {
  const httplib::Request& http;
  std::map<std::string, std::string> path;  // template parameters
  std::optional<TokenEntry> principal;

  // A path parameter as a positive id (the template only matches digits).
  std::int64_t id(const std::string& name) const;
  // Query parameters, validated: absent -> fallback; present and bad -> bad_request.
  std::optional<std::string> query(const std::string& name) const;
  std::int64_t query_int(const std::string& name, std::int64_t fallback, std::int64_t lo,
                         std::int64_t hi) const;
  std::string query_enum(const std::string& name, const std::string& fallback,
                         const std::vector<std::string>& allowed) const;
  // The JSON body (an object); `allow_empty`: an empty body means {}. Checks Content-Type,
  // nesting depth and syntax.
  nlohmann::json json_body(bool allow_empty) const;
};

using RouteHandler = std::function<void(const ApiRequest&, httplib::Response&)>;

struct Route {
  std::string method;       // GET, POST
  std::string path;         // "/api/v1/campaigns/{id}"
  Access access = Access::read;
  std::set<std::string> query;  // allowed query parameters
  RouteHandler handler;
  bool streaming = false;   // long-lived (SSE): excluded from latency metrics
  std::regex pattern;       // built from `path`
  std::vector<std::string> params;
};

struct RouterOptions {
  bool anonymous_read = false;  // reads without a token from loopback clients
  std::size_t max_body_bytes = 1 << 20;
};

class Router {
 public:
  Router(TokenAuthenticator auth, Metrics& metrics, RouterOptions options);

  void add(std::string method, std::string path, Access access, std::set<std::string> query,
           RouteHandler handler, bool streaming = false);
  const std::vector<Route>& routes() const { return routes_; }

  // Sends every request of `server` through this router (and JSON error bodies for what
  // httplib answers itself: 400, 413, 414).
  void install(httplib::Server& server);

  // Dispatches one request (install() calls this); public for tests.
  void handle(const httplib::Request& req, httplib::Response& res);

 private:
  void authorize(const Route& route, const httplib::Request& req, ApiRequest& api) const;

  TokenAuthenticator auth_;
  Metrics& metrics_;
  RouterOptions options_;
  std::vector<Route> routes_;
};

void send_json(httplib::Response& res, int status, const nlohmann::json& body);

}  // namespace colltune
