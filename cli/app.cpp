#include "cli/app.h"

#include <spdlog/spdlog.h>

#include "cli/commands.h"

namespace colltune {

const char* const kColltuneVersion = "colltune 0.1.0";

void configure_app(CLI::App& app) {
  app.description("colltune: autotuner for Open MPI collective algorithms (coll_tuned)");
  app.name("colltune");
  app.require_subcommand(1);
  CLI::Option* verbose = app.add_flag("-v,--verbose")->description("Log details (debug level)");
  app.set_version_flag("--version", kColltuneVersion);
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
}

}  // namespace colltune
