// colltune: tunes Open MPI's coll_tuned collective algorithms for this machine or cluster.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"colltune: autotuner for Open MPI collective algorithms (coll_tuned)"};
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Log details (debug level)");
  app.set_version_flag("--version", "colltune 0.1.0");
  app.parse_complete_callback([&] {
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
  });
  colltune::add_tune_command(app);
  colltune::add_serve_command(app);
  colltune::add_campaign_command(app);
  colltune::add_export_command(app);
  colltune::add_report_command(app);
  colltune::add_rules_command(app);
  colltune::add_fingerprint_command(app);
  colltune::add_retune_command(app);
  colltune::add_sentinel_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "colltune: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
