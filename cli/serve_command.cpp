// `colltune serve`: the daemon. Settings come from --config FILE, COLLTUNE_<KEY> variables and
// one flag per key (--listen, --database, ...), flags winning. SIGINT/SIGTERM stop it cleanly;
// its running campaigns resume when it starts again (a kill -9 loses nothing either).
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "cli/conventions.h"
#include "core/install_layout.h"
#include "server/config.h"
#include "server/daemon.h"
#include "server/malloc_arenas.h"

namespace colltune {
namespace {

struct ServeArgs {
  std::string config_file;
  std::map<std::string, std::string> values;  // key -> flag text, only when given
};

int run_serve(const ServeArgs& args, const std::map<std::string, CLI::Option*>& options) {
  std::map<std::string, std::string> flags;
  for (const auto& [key, option] : options)
    if (option->count() > 0) flags[key] = args.values.at(key);
  DaemonConfig config = parse_daemon_config(layered_daemon_config(
      args.config_file, [](const char* name) { return std::getenv(name); }, flags));
  // No web_root given: the dashboard installed with this binary (or built in its source tree).
  if (config.web_root.empty()) {
    std::error_code ec;
    const auto web = install_layout::web_dir();
    if (!web.empty() && std::filesystem::is_regular_file(web / "index.html", ec))
      config.web_root = web.string();
  }
  if (spdlog::get_level() == spdlog::level::warn) spdlog::set_level(spdlog::level::info);

  // Before any thread: one malloc arena per core, not eight (server/malloc_arenas.h).
  const int arenas = bound_malloc_arenas();
  if (arenas > 0) spdlog::info("malloc arenas bounded to {}", arenas);

  // Every thread the daemon starts inherits this mask; only sigwait below sees the signals.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  Daemon daemon(config);
  daemon.start();
  std::printf("colltune: listening on %s (store %s)\n", daemon.url().c_str(),
              config.database.c_str());
  if (!config.web_root.empty())
    std::printf("colltune: dashboard at %s/ (from %s)\n", daemon.url().c_str(),
                config.web_root.c_str());
  else
    std::printf("colltune: dashboard not installed; %s/ says how to get it\n",
                daemon.url().c_str());
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::printf("colltune: signal %d, stopping (running campaigns resume at the next start)\n",
              signal_number);
  std::fflush(stdout);
  daemon.stop();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto options = std::make_shared<std::map<std::string, CLI::Option*>>();
  auto* cmd = app.add_subcommand("serve", "Run the colltune daemon (REST API, campaigns, events)");
  cmd->add_option("--config", args->config_file,
                  "JSON config file; its keys are the options below without --, with _ for -");
  static const std::map<std::string, std::string> help = {
      {"listen", "host:port to listen on (default 127.0.0.1:8080; port 0 = any)"},
      {"database", "SQLite store (default colltune.db)"},
      {"rules_dir", "Directory deployed rules files are written to (and nowhere else)"},
      {"osu_dir", "OMB folder for the local backend (default: the bundled benchmark)"},
      {"backends", "JSON object {\"local\": {settings..., \"max_concurrent_jobs\": N}, ...}"},
      {"tokens", "JSON array [{\"token\"|\"sha256\": ..., \"role\": \"admin\"|\"viewer\"}]"},
      {"anonymous_read", "Allow reads without a token from loopback clients (true/false)"},
      {"max_concurrent_jobs", "Default cap of campaigns running at once per backend"},
      {"tls_cert", "PEM certificate: serve HTTPS"},
      {"tls_key", "PEM private key of the certificate"},
      {"max_body_bytes", "Largest request body accepted (default 1048576)"},
      {"http_threads", "HTTP worker threads (default 96)"},
      {"max_event_streams", "Concurrent /api/v1/events streams (default 32)"},
      {"max_event_streams_per_client", "Event streams one client address may hold (default 8)"},
      {"http_header_timeout", "Seconds for a TLS handshake and a whole request head (default 10)"},
      {"http_idle_timeout",
       "Seconds a keep-alive connection may wait between requests (default 10)"},
      {"max_connections", "Open HTTP connections in all (default 4096)"},
      {"max_connections_per_client", "Open HTTP connections from one address (default 128)"},
      {"web_root",
       "Folder of the built web dashboard, served at / (default: the one installed with "
       "colltune, <datadir>/colltune/web, or web/dist in a build tree)"}};
  for (const auto& key : daemon_config_keys()) {
    std::string flag = "--" + key;
    for (auto& c : flag)
      if (c == '_') c = '-';
    if (key == "database") flag = "--db,--database";  // --db, as every command names a store
    std::string text = help.count(key) ? help.at(key) : key;
    std::string var = "COLLTUNE_" + key;
    for (auto& c : var) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    args->values[key];
    (*options)[key] = cmd->add_option(flag, args->values[key], text + " [env " + var + "]");
  }
  cmd->footer(
      "Precedence: flag > environment > config file > default. Tokens may be given as SHA-256 "
      "hex digests (\"sha256\"); plain ones are hashed at start and never stored.");
  set_exit_codes(cmd, {{kExitOk, "stopped by SIGINT/SIGTERM after a clean shutdown"}});
  cmd->callback([args, options] {
    int rc = run_serve(*args, *options);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace colltune
