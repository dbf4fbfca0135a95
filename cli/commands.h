// Subcommands of the colltune binary. Each add_* registers its options and callback.
#pragma once

#include <CLI/CLI.hpp>

namespace colltune {

void add_tune_command(CLI::App& app);
void add_serve_command(CLI::App& app);     // colltune serve (the daemon)
void add_campaign_command(CLI::App& app);  // colltune campaign ... (daemon client)
void add_export_command(CLI::App& app);
void add_rules_command(CLI::App& app);
void add_fingerprint_command(CLI::App& app);  // colltune fingerprint
void add_retune_command(CLI::App& app);       // colltune retune (daemon client, for cron)
void add_sentinel_command(CLI::App& app);     // colltune sentinel
void add_report_command(CLI::App& app);       // colltune report (table or --json)

}  // namespace colltune
