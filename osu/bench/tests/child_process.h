// Test helper: runs a program from an argv vector (no shell) with extra environment variables,
// captures stdout and stderr separately, and kills it after a timeout. Open MPI's scratch files
// of the child go to folders of its own, removed when it is over.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace colltune::osu_bench::testing {

struct ChildResult {
  int exit_code = -1;  // -1 when killed by a signal or not started
  bool timed_out = false;
  std::string out;
  std::string err;
  double elapsed_s = 0;
};

ChildResult run_child(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& extra_env, double timeout_s);

}  // namespace colltune::osu_bench::testing
