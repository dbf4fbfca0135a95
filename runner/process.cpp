#include "runner/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

extern char** environ;

namespace colltune {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> build_environment(const ProcessOptions& options) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& name : options.unset_env) env.erase(name);
  for (const auto& [k, v] : options.env) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

// Sends `sig` to every process of the session and to every process group they are in.
void signal_session(pid_t sid, int sig) {
  ::kill(-sid, sig);
  ::kill(sid, sig);
  std::set<pid_t> groups;
  for (int member : session_processes(sid)) {
    ::kill(member, sig);
    const pid_t group = ::getpgid(member);
    if (group > 1 && groups.insert(group).second) ::kill(-group, sig);
  }
}

// Waits up to `seconds` for the session (leader excepted) to be empty; true when it is.
bool wait_session_empty(pid_t sid, double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    bool empty = true;
    for (int member : session_processes(sid))
      if (member != sid) empty = false;
    if (empty) return true;
    if (Clock::now() >= until) return false;
    ::usleep(20000);
  }
}

// Kills what is left of the session `sid` (its leader has exited but is not reaped yet):
// SIGTERM, SIGKILL after the grace period. Counts what was found and what survived.
void kill_leftovers(pid_t sid, double grace_s, ProcessResult& result) {
  int found = 0;
  for (int member : session_processes(sid))
    if (member != sid) ++found;
  if (found == 0) return;
  result.leftovers_killed = found;
  signal_session(sid, SIGTERM);
  if (wait_session_empty(sid, grace_s)) return;
  signal_session(sid, SIGKILL);
  if (wait_session_empty(sid, 5.0)) return;
  for (int member : session_processes(sid))
    if (member != sid) ++result.survivors;
}

}  // namespace

std::vector<int> session_processes(int sid) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;  // gone meanwhile
    // pid (comm) state ppid pgrp session ...; comm may hold spaces and parentheses.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    long ppid = 0, pgrp = 0, session = 0;
    if (!(fields >> state >> ppid >> pgrp >> session)) continue;
    if (session == sid && state != 'Z' && state != 'X') out.push_back(std::stoi(name));
  }
  return out;
}

std::optional<std::string> find_in_path(const std::string& program) {
  if (program.find('/') != std::string::npos)
    return ::access(program.c_str(), X_OK) == 0 ? std::optional<std::string>(program)
                                                : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string paths = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= paths.size()) {
    auto colon = paths.find(':', start);
    if (colon == std::string::npos) colon = paths.size();
    std::string dir = paths.substr(start, colon - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = colon + 1;
  }
  return std::nullopt;
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  if (argv.empty()) {
    result.spawn_error = "empty command";
    return result;
  }
  auto program = find_in_path(argv[0]);
  if (!program) {
    result.spawn_error = "program not found: " + argv[0];
    return result;
  }

  int out_pipe[2], err_pipe[2], in_pipe[2], exec_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC) || ::pipe2(in_pipe, O_CLOEXEC) ||
      ::pipe2(exec_pipe, O_CLOEXEC)) {
    result.spawn_error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }

  std::vector<std::string> env_strings = build_environment(options);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argvp;
  for (auto& s : args) argvp.push_back(s.data());
  argvp.push_back(nullptr);

  const auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    result.spawn_error = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    // Child: a session of its own, which everything it starts inherits (see process.h).
    ::setsid();
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    if (options.cwd && ::chdir(options.cwd->c_str()) != 0) {
      int e = errno;
      (void)!::write(exec_pipe[1], &e, sizeof e);
      ::_exit(127);
    }
    ::execve(program->c_str(), argvp.data(), envp.data());
    int e = errno;
    (void)!::write(exec_pipe[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(in_pipe[0]);
  ::close(exec_pipe[1]);

  int exec_errno = 0;
  if (::read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    ::close(exec_pipe[0]);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::close(in_pipe[1]);
    ::waitpid(pid, nullptr, 0);
    result.spawn_error = "cannot start " + *program + ": " + std::strerror(exec_errno);
    return result;
  }
  ::close(exec_pipe[0]);

  if (options.stdin_text) {
    // Small inputs only (scripts); a large one would need polling on the write side too.
    const std::string& text = *options.stdin_text;
    std::size_t written = 0;
    while (written < text.size()) {
      ssize_t n = ::write(in_pipe[1], text.data() + written, text.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
  }
  ::close(in_pipe[1]);

  ::fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.stdout_text, &result.stderr_text};
  int open_streams = 2;
  bool killed = false;
  Clock::time_point kill_time{};
  char buffer[65536];

  while (open_streams > 0) {
    int ready = ::poll(fds, 2, 50);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        std::string& sink = *sinks[i];
        std::size_t room =
            options.max_output_bytes > sink.size() ? options.max_output_bytes - sink.size() : 0;
        if (static_cast<std::size_t>(n) > room) result.output_truncated = true;
        sink.append(buffer, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_streams;
      }
    }
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (!killed) {
      if (options.timeout_s > 0 && elapsed > options.timeout_s) {
        result.timed_out = true;
      } else if (options.should_stop && options.should_stop()) {
        result.stopped = true;
      }
      if (result.timed_out || result.stopped) {
        signal_session(pid, SIGTERM);
        killed = true;
        kill_time = now;
      }
    } else if (std::chrono::duration<double>(now - kill_time).count() > options.kill_grace_s) {
      signal_session(pid, SIGKILL);
      // Something outside the session may keep the pipes open; stop reading after a while.
      if (std::chrono::duration<double>(now - kill_time).count() > options.kill_grace_s + 3.0)
        break;
    }
  }
  for (auto& fd : fds)
    if (fd.fd >= 0) ::close(fd.fd);

  if (killed) {
    // Nothing of a killed launch may outlive it: the leader is not reaped yet, so the session
    // id still names this launch only.
    signal_session(pid, SIGKILL);
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 &&
           errno == EINTR) {
    }
    kill_leftovers(pid, 0, result);
  } else if (options.kill_leftovers) {
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 &&
           errno == EINTR) {
    }
    kill_leftovers(pid, options.kill_grace_s, result);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.exit_code = -1;
  }
  return result;
}

std::string tail_lines(const std::string& text, int max_lines, std::size_t max_bytes) {
  if (text.empty() || max_lines <= 0) return {};
  std::size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  std::size_t pos = end;
  int lines = 0;
  while (pos > 0 && lines < max_lines) {
    --pos;
    if (text[pos] == '\n') ++lines;
  }
  if (lines >= max_lines) ++pos;
  std::string out = text.substr(pos, end - pos);
  if (out.size() > max_bytes) out = out.substr(out.size() - max_bytes);
  return out;
}

}  // namespace colltune
