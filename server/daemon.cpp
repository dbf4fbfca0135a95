#include "server/daemon.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <filesystem>
#include <stdexcept>
#include <utility>

#include "server/http_gate.h"
#include "server/http_retune.h"
#include "server/http_static.h"

namespace colltune {
namespace {

// The dashboard folder is served to anyone without a token: refuse one from which the store
// (and its -wal/-shm files beside it), the deployed rules or the TLS key can be reached, e.g.
// web_root "." next to colltune.db, or a link inside web_root to the database's folder.
void check_secrets_out_of_web_root(const DaemonConfig& config) {
  if (config.web_root.empty()) return;
  const std::string db = config.database == ":memory:" ? "" : config.database;
  std::vector<std::pair<std::string, std::string>> secrets = {
      {"database", db}, {"rules_dir", config.rules_dir}, {"tls_key", config.tls_key}};
  if (!db.empty())
    for (const char* suffix : {"-wal", "-shm", "-journal"})
      secrets.push_back({"database", db + suffix});
  check_web_root_holds_no_secrets(config.web_root, secrets);
}

}  // namespace

Daemon::Daemon(DaemonConfig config) : config_(std::move(config)) {
  check_secrets_out_of_web_root(config_);  // before the store creates any file
  owner_ = std::make_unique<DatabaseOwner>(config_.database, "colltune serve");
  store_ = std::make_unique<Store>(config_.database);
  hub_ = std::make_unique<EventHub>(*store_);
  metrics_ = std::make_unique<Metrics>();
  hub_->add_listener([m = metrics_.get()](const StreamEvent& e) { m->count_event(e.type); });
  campaigns_ = std::make_unique<CampaignManager>(*store_, *hub_, *metrics_, config_);
  api_.reset(new ApiContext{*store_, *hub_, *campaigns_, *metrics_, config_});
  router_ = std::make_unique<Router>(TokenAuthenticator(config_.tokens), *metrics_,
                                     RouterOptions{config_.anonymous_read, config_.max_body_bytes});
  add_api_routes(*router_, *api_);
  add_retune_routes(*router_, *api_);  // fingerprint, retune (server/http_retune.h)
}

Daemon::~Daemon() { stop(); }

std::string Daemon::url() const {
  const bool v6 = config_.listen_host.find(':') != std::string::npos;
  return std::string(config_.tls() ? "https" : "http") + "://" +
         (v6 ? "[" + config_.listen_host + "]" : config_.listen_host) + ":" + std::to_string(port_);
}

void Daemon::start() {
  if (started_) return;
  if (!config_.rules_dir.empty()) std::filesystem::create_directories(config_.rules_dir);
  // httplib parses, routes and answers requests; the gate (server/http_gate.h) owns the
  // sockets, the TLS sessions and the worker threads.
  server_ = std::make_unique<httplib::Server>();
  server_->set_keep_alive_max_count(10000);  // announced in Keep-Alive; the gate bounds idling
  server_->set_keep_alive_timeout(config_.http_idle_timeout);
  router_->install(*server_);
  if (!config_.web_root.empty())
    serve_web_root(*server_, config_.web_root);
  else
    serve_dashboard_missing_page(*server_);
  HttpGateOptions gate;
  gate.workers = config_.http_threads;
  gate.header_timeout = std::chrono::seconds(config_.http_header_timeout);
  gate.idle_timeout = std::chrono::seconds(config_.http_idle_timeout);
  gate.max_connections = config_.max_connections;
  gate.max_connections_per_client = config_.max_connections_per_client;
  gate.tls_cert = config_.tls_cert;
  gate.tls_key = config_.tls_key;
  gate_ = std::make_unique<HttpGate>(*server_, gate);
  port_ = gate_->bind(config_.listen_host, config_.listen_port);
  api_->http_stats = [g = gate_.get()] { return g->stats(); };
  gate_->start();
  campaigns_->start();
  started_ = true;
  if (config_.tokens.empty() && !config_.anonymous_read)
    spdlog::warn(
        "no tokens configured and anonymous_read is off: every API call except health "
        "will be refused (`colltune token new` prints one and its config entry)");
  if (!config_.tls() && config_.listen_host != "127.0.0.1" && config_.listen_host != "::1" &&
      config_.listen_host != "localhost")
    spdlog::warn("listening on {} without TLS: bearer tokens travel in clear text",
                 config_.listen_host);
}

void Daemon::stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  campaigns_->stop();
  hub_->close();  // event streams end within a second
  gate_->stop();
}

}  // namespace colltune
