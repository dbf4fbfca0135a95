// A small client of the daemon's REST API for the cron-side commands (`colltune retune`,
// `colltune sentinel --server`, `colltune fingerprint --server`). Server and token default to
// the environment (COLLTUNE_SERVER, default http://127.0.0.1:8080; COLLTUNE_TOKEN).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace colltune {

struct DaemonEndpoint {
  std::string server;   // http(s)://host:port; empty = $COLLTUNE_SERVER or the default
  std::string token;    // empty = $COLLTUNE_TOKEN
  std::string ca_cert;  // PEM file to trust for https (optional)
};

struct DaemonAnswer {
  int status = 0;
  nlohmann::json body;
};

// Sends one request (body: JSON text for POST; empty for GET). Throws std::runtime_error when
// the daemon cannot be reached, answers an error (>= 400, with the daemon's message) or does
// not answer JSON; std::invalid_argument for a malformed server URL.
DaemonAnswer daemon_request(const DaemonEndpoint& endpoint, const std::string& method,
                            const std::string& path, const std::string& body = "",
                            int read_timeout_s = 300);

}  // namespace colltune
