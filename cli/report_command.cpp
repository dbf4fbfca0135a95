// `colltune report`: a campaign's report from a store, as the table `tune` prints or as JSON
// for machines (docs/report.md documents every field). Reads the store only: no backend runs.
//
//   colltune report --db colltune.db            the newest campaign, as a table
//   colltune report 3 --db colltune.db --json   campaign 3, JSON on stdout
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/conventions.h"
#include "cli/report_table.h"
#include "core/algorithm_table.h"
#include "server/report.h"
#include "server/store.h"

namespace colltune {
namespace {

struct ReportArgs {
  std::string db = "colltune.db";
  std::int64_t campaign = 0;  // 0 = the newest
  bool json = false;
  std::string out;
};

int run_report(const ReportArgs& args) {
  require_existing_db(args.db);
  Store store(args.db);
  std::int64_t id = args.campaign;
  if (id == 0) {
    const auto newest = store.campaigns("", 1, 0);
    if (newest.empty()) throw std::runtime_error("no campaign in " + args.db);
    id = newest.front().id;
  }
  if (!store.campaign(id))
    throw std::runtime_error("no campaign " + std::to_string(id) + " in " + args.db);
  const nlohmann::json report = campaign_report(store, id, AlgorithmTable::builtin_4_1());
  std::FILE* out = stdout;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  if (!args.out.empty()) {
    file.reset(std::fopen(args.out.c_str(), "w"));
    if (!file) throw std::runtime_error("cannot write " + args.out);
    out = file.get();
  }
  if (args.json)
    std::fprintf(out, "%s\n",
                 report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  else
    print_report_table(out, report);
  if (std::ferror(out) || std::fflush(out) != 0)
    throw std::runtime_error("failed writing " + (args.out.empty() ? "stdout" : args.out));
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd =
      app.add_subcommand("report", "Print a campaign's report (table, or JSON with --json)");
  cmd->add_option("campaign", args->campaign, "Campaign id (default: the newest in --db)")
      ->check(CLI::PositiveNumber);
  add_db_option(cmd, args->db, "SQLite store the campaign ran with");
  cmd->add_flag("--json", args->json, "JSON for machines (fields: docs/report.md)");
  cmd->add_option("-o,--out", args->out, "Write to this file instead of stdout")->type_name("FILE");
  set_exit_codes(cmd, {});
  cmd->callback([args] { run_report(*args); });
}

}  // namespace colltune
