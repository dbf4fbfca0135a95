#include "server/daemon.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <filesystem>
#include <stdexcept>
#include <utility>

#include "server/http_retune.h"
#include "server/http_static.h"

namespace colltune {
namespace {

// The dashboard folder is served to anyone without a token: refuse one that holds the store,
// the deployed rules or the TLS key (e.g. web_root "." next to colltune.db).
void check_web_root_holds_no_secrets(const DaemonConfig& config) {
  namespace fs = std::filesystem;
  if (config.web_root.empty()) return;
  const fs::path root = fs::weakly_canonical(config.web_root);
  const std::pair<const char*, std::string> guarded[] = {
      {"database", config.database == ":memory:" ? "" : config.database},
      {"rules_dir", config.rules_dir},
      {"tls_key", config.tls_key}};
  for (const auto& [key, path] : guarded) {
    if (path.empty()) continue;
    const fs::path relative = fs::weakly_canonical(path).lexically_relative(root);
    if (!relative.empty() && *relative.begin() != "..")
      throw std::invalid_argument(std::string("web_root: '") + config.web_root + "' holds " + key +
                                  " '" + path +
                                  "'; files under web_root are public, point it at "
                                  "the built dashboard (web/dist) only");
  }
}

}  // namespace

Daemon::Daemon(DaemonConfig config) : config_(std::move(config)) {
  check_web_root_holds_no_secrets(config_);  // before the store creates any file
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
  if (config_.tls()) {
    server_ =
        std::make_unique<httplib::SSLServer>(config_.tls_cert.c_str(), config_.tls_key.c_str());
    if (!server_->is_valid())
      throw std::runtime_error("cannot load TLS certificate " + config_.tls_cert + " / key " +
                               config_.tls_key);
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  const auto threads = static_cast<std::size_t>(config_.http_threads);
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_keep_alive_max_count(10000);
  server_->set_keep_alive_timeout(10);
  server_->set_read_timeout(10);
  server_->set_write_timeout(10);
  server_->set_tcp_nodelay(true);
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second
  // daemon share the port (and half the requests) instead of failing to start.
  int listen_socket = -1;
  server_->set_socket_options([&listen_socket](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_socket = sock;
  });
  if (config_.listen_host.find(':') != std::string::npos) server_->set_address_family(AF_INET6);
  router_->install(*server_);
  if (!config_.web_root.empty()) serve_web_root(*server_, config_.web_root);

  if (config_.listen_port == 0) {
    port_ = server_->bind_to_any_port(config_.listen_host);
    if (port_ < 0) port_ = 0;
  } else if (server_->bind_to_port(config_.listen_host, config_.listen_port)) {
    port_ = config_.listen_port;
  }
  if (port_ <= 0)
    throw std::runtime_error("cannot listen on " + config_.listen_host + ":" +
                             std::to_string(config_.listen_port) +
                             " (address in use or not local?)");
  // httplib listens with a backlog of 5: a burst of connections (64 clients at once) would
  // overflow it and wait for SYN retransmits. Listening again only raises the backlog.
  if (listen_socket >= 0) ::listen(listen_socket, 1024);
  server_->set_socket_options([](socket_t sock) {  // drop the capture of a local
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  listener_ = std::thread([this] { server_->listen_after_bind(); });
  campaigns_->start();
  started_ = true;
  if (config_.tokens.empty() && !config_.anonymous_read)
    spdlog::warn(
        "no tokens configured and anonymous_read is off: every API call except health "
        "will be refused");
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
  server_->stop();
  if (listener_.joinable()) listener_.join();
}

}  // namespace colltune
