// Serves the built web dashboard (web/dist: index.html plus hashed assets/) at `/` from a
// folder, next to the REST API. Files are looked up before the API router sees a request, so
// a path that names no file (every /api/... path) still reaches the router and its JSON 404.
//
// Headers: index.html is revalidated on every load (Cache-Control: no-cache) so a new build is
// picked up at once; files under assets/ carry a content hash in their name and are cached for
// a year. Every file gets a Content-Security-Policy that allows only this origin (the
// dashboard bundles everything and loads nothing from elsewhere), nosniff and no framing.
#pragma once

#include <filesystem>
#include <string>

namespace httplib {
class Server;
}

namespace colltune {

// Throws std::invalid_argument when `dir` is not a folder holding index.html (the message
// says to build the dashboard with web/build.sh).
void check_web_root(const std::filesystem::path& dir);

// Mounts `dir` at `/` on `server` (call it before or after Router::install; file lookups run
// first either way). Calls check_web_root first.
void serve_web_root(httplib::Server& server, const std::filesystem::path& dir);

// The headers serve_web_root adds to a file answer for `request_path` (exposed for tests).
std::string web_cache_control(const std::string& request_path);
extern const char* const kWebContentSecurityPolicy;

}  // namespace colltune
