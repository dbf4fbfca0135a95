#include "server/http_static.h"

#include <httplib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace colltune {

const char* const kWebContentSecurityPolicy =
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'";

void check_web_root(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw std::invalid_argument("web_root: '" + dir.string() +
                                "' is not a folder (build the dashboard with web/build.sh)");
  if (!std::filesystem::is_regular_file(dir / "index.html", ec))
    throw std::invalid_argument("web_root: '" + dir.string() +
                                "' has no index.html (build the dashboard with web/build.sh)");
}

std::string web_cache_control(const std::string& request_path) {
  // Vite names every bundled asset after its content hash: a changed file gets a new name.
  if (request_path.rfind("/assets/", 0) == 0) return "public, max-age=31536000, immutable";
  return "no-cache";
}

namespace {

namespace fs = std::filesystem;

// `path` is `base` or lies below it (both real, absolute, normal paths).
bool is_within(const fs::path& path, const fs::path& base) {
  const auto relative = path.lexically_relative(base);
  return !relative.empty() && *relative.begin() != "..";
}

const char* content_type_of(const fs::path& file) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {".html", "text/html"},    {".js", "text/javascript"},    {".mjs", "text/javascript"},
      {".css", "text/css"},      {".json", "application/json"}, {".map", "application/json"},
      {".svg", "image/svg+xml"}, {".png", "image/png"},         {".ico", "image/x-icon"},
      {".jpg", "image/jpeg"},    {".woff2", "font/woff2"},      {".woff", "font/woff"},
      {".txt", "text/plain"},    {".wasm", "application/wasm"}};
  const std::string ext = file.extension().string();
  for (const auto& [suffix, type] : kTypes)
    if (ext == suffix) return type;
  return "application/octet-stream";
}

}  // namespace

void check_web_root_holds_no_secrets(
    const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& secrets) {
  std::error_code ec;
  std::vector<std::pair<std::string, fs::path>> guarded;
  for (const auto& [key, path] : secrets)
    if (!path.empty()) guarded.push_back({key, fs::weakly_canonical(path, ec)});
  // `place` can be reached by anonymous clients: no secret below it, and it inside no secret
  // folder (rules_dir is one).
  auto check = [&](const fs::path& place, const std::string& link) {
    for (const auto& [key, secret] : guarded)
      if (is_within(secret, place) || is_within(place, secret))
        throw std::invalid_argument(
            "web_root: '" + dir.string() + "' " +
            (link.empty() ? "holds " : "links (" + link + ") to ") + key + " '" + secret.string() +
            "'; files under web_root are public, point it at the built dashboard (web/dist) "
            "only");
  };
  const fs::path root = fs::weakly_canonical(dir, ec);
  check(root, "");
  // Then every symlink below it, judged by where it points (the walk follows none).
  constexpr int kMaxEntries = 100000;
  int entries = 0;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (++entries > kMaxEntries)
      throw std::invalid_argument("web_root: '" + dir.string() + "' holds more than " +
                                  std::to_string(kMaxEntries) +
                                  " entries; point it at the built dashboard (web/dist)");
    std::error_code link_ec;
    if (!it->is_symlink(link_ec)) continue;
    const fs::path target = fs::weakly_canonical(it->path(), link_ec);
    if (!link_ec) check(target, it->path().string());
  }
}

fs::path web_file_for(const fs::path& root_real, const std::string& request_path) {
  if (request_path.empty() || request_path.front() != '/' ||
      request_path.find('\0') != std::string::npos || request_path.find('\\') != std::string::npos)
    return {};
  std::string relative = request_path.substr(1);
  if (relative.empty() || relative.back() == '/') relative += "index.html";
  const fs::path wanted = fs::path(relative).lexically_normal();
  if (wanted.empty() || wanted.is_absolute() || *wanted.begin() == "..") return {};
  std::error_code ec;
  const fs::path real = fs::canonical(root_real / wanted, ec);  // every link resolved
  if (ec || !is_within(real, root_real) || real == root_real) return {};
  if (!fs::is_regular_file(real, ec)) return {};
  return real;
}

void serve_web_root(httplib::Server& server, const std::filesystem::path& dir) {
  check_web_root(dir);
  // Not httplib's mount point: it follows any symlink. Files are looked up (GET and HEAD)
  // before routing; a path that names no servable file goes on to the API router.
  const fs::path root_real = fs::canonical(dir);
  server.set_pre_routing_handler([root_real](const httplib::Request& req, httplib::Response& res) {
    if (req.method != "GET" && req.method != "HEAD")
      return httplib::Server::HandlerResponse::Unhandled;
    const fs::path file = web_file_for(root_real, req.path);
    if (file.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::ifstream in(file, std::ios::binary);
    std::ostringstream body;
    body << in.rdbuf();
    if (!in) return httplib::Server::HandlerResponse::Unhandled;
    res.set_content(body.str(), content_type_of(file));
    res.status = req.ranges.empty() ? 200 : 206;
    res.set_header("Cache-Control", web_cache_control(req.path));
    res.set_header("Content-Security-Policy", kWebContentSecurityPolicy);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    return httplib::Server::HandlerResponse::Handled;
  });
}

const char* const kDashboardMissingPage =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<title>colltune: no dashboard</title></head><body>\n"
    "<h1>colltune is running; its dashboard is not installed</h1>\n"
    "<p>The REST API answers under <a href=\"/api/v1/health\">/api/v1</a> (described at "
    "<a href=\"/api/openapi.json\">/api/openapi.json</a>).</p>\n"
    "<p>To get the dashboard: build it from the source tree with <code>web/build.sh</code> "
    "(Node.js and npm: <code>scripts/install-deps web</code>; <code>make</code> does it when "
    "they are present), or install colltune with it (<code>make install</code>, the .deb), then "
    "restart the daemon. A config may also point <code>web_root</code> at a built dashboard "
    "folder.</p>\n</body></html>\n";

void serve_dashboard_missing_page(httplib::Server& server) {
  server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if ((req.method != "GET" && req.method != "HEAD") ||
        (req.path != "/" && req.path != "/index.html"))
      return httplib::Server::HandlerResponse::Unhandled;
    res.set_content(kDashboardMissingPage, "text/html; charset=utf-8");
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("Content-Security-Policy", kWebContentSecurityPolicy);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    return httplib::Server::HandlerResponse::Handled;
  });
}

}  // namespace colltune
