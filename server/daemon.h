// The colltune daemon: the store, the campaign scheduler, the event hub and the REST API over
// HTTP(S), wired together. `colltune serve` runs one; tests run one in-process too.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "campaign/database_owner.h"
#include "campaign/store.h"
#include "server/config.h"
#include "server/daemon_campaigns.h"
#include "server/events.h"
#include "server/http_api.h"
#include "server/http_router.h"
#include "server/metrics.h"

namespace httplib {
class Server;
}

namespace colltune {

class HttpGate;

class Daemon {
 public:
  // Opens the store (creating it) and declares the routes; listens only in start().
  explicit Daemon(DaemonConfig config);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Binds the listening socket (std::runtime_error when it cannot, e.g. the port is taken or
  // the TLS files do not load), serves requests on background threads and resumes campaigns.
  void start();
  // Stops accepting, ends event streams, interrupts campaign workers (their campaigns stay
  // "running" and resume on the next start) and joins every thread. Idempotent.
  void stop();

  int port() const { return port_; }
  // "http://127.0.0.1:8080" (https when TLS is on).
  std::string url() const;

  Store& store() { return *store_; }
  CampaignManager& campaigns() { return *campaigns_; }
  const Router& router() const { return *router_; }
  const DaemonConfig& config() const { return config_; }

 private:
  DaemonConfig config_;
  std::unique_ptr<DatabaseOwner> owner_;  // first: released last
  std::unique_ptr<Store> store_;
  std::unique_ptr<EventHub> hub_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<CampaignManager> campaigns_;
  std::unique_ptr<ApiContext> api_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<httplib::Server> server_;  // routes only: the gate owns every socket
  std::unique_ptr<HttpGate> gate_;
  int port_ = 0;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace colltune
