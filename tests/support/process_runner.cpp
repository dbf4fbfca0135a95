#include "tests/support/process_runner.h"

#include "runner/process.h"

namespace colltune::testing {

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& extra_env, double timeout_s) {
  ProcessOptions options;
  options.env = extra_env;
  options.timeout_s = timeout_s;
  options.kill_grace_s = 0.5;
  const auto run = colltune::run_process(argv, options);
  ProcessResult result;
  result.seconds = run.elapsed_s;
  if (!run.spawn_error.empty()) {
    result.err = "cannot start " + (argv.empty() ? std::string("(empty argv)") : argv[0]) + ": " +
                 run.spawn_error;
    return result;
  }
  result.exit_code = run.status_code();
  result.timed_out = run.timed_out;
  result.out = run.stdout_text;
  result.err = run.stderr_text;
  return result;
}

}  // namespace colltune::testing
