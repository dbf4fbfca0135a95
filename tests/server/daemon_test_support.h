// Shared by the daemon and HTTP tests: temporary folders, an in-process daemon on a free
// loopback port, the real `colltune serve` binary as a child process, and an SSE reader.
#pragma once

#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/file_text.h"
#include "runner/process.h"
#include "server/config.h"
#include "server/daemon.h"
#include "tests/support/temp_dir.h"

namespace colltune::testing {

inline constexpr const char* kAdminToken = "admin-token-0123456789abcdef";
inline constexpr const char* kViewerToken = "viewer-token-0123456789abcdef";

// A client of the daemon at `url` sending `token` as its bearer token (none when empty).
inline httplib::Client bearer_client(const std::string& url, const std::string& token = kAdminToken,
                                     int read_timeout_s = 30) {
  httplib::Client c(url);
  if (!token.empty()) c.set_default_headers({{"Authorization", std::string("Bearer ") + token}});
  c.set_read_timeout(read_timeout_s);
  return c;
}

inline nlohmann::json tokens_json() {
  return nlohmann::json::array({{{"token", kAdminToken}, {"role", "admin"}, {"name", "admin"}},
                                {{"token", kViewerToken}, {"role", "viewer"}, {"name", "viewer"}}});
}

// A small campaign on the simulated cluster: done in about a second.
inline nlohmann::json sim_campaign_spec(int budget = 6, std::uint64_t seed = 3) {
  return {{"name", "sim test"},
          {"backend", "sim"},
          {"contexts", {{{"collective", "bcast"}, {"comm_size", 8}}}},
          {"sizes", "4:4096"},
          {"strategy", "random"},
          {"budget", budget},
          {"seed", seed},
          {"batch_size", 4},
          {"final_repeats", 2}};
}

// An in-process daemon on 127.0.0.1:<any free port>, with the sim backend and two tokens.
class InProcessDaemon {
 public:
  explicit InProcessDaemon(nlohmann::json overrides = nlohmann::json::object()) {
    nlohmann::json config = {{"listen", "127.0.0.1:0"},
                             {"database", dir_ / "colltune.db"},
                             {"rules_dir", dir_ / "rules"},
                             {"backends", {{"sim", {{"noise", "none"}}}}},
                             {"tokens", tokens_json()}};
    config.update(overrides);
    daemon_ = std::make_unique<Daemon>(parse_daemon_config(config));
    daemon_->start();
  }
  Daemon& daemon() { return *daemon_; }
  const TempDir& dir() const { return dir_; }
  std::string url() const { return daemon_->url(); }

  httplib::Client client(const std::string& token = kAdminToken) const {
    return bearer_client(daemon_->url(), token);
  }

 private:
  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
};

inline nlohmann::json json_of(const httplib::Result& res) {
  if (!res) throw std::runtime_error("no answer: " + httplib::to_string(res.error()));
  return nlohmann::json::parse(res->body);
}

// Polls GET /api/v1/campaigns/{id} until its state is one of `states` (or the time is up).
inline nlohmann::json wait_for_state(httplib::Client& client, std::int64_t id,
                                     const std::vector<std::string>& states,
                                     std::chrono::seconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  nlohmann::json c;
  for (;;) {
    auto res = client.Get("/api/v1/campaigns/" + std::to_string(id));
    if (res && res->status == 200) {
      c = nlohmann::json::parse(res->body);
      // "running" means a worker drives it; any other state counts once no worker is left.
      const bool active = c.at("active").get<bool>();
      for (const auto& s : states)
        if (c.at("state") == s && active == (s == "running")) return c;
    }
    if (std::chrono::steady_clock::now() > deadline) return c;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// What a live daemon reports of a campaign: its state and the runs it has recorded ("" and -1
// when it does not answer).
struct LiveProgress {
  std::string state;
  std::int64_t runs = -1;
  bool ended() const { return state == "done" || state == "failed"; }
};

inline LiveProgress live_progress(const std::string& url, std::int64_t id) {
  auto client = bearer_client(url, kAdminToken, 5);
  client.set_connection_timeout(2);
  auto res = client.Get("/api/v1/campaigns/" + std::to_string(id));
  if (!res || res->status != 200) return {};
  const auto c = nlohmann::json::parse(res->body);
  return {c.at("state").get<std::string>(), c.at("progress").value("runs", std::int64_t{-1})};
}

// When a kill test SIGKILLs each life of `colltune serve`. The first `draws` lives end when the
// campaign has recorded a number of runs drawn at random over the uninterrupted reference's
// runs (in order), after a further random delay of up to two runs' time: the kills spread over
// the whole campaign whatever the machine's load, and land between runs, inside jobs and (when
// two draws fall between the same runs) while the daemon resumes. Kill moments drawn in time
// would depend on how fast each life runs against the reference: on a loaded machine they
// bunch up where the campaign is slow. What the lives after the draws do is the test's call
// (wait_in_growing_window, or let the campaign end).
class KillMoments {
 public:
  // `reference_runs` and `reference_seconds`: the runs the reference recorded and its wall time.
  KillMoments(unsigned seed, std::int64_t reference_runs, double reference_seconds, int draws)
      : rng_(seed),
        run_seconds_(reference_seconds /
                     static_cast<double>(std::max<std::int64_t>(1, reference_runs))),
        window_(2 * run_seconds_) {
    std::uniform_int_distribution<std::int64_t> draw(1,
                                                     std::max<std::int64_t>(1, reference_runs - 1));
    for (int i = 0; i < draws; ++i) at_runs_.push_back(draw(rng_));
    std::sort(at_runs_.begin(), at_runs_.end());
  }
  bool draws_left() const { return next_ < at_runs_.size(); }
  // The next drawn moment, in the life the daemon at `url` lives: waits (polling every 5 ms,
  // at most 120 s) until campaign `id` has recorded the next drawn number of runs, then up to
  // two runs' time more. Returns the progress last seen; ended(): nothing is left to kill.
  LiveProgress wait_for_drawn(const std::string& url, std::int64_t id) {
    LiveProgress now = live_progress(url, id);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!now.ended() && now.runs < at_runs_.at(next_) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      now = live_progress(url, id);
    }
    ++next_;
    if (!now.ended())
      std::this_thread::sleep_for(std::chrono::duration<double>(
          std::uniform_real_distribution<double>(0.0, 2 * run_seconds_)(rng_)));
    return now;
  }
  // A random delay in a window that starts at two runs' time and doubles with each call: a
  // step that records nothing until it ends (the campaign's last one refits the model's
  // hyper-parameters and writes the rules file) is outgrown, where a window that did not grow
  // could land in it every time.
  void wait_in_growing_window() {
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::uniform_real_distribution<double>(0.0, window_)(rng_)));
    window_ *= 2;
  }

 private:
  std::mt19937 rng_;
  double run_seconds_;
  double window_;
  std::vector<std::int64_t> at_runs_;
  std::size_t next_ = 0;
};

struct SseEvent {
  std::string id;
  std::string type;
  nlohmann::json data;
};

// Reads GET `path` as Server-Sent Events until `stop` returns true, the stream ends or the
// timeout passes. Returns every event read.
inline std::vector<SseEvent> read_sse(const std::string& url, const std::string& path,
                                      const httplib::Headers& headers,
                                      const std::function<bool(const SseEvent&)>& stop,
                                      std::chrono::seconds timeout) {
  httplib::Client c(url);
  c.set_read_timeout(timeout.count());
  std::vector<SseEvent> events;
  std::string buffer;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  c.Get(path, headers, [&](const char* data, std::size_t n) {
    buffer.append(data, n);
    for (std::size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
      std::string block = buffer.substr(0, end);
      buffer.erase(0, end + 2);
      SseEvent e;
      std::istringstream lines(block);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind("id: ", 0) == 0) e.id = line.substr(4);
        if (line.rfind("event: ", 0) == 0) e.type = line.substr(7);
        if (line.rfind("data: ", 0) == 0) e.data = nlohmann::json::parse(line.substr(6));
      }
      if (e.type.empty()) continue;
      events.push_back(e);
      if (stop(e)) return false;
    }
    return std::chrono::steady_clock::now() < deadline;
  });
  return events;
}

// The real `colltune serve` as a child process; its output goes to a log file.
class DaemonProcess {
 public:
  DaemonProcess(std::string binary, std::string config_path, std::string log_path)
      : binary_(std::move(binary)), config_(std::move(config_path)), log_(std::move(log_path)) {}
  ~DaemonProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // Starts it and waits until it prints its URL. Returns the URL.
  pid_t pid() const { return pid_; }  // 0 when not running
  std::string start(std::chrono::seconds timeout = std::chrono::seconds(30)) {
    std::ofstream(log_, std::ios::trunc).close();
    // Everything the child needs is built before fork (no allocation after it).
    std::vector<char*> argv = {const_cast<char*>(binary_.c_str()), const_cast<char*>("serve"),
                               const_cast<char*>("--config"), const_cast<char*>(config_.c_str()),
                               nullptr};
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      const int fd = ::open(log_.c_str(), O_WRONLY | O_APPEND);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(binary_.c_str(), argv.data());
      ::_exit(127);
    }
    const std::regex listening("listening on (https?://[^ ]+)");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      const std::string s = log();
      if (std::regex_search(s, m, listening)) return url_ = m[1];
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        throw std::runtime_error("colltune serve exited early:\n" + s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error("colltune serve did not start in time");
  }

  // Sends `signal` and reaps the process. Returns its wait status.
  int stop(int signal) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
    return status;
  }

  const std::string& url() const { return url_; }
  std::string log() const { return read_file_text(log_).value_or(""); }

 private:
  std::string binary_;
  std::string config_;
  std::string log_;
  pid_t pid_ = 0;
  std::string url_;
};

// Runs argv (no shell) with stdout to `out_path` and stderr passed on to the test's own;
// returns the exit code (-1 when it could not start or was killed).
inline int run_program(const std::vector<std::string>& args, const std::string& out_path) {
  const auto r = colltune::run_process(args);
  std::cerr << r.stderr_text;
  if (!r.spawn_error.empty()) return -1;
  std::ofstream(out_path, std::ios::binary | std::ios::trunc) << r.stdout_text;
  return r.exit_code;
}

inline void write_json_file(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path, std::ios::trunc);
  out << j.dump(2);
}

}  // namespace colltune::testing
