// Test helper: runs a program (argv, no shell) with extra environment, captures its output,
// kills its process group after a timeout.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace colltune::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed
  bool timed_out = false;
  std::string out, err;
  double seconds = 0;
};

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& extra_env,
                          double timeout_s = 60);

}  // namespace colltune::testing
