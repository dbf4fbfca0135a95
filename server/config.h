// The daemon's settings (`colltune serve`): a JSON file, each key overridable by the environment
// variable COLLTUNE_<KEY> (upper case) and by a command-line flag, in that order of precedence
// (flag > environment > file > default).
//
//   {
//     "listen": "127.0.0.1:8080",          host:port, [v6]:port; port 0 = any free port
//     "database": "colltune.db",           SQLite store
//     "rules_dir": "/etc/colltune/rules",  deployed rules files go here and nowhere else
//     "osu_dir": "",                       default OMB folder of the local backend
//     "backends": {"local": {"max_concurrent_jobs": 1, ...settings of make_backend}},
//     "tokens": [{"token": "...", "role": "admin"}, {"sha256": "<hex>", "role": "viewer"}],
//     "anonymous_read": false,             reads without a token, from loopback clients only
//     "max_concurrent_jobs": 1,            default cap of running campaigns per backend
//     "tls_cert": "", "tls_key": "",       PEM files: serve HTTPS when both are set
//     "max_body_bytes": 1048576, "http_threads": 96, "max_event_streams": 32,
//     "max_event_streams_per_client": 8,   event streams one client address may hold
//     "http_header_timeout": 10,           s: TLS handshake + whole request head (then 408)
//     "http_idle_timeout": 10,             s: a keep-alive connection between requests
//     "max_connections": 4096,             open connections (also capped by RLIMIT_NOFILE)
//     "max_connections_per_client": 128    open connections from one client address
//   (server/http_gate.h: waiting for a request head holds no worker thread)
//   }
//
// Unknown keys, wrong types and out-of-range values are rejected with a message naming the key.
// Plain tokens are hashed (SHA-256) while parsing and never kept.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/auth.h"

namespace colltune {

struct BackendConfig {
  std::string name;
  nlohmann::json settings = nlohmann::json::object();  // as given to make_backend
  int max_concurrent_jobs = 1;                         // campaigns running at once on this backend
};

struct DaemonConfig {
  std::string listen_host = "127.0.0.1";
  int listen_port = 8080;
  std::string database = "colltune.db";
  std::string rules_dir;  // empty: deploy and rollback are refused
  std::string osu_dir;
  std::string web_root;                 // built dashboard (web/dist) served at /; empty: none
  std::vector<BackendConfig> backends;  // never empty after parsing (default: local)
  std::vector<TokenEntry> tokens;
  bool anonymous_read = false;
  int max_concurrent_jobs = 1;
  std::string tls_cert;
  std::string tls_key;
  std::size_t max_body_bytes = 1 << 20;
  int http_threads = 96;
  int max_event_streams = 32;
  int max_event_streams_per_client = 8;
  int http_header_timeout = 10;  // seconds
  int http_idle_timeout = 10;    // seconds
  int max_connections = 4096;
  int max_connections_per_client = 128;

  const BackendConfig* backend(const std::string& name) const;
  bool tls() const { return !tls_cert.empty(); }
};

// Keys a config may hold, in the order they are documented.
const std::vector<std::string>& daemon_config_keys();

// Parses a config object (every key optional). Throws std::invalid_argument.
DaemonConfig parse_daemon_config(const nlohmann::json& j);

// Sets `key` of `config` from text given on a command line or in the environment: strings are
// taken as they are, numbers and booleans parsed, structured keys (backends, tokens) parsed as
// JSON. `source` names where the text came from, for the error message.
void apply_config_override(nlohmann::json& config, const std::string& key, const std::string& text,
                           const std::string& source);

// file (may be empty: no file) + COLLTUNE_<KEY> variables from `getenv` + flag overrides.
nlohmann::json layered_daemon_config(const std::string& file,
                                     const std::function<const char*(const char*)>& getenv_fn,
                                     const std::map<std::string, std::string>& flags);

// "127.0.0.1:8080", "[::1]:0", "localhost:9000" -> host and port. Throws on a bad value.
std::pair<std::string, int> parse_listen_address(const std::string& text);

}  // namespace colltune
