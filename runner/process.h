// Runs a program from an argv vector (never through a shell), captures its output, and on
// timeout or cancellation kills everything it started.
//
// The program runs in a session of its own (setsid), so every process it starts shares that
// session id even when it moves to process groups of its own (Open MPI puts each local rank in
// its own group) or is orphaned by the death of its parent (mpirun killed before its ranks).
// Killing a launch signals every process of the session: SIGTERM, then SIGKILL after
// `kill_grace_s`; the leader is reaped only afterwards, so its id, which names the session,
// cannot be reused meanwhile.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace colltune {

struct ProcessOptions {
  std::map<std::string, std::string> env;  // added to (and overriding) the current environment
  std::vector<std::string> unset_env;      // removed from the environment
  std::optional<std::string> cwd;
  double timeout_s = 0;                     // 0 = none
  std::size_t max_output_bytes = 16 << 20;  // per stream; the rest is dropped (and flagged)
  std::optional<std::string> stdin_text;    // fed to the child's stdin; /dev/null when unset
  // Polled about every 50 ms while the child runs; returning true kills the child.
  std::function<bool()> should_stop;
  // Seconds between SIGTERM and SIGKILL when the launch is killed.
  double kill_grace_s = 3.0;
  // Also kill what is left of the session when the program exits by itself (ranks that
  // outlived their mpirun). For launches that must leave nothing behind; off for programs that
  // may legitimately leave a daemon.
  bool kill_leftovers = false;
};

struct ProcessResult {
  int exit_code = -1;  // exit status, or -1 when killed by a signal
  int signal = 0;      // terminating signal, 0 when it exited
  bool timed_out = false;
  bool stopped = false;  // killed because should_stop returned true
  bool output_truncated = false;
  std::string stdout_text;
  std::string stderr_text;
  double elapsed_s = 0;
  std::string spawn_error;   // non-empty when the program could not be started at all
  int leftovers_killed = 0;  // processes of the session still alive after the program ended
  int survivors = 0;         // processes of the session still alive after SIGKILL (should be 0)

  bool succeeded() const { return spawn_error.empty() && !timed_out && !stopped && exit_code == 0; }
  // exit code, or 128 + signal, as a shell reports it
  int status_code() const { return signal ? 128 + signal : exit_code; }
};

// Runs argv[0] (looked up in PATH when it has no '/') with arguments argv[1..].
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Live (not zombie) processes whose session id is `sid`, read from /proc.
std::vector<int> session_processes(int sid);

// Looks a program up in PATH; nullopt when not found or not executable.
std::optional<std::string> find_in_path(const std::string& program);

// The last `max_lines` lines of text (for error excerpts), at most `max_bytes` bytes.
std::string tail_lines(const std::string& text, int max_lines = 20, std::size_t max_bytes = 4096);

}  // namespace colltune
