// colltune: tunes Open MPI's coll_tuned collective algorithms for this machine or cluster.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/conventions.h"
#include "core/version.h"

int main(int argc, char** argv) {
  // Logs and warnings go to stderr: stdout carries what a command prints (tables, JSON).
  spdlog::set_default_logger(spdlog::stderr_color_mt("colltune"));
  CLI::App app{"colltune: autotuner for Open MPI collective algorithms (coll_tuned)"};
  app.require_subcommand(1);
  // Options of colltune itself (-v) are accepted after the subcommand too ("tune -v").
  app.fallthrough();
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Log details (debug level)");
  app.set_version_flag("--version", "colltune " + std::string(colltune::kColltuneVersion));
  app.parse_complete_callback(
      [&] { spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn); });
  colltune::add_tune_command(app);
  colltune::add_serve_command(app);
  colltune::add_campaign_command(app);
  colltune::add_export_command(app);
  colltune::add_report_command(app);
  colltune::add_rules_command(app);
  colltune::add_fingerprint_command(app);
  colltune::add_retune_command(app);
  colltune::add_sentinel_command(app);
  // After the subcommands, which would inherit it.
  app.footer(
      "Exit codes: 0 success, 1 error, 64 bad command line, 130 interrupted; each "
      "command's --help lists its own (docs/cli.md).");
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
