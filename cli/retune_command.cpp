// `colltune retune`: asks the daemon whether the deployed rules still fit and, when they may
// not, to start a warm-started re-tuning campaign (the same spec as the campaign that made
// them). Meant for cron / systemd timers; see docs/retune.md.
//
//   colltune retune --if-changed [--max-age DAYS] [--server URL --token T]
//   colltune retune --max-age 30        re-tune rules older than 30 days
//   colltune retune                     re-tune now
//
// Exit: 0 nothing to do (a re-tune already running, or its rules awaiting a deploy), 10 a campaign
// was started, 3 nothing to compare with (no rules version, no recorded fingerprint, no source
// campaign), 1 error.
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "campaign/retune.h"
#include "cli/commands.h"
#include "cli/conventions.h"
#include "server/retune_client.h"

namespace colltune {
namespace {

struct RetuneArgs {
  DaemonEndpoint daemon;
  bool if_changed = false;
  double max_age_days = 0;
  std::int64_t rules_version_id = 0;
  bool dry_run = false;
  std::string reason;
  bool json = false;
};

std::string short_hash(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>().substr(0, 12) : std::string("none");
}

int run_retune(const RetuneArgs& args) {
  nlohmann::json body = {{"if_changed", args.if_changed}, {"dry_run", args.dry_run}};
  if (args.max_age_days > 0) body["max_age_days"] = args.max_age_days;
  if (!args.if_changed && args.max_age_days <= 0) {
    body["force"] = true;  // neither condition given: re-tune now
    body["reason"] = args.reason.empty() ? "re-tune requested (colltune retune)" : args.reason;
  } else if (!args.reason.empty()) {
    body["reason"] = args.reason;
  }
  if (args.rules_version_id > 0) body["rules_version_id"] = args.rules_version_id;
  const auto answer = daemon_request(args.daemon, "POST", "/api/v1/retune", body.dump());
  const nlohmann::json& d = answer.body;
  const std::string action = d.value("action", "");
  if (args.json) {
    std::cout << d.dump(2) << "\n";
  } else {
    if (d.contains("rules") && d["rules"].is_object()) {
      const auto& r = d["rules"];
      std::printf("rules version %lld%s, tuned %.1f days ago (fingerprint %s, now %s)\n",
                  static_cast<long long>(r.value("id", 0LL)),
                  r.value("deployed_to", "").empty()
                      ? " (not deployed)"
                      : (" (deployed to " + r.value("deployed_to", "") + ")").c_str(),
                  d.value("age_days", 0.0),
                  short_hash(r.value("fingerprint_hash", nlohmann::json())).c_str(),
                  short_hash(d.value("current_fingerprint_hash", nlohmann::json())).c_str());
    }
    const auto& changes = d.value("changes", nlohmann::json::array());
    if (!changes.empty()) {
      std::printf("changed since the rules were tuned:\n");
      for (const auto& c : changes) {
        auto show = [](const nlohmann::json& v) {
          std::string s = v.is_null()     ? "(absent)"
                          : v.is_string() ? v.get<std::string>()
                                          : v.dump();
          return s.size() > 100 ? s.substr(0, 97) + "..." : s;
        };
        std::printf("  %s: %s -> %s%s\n", c.value("field", "").c_str(), show(c["before"]).c_str(),
                    show(c["after"]).c_str(), c.value("relevant", false) ? "" : " (not relevant)");
      }
    }
    std::printf("%s\n", d.value("message", action).c_str());
  }
  if (action == "retune") return args.dry_run ? kExitNothingToDo : kExitRetuneStarted;
  if (action == "nothing" || action == "running" || action == "awaiting_deploy")
    return kExitNothingToDo;
  return kExitCannotCompare;
}

}  // namespace

void add_retune_command(CLI::App& app) {
  auto args = std::make_shared<RetuneArgs>();
  auto* cmd = app.add_subcommand(
      "retune", "Re-tune (warm-started) when the cluster changed or the rules are old (for cron)");
  cmd->add_flag("--if-changed", args->if_changed,
                "Only when the fingerprint changed relevantly since the deployed rules were tuned");
  cmd->add_option("--max-age", args->max_age_days, "Also re-tune rules older than DAYS")
      ->check(CLI::Range(0.0, 100000.0));
  cmd->add_option("--rules-version", args->rules_version_id,
                  "Rules version to check (default: the deployed one)");
  cmd->add_flag("--dry-run", args->dry_run, "Say what would happen; start nothing");
  cmd->add_option("--reason", args->reason, "Why (kept with the campaign's event)");
  cmd->add_flag("--json", args->json, "Print the daemon's answer as JSON");
  cmd->add_option("--server", args->daemon.server,
                  "Daemon URL (default $COLLTUNE_SERVER or http://127.0.0.1:8080)");
  cmd->add_option("--token", args->daemon.token, "Admin API token (default $COLLTUNE_TOKEN)");
  cmd->add_option("--ca-cert", args->daemon.ca_cert, "PEM file to trust for https");
  set_exit_codes(cmd, {{kExitNothingToDo, "nothing to do (or --dry-run)"},
                       {kExitCannotCompare, "cannot compare (no rules, no baseline, no source)"},
                       {kExitRetuneStarted, "a re-tuning campaign was started"}});
  cmd->callback([args] {
    const int rc = run_retune(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace colltune
