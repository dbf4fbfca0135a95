// Campaign progress on the terminal: a redrawn progress line when stderr is a terminal, plain
// log lines otherwise (CI logs, pipes).
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace colltune {

class ProgressDisplay {
 public:
  explicit ProgressDisplay(std::FILE* out = stderr);
  ~ProgressDisplay();

  // Feed every engine event here.
  void on_event(const std::string& type, const nlohmann::json& payload);
  // Ends the current progress line (before printing anything else).
  void finish_line();

 private:
  void draw();

  std::FILE* out_;
  bool tty_;
  bool line_open_ = false;
  std::string context_label_;
  std::string phase_;
  int evaluations_done_ = 0;
  int planned_ = 0;
  int runs_done_ = 0;
  int runs_failed_ = 0;
  std::string last_;
};

}  // namespace colltune
