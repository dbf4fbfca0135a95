#include "server/http_static.h"

#include <stdexcept>

#include <httplib.h>

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

void serve_web_root(httplib::Server& server, const std::filesystem::path& dir) {
  check_web_root(dir);
  const auto absolute = std::filesystem::absolute(dir).lexically_normal().string();
  if (!server.set_mount_point("/", absolute))
    throw std::invalid_argument("web_root: cannot serve '" + absolute + "'");
  server.set_file_request_handler([](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Cache-Control", web_cache_control(req.path));
    res.set_header("Content-Security-Policy", kWebContentSecurityPolicy);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
  });
}

}  // namespace colltune
