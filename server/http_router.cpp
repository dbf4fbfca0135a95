#include "server/http_router.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <iterator>

#include "campaign/sqlite.h"

namespace colltune {
namespace {

constexpr int kMaxJsonDepth = 32;
constexpr std::size_t kMaxQueryValue = 256;

// Rejects nesting deeper than `max_depth` before the JSON parser sees it.
bool nesting_within(const std::string& text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > max_depth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

std::string allowed_list(const std::set<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string json_type_name(const nlohmann::json& j) { return j.type_name(); }

}  // namespace

ApiError bad_request(const std::string& message) { return ApiError(400, "bad_request", message); }
ApiError not_found(const std::string& message) { return ApiError(404, "not_found", message); }
ApiError conflict(const std::string& message) { return ApiError(409, "conflict", message); }

nlohmann::json error_body(const std::string& code, const std::string& message) {
  return {{"error", {{"code", code}, {"message", message}}}};
}

std::string default_error_code(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 409:
      return "conflict";
    case 413:
      return "payload_too_large";
    case 414:
      return "uri_too_long";
    case 415:
      return "unsupported_media_type";
    case 416:
      return "range_not_satisfiable";
    case 503:
      return "unavailable";
    default:
      return status >= 500 ? "internal_error" : "error";
  }
}

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                  "application/json");
}

std::int64_t ApiRequest::id(const std::string& name) const {
  auto it = path.find(name);
  if (it == path.end()) throw std::logic_error("route has no parameter " + name);
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    throw not_found(name + " '" + it->second + "' is not an id");
  }
}

std::optional<std::string> ApiRequest::query(const std::string& name) const {
  if (!http.has_param(name)) return std::nullopt;
  return http.get_param_value(name);
}

std::int64_t ApiRequest::query_int(const std::string& name, std::int64_t fallback, std::int64_t lo,
                                   std::int64_t hi) const {
  auto text = query(name);
  if (!text) return fallback;
  const bool digits =
      !text->empty() && text->size() <= 18 &&
      std::all_of(text->begin() + (text->front() == '-' ? 1 : 0), text->end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
      *text != "-";
  if (!digits) throw bad_request("query parameter " + name + ": '" + *text + "' is not an integer");
  const auto v = std::stoll(*text);
  if (v < lo || v > hi)
    throw bad_request("query parameter " + name + ": must be between " + std::to_string(lo) +
                      " and " + std::to_string(hi));
  return v;
}

std::string ApiRequest::query_enum(const std::string& name, const std::string& fallback,
                                   const std::vector<std::string>& allowed) const {
  auto text = query(name);
  if (!text) return fallback;
  if (std::find(allowed.begin(), allowed.end(), *text) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw bad_request("query parameter " + name + ": must be one of " + list);
  }
  return *text;
}

nlohmann::json ApiRequest::json_body(bool allow_empty) const {
  const auto& body = http.body;
  if (body.empty() || std::all_of(body.begin(), body.end(), [](char c) {
        return c == ' ' || c == '\n' || c == '\r' || c == '\t';
      })) {
    if (allow_empty) return nlohmann::json::object();
    throw bad_request("a JSON object body is required");
  }
  std::string type = http.get_header_value("Content-Type");
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.pop_back();
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (type != "application/json")
    throw ApiError(415, "unsupported_media_type",
                   "Content-Type must be application/json (got '" + type + "')");
  if (!nesting_within(body, kMaxJsonDepth))
    throw bad_request("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    // e.what() names the byte position and what was expected (or the number out of range).
    throw bad_request(std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw bad_request("the body must be a JSON object, not " + json_type_name(j));
  return j;
}

Router::Router(TokenAuthenticator auth, Metrics& metrics, RouterOptions options)
    : auth_(std::move(auth)), metrics_(metrics), options_(options) {}

void Router::add(std::string method, std::string path, Access access, std::set<std::string> query,
                 RouteHandler handler, bool streaming) {
  Route r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.access = access;
  r.query = std::move(query);
  r.handler = std::move(handler);
  r.streaming = streaming;
  // "{name}" matches a positive decimal id; every other character is literal.
  std::string regex;
  for (std::size_t i = 0; i < r.path.size();) {
    if (r.path[i] == '{') {
      const auto close = r.path.find('}', i);
      r.params.push_back(r.path.substr(i + 1, close - i - 1));
      regex += "([1-9][0-9]{0,17})";
      i = close + 1;
    } else {
      const char c = r.path[i++];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-')
        regex += c;
      else
        regex += std::string("\\") + c;
    }
  }
  r.pattern = std::regex(regex);
  routes_.push_back(std::move(r));
}

void Router::authorize(const Route& route, const httplib::Request& req, ApiRequest& api) const {
  if (route.access == Access::public_) return;
  if (req.has_header("Authorization")) {
    // The raw value: httplib's get_header_value() stops at a NUL, which would let
    // "Bearer <token>\0junk" pass as <token>. One header only, no byte below 0x20.
    const auto [first, last] = req.headers.equal_range("Authorization");
    if (std::next(first) != last)
      throw ApiError(401, "unauthorized", "more than one Authorization header");
    auto token = parse_bearer(first->second);
    if (!token)
      throw ApiError(401, "unauthorized",
                     "malformed Authorization header (expected 'Bearer <token>')");
    api.principal = auth_.authenticate(*token);
    if (!api.principal) throw ApiError(401, "unauthorized", "invalid token");
  }
  if (route.access == Access::read) {
    if (api.principal) return;
    if (options_.anonymous_read && is_loopback_address(req.remote_addr)) return;
    throw ApiError(401, "unauthorized", "this call needs a bearer token (viewer or admin)");
  }
  if (!api.principal)
    throw ApiError(401, "unauthorized", "this call needs a bearer token with the admin role");
  if (api.principal->role != Role::admin)
    throw ApiError(403, "forbidden",
                   "token '" + api.principal->name + "' has the " +
                       std::string(to_string(api.principal->role)) +
                       " role; this call needs admin");
}

void Router::handle(const httplib::Request& req, httplib::Response& res) {
  const auto start = std::chrono::steady_clock::now();
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  const Route* route = nullptr;
  std::smatch match;
  std::set<std::string> allowed_methods;
  for (const auto& r : routes_) {
    std::smatch m;
    if (!std::regex_match(req.path, m, r.pattern)) continue;
    allowed_methods.insert(r.method);
    if (r.method == method && !route) {
      route = &r;
      match = m;
    }
  }
  std::string label = route ? route->path : "unmatched";
  try {
    if (!route) {
      if (!allowed_methods.empty()) {
        std::string allow;
        for (const auto& m : allowed_methods) allow += (allow.empty() ? "" : ", ") + m;
        res.set_header("Allow", allow);
        throw ApiError(405, "method_not_allowed",
                       req.method + " is not allowed on " + req.path + " (allowed: " + allow + ")");
      }
      throw not_found("no route " + req.path);
    }
    ApiRequest api{req, {}, std::nullopt};
    for (std::size_t i = 0; i < route->params.size(); ++i)
      api.path[route->params[i]] = match[i + 1];
    // Credentials first: a caller without the role learns nothing from validation messages
    // (allowed query parameters, accepted content types).
    authorize(*route, req, api);
    // Bodies are JSON only (httplib would otherwise merge a form body into the query).
    if (!req.body.empty()) {
      std::string type = req.get_header_value("Content-Type");
      type = type.substr(0, type.find(';'));
      std::transform(type.begin(), type.end(), type.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (type != "application/json")
        throw ApiError(415, "unsupported_media_type",
                       "Content-Type must be application/json (got '" + type + "')");
    }
    std::set<std::string> seen;
    for (const auto& [key, value] : req.params) {
      if (!route->query.count(key))
        throw bad_request("unknown query parameter '" + key.substr(0, 64) +
                          "' (allowed: " + allowed_list(route->query) + ")");
      if (!seen.insert(key).second) throw bad_request("query parameter " + key + " given twice");
      if (value.size() > kMaxQueryValue)
        throw bad_request("query parameter " + key + " longer than " +
                          std::to_string(kMaxQueryValue) + " characters");
    }
    route->handler(api, res);
    if (res.status == -1) res.status = 200;
  } catch (const ApiError& e) {
    if (e.status() == 401) res.set_header("WWW-Authenticate", "Bearer realm=\"colltune\"");
    send_json(res, e.status(), error_body(e.code(), e.what()));
  } catch (const sql::Error& e) {
    spdlog::error("{} {}: {}", req.method, req.path, e.what());
    // Another process holds the database's write lock longer than the busy timeout: say so.
    if (sql::is_busy(e)) {
      res.set_header("Retry-After", "5");
      send_json(res, 503,
                error_body("unavailable",
                           "the database is locked by another process "
                           "(busy for longer than 10 s); retry later"));
    } else {
      send_json(res, 500, error_body("internal_error", "internal error; see the daemon's log"));
    }
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", req.method, req.path, e.what());
    send_json(res, 500, error_body("internal_error", "internal error; see the daemon's log"));
  }
  if (!route || !route->streaming)
    metrics_.observe_request(
        method, label, res.status,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  else
    metrics_.observe_request(method, label, res.status, 0);
}

void Router::install(httplib::Server& server) {
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
  server.Get(".*", handler);
  server.Post(".*", handler);
  server.Put(".*", handler);
  server.Patch(".*", handler);
  server.Delete(".*", handler);
  server.Options(".*", handler);
  server.set_payload_max_length(options_.max_body_bytes);
  // What httplib answers by itself (oversized body or URI, unparsable request) gets a JSON body
  // too; answers of the router already have one.
  server.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                       httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message;
    switch (res.status) {
      case 413:
        message = "request body larger than " + std::to_string(options_.max_body_bytes) + " bytes";
        break;
      case 414:
        message = "request URI too long";
        break;
      case 400:
        message = req.get_header_value("Transfer-Encoding") == "chunked"
                      ? "malformed chunked body, or larger than " +
                            std::to_string(options_.max_body_bytes) + " bytes"
                      : "malformed HTTP request";
        break;
      default:
        message = "HTTP " + std::to_string(res.status);
    }
    send_json(res, res.status, error_body(default_error_code(res.status), message));
    return httplib::Server::HandlerResponse::Handled;
  }));
  server.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          spdlog::error("{} {}: {}", req.method, req.path, e.what());
        } catch (...) {
        }
        send_json(res, 500, error_body("internal_error", "internal error; see the daemon's log"));
      });
}

}  // namespace colltune
