// Test helper: runs a program (argv, no shell) with extra environment and a timeout, through the
// project's one door for child processes (runner/process.h), in the shape the tests assert on.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace colltune::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed; -1 when it could not start
  bool timed_out = false;
  std::string out, err;  // err says "cannot start ..." when it could not start
  double seconds = 0;
};

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& extra_env = {},
                          double timeout_s = 60);

}  // namespace colltune::testing
