// colltune: tunes Open MPI's coll_tuned collective algorithms for this machine or cluster.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/app.h"
#include "cli/conventions.h"

int main(int argc, char** argv) {
  // Logs and warnings go to stderr: stdout carries what a command prints (tables, JSON).
  spdlog::set_default_logger(spdlog::stderr_color_mt("colltune"));
  CLI::App app;
  colltune::configure_app(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own exit code; it printed its message
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? colltune::kExitOk : colltune::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "colltune: error: %s\n", e.what());
    return colltune::kExitFailure;
  }
  return colltune::kExitOk;
}
