#include "cli/app.h"

#include <spdlog/spdlog.h>

#include <string>

#include "cli/commands.h"
#include "core/version.h"

namespace colltune {

void configure_app(CLI::App& app) {
  app.description("colltune: autotuner for Open MPI collective algorithms (coll_tuned)");
  app.name("colltune");
  app.require_subcommand(1);
  // Options of colltune itself (-v) are accepted after the subcommand too ("tune -v").
  app.fallthrough();
  CLI::Option* verbose = app.add_flag("-v,--verbose")->description("Log details (debug level)");
  app.set_version_flag("--version", "colltune " + std::string(kColltuneVersion));
  app.parse_complete_callback([verbose] {
    spdlog::set_level(verbose->count() > 0 ? spdlog::level::debug : spdlog::level::warn);
  });
  add_tune_command(app);
  add_serve_command(app);
  add_campaign_command(app);
  add_export_command(app);
  add_report_command(app);
  add_rules_command(app);
  add_fingerprint_command(app);
  add_retune_command(app);
  add_sentinel_command(app);
  add_token_command(app);
  // After the subcommands, which would inherit it.
  app.footer(
      "Exit codes: 0 success, 1 error, 64 bad command line, 130 interrupted; each "
      "command's --help lists its own (docs/cli.md).");
}

}  // namespace colltune
