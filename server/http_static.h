// Serves the built web dashboard (web/dist: index.html plus hashed assets/) at `/` from a
// folder, next to the REST API. Files are looked up before the API router sees a request, so
// a path that names no file (every /api/... path) still reaches the router and its JSON 404.
//
// Only regular files whose real path (every symlink resolved) lies under web_root's real path
// are served: a link inside web_root to anywhere else answers as if the file did not exist.
// At start, check_web_root_holds_no_secrets() refuses a web_root from which the store, the
// rules or the TLS key can be reached at all, directly or through a link.
//
// Headers: index.html is revalidated on every load (Cache-Control: no-cache) so a new build is
// picked up at once; files under assets/ carry a content hash in their name and are cached for
// a year. Every file gets a Content-Security-Policy that allows only this origin (the
// dashboard bundles everything and loads nothing from elsewhere), nosniff and no framing.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace httplib {
class Server;
}

namespace colltune {

// Throws std::invalid_argument when `dir` is not a folder holding index.html (the message
// says to build the dashboard with web/build.sh).
void check_web_root(const std::filesystem::path& dir);

// Throws std::invalid_argument when one of `secrets` (files or folders; empty ones are
// skipped) lies under `dir`, or under the target of a symlink found anywhere below `dir`, or
// is such a target. `secrets` pairs a config key with its path, for the message.
void check_web_root_holds_no_secrets(
    const std::filesystem::path& dir,
    const std::vector<std::pair<std::string, std::string>>& secrets);

// The file to serve for a request path (already percent-decoded): a regular file whose real
// path lies under `root_real` (web_root's real path); "/" and ".../" mean index.html. Empty
// when there is none, so the request goes on to the API router.
std::filesystem::path web_file_for(const std::filesystem::path& root_real,
                                   const std::string& request_path);

// Mounts `dir` at `/` on `server` (call it before or after Router::install; file lookups run
// first either way). Calls check_web_root first.
void serve_web_root(httplib::Server& server, const std::filesystem::path& dir);

// Without a dashboard: GET/HEAD of "/" and "/index.html" answer a short HTML page saying how
// to build or install it (instead of the API's JSON "no route /"); every other path goes on to
// the API router.
void serve_dashboard_missing_page(httplib::Server& server);
extern const char* const kDashboardMissingPage;

// The headers serve_web_root adds to a file answer for `request_path` (exposed for tests).
std::string web_cache_control(const std::string& request_path);
extern const char* const kWebContentSecurityPolicy;

}  // namespace colltune
