// Campaign progress for people and for logs, from the engine's events (tune) or the daemon's
// event stream (campaign watch): the same lines either way.
//  - On a terminal: a redrawn line with the phase, a bar, evaluations, runs, elapsed time and an
//    ETA for the current context's search, plus a line when the search stops before its plan.
//  - Otherwise (cron logs, pipes, CI): plain lines, each starting with an ISO-8601 UTC time.
#pragma once

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace colltune {

enum class ProgressMode { detect, terminal, plain };  // detect: terminal when `out` is a tty

class ProgressDisplay {
 public:
  explicit ProgressDisplay(std::FILE* out = stderr, ProgressMode mode = ProgressMode::detect);
  ~ProgressDisplay();

  // Feed every engine event here (type, payload).
  void on_event(const std::string& type, const nlohmann::json& payload);
  // Ends the current progress line (before printing anything else).
  void finish_line();
  // Seconds since the epoch; tests set a fake clock.
  void set_clock(std::function<double()> now) { now_ = std::move(now); }
  // Planned evaluations per context when the strategy plans adaptively (0 = unknown): the ETA's
  // denominator then.
  void set_budget(int budget) { budget_ = budget; }

 private:
  void draw();
  // One finished line: on a terminal as is, otherwise with the time first.
  void line(const std::string& text);

  std::FILE* out_;
  bool tty_;
  bool line_open_ = false;
  std::function<double()> now_;
  double context_start_ = 0;
  int budget_ = 0;
  std::string context_label_;
  std::string phase_;
  int evaluations_done_ = 0;
  int planned_ = 0;
  int runs_done_ = 0;
  int runs_failed_ = 0;
  std::string last_;
};

// "1h02m", "3m05s", "42s".
std::string format_duration(double seconds);

}  // namespace colltune
