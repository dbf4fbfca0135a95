// `colltune report`: a stored campaign's report, read from the SQLite store (no daemon, no
// backend): the table `tune` prints, the JSON for machines (docs/report.md documents every
// field), or the self-contained HTML page (docs/report-html.md).
//
//   colltune report --db colltune.db                    the newest campaign, as a table
//   colltune report 3 --db colltune.db --json           campaign 3, JSON on stdout
//   colltune report --db colltune.db --campaign 3 -o report.html   the HTML page
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "campaign/report.h"
#include "campaign/store.h"
#include "cli/commands.h"
#include "cli/conventions.h"
#include "cli/report_file.h"
#include "cli/report_html.h"
#include "cli/report_table.h"
#include "core/algorithm_table.h"

namespace colltune {
namespace {

struct ReportArgs {
  std::string db = "colltune.db";
  std::int64_t campaign = 0;  // 0 = the newest
  bool json = false;          // same as --format json
  std::string out;            // empty = stdout
  std::string format;         // table, json, html; empty = from --out's name (table on stdout)
};

int run_report(const ReportArgs& args) {
  // Reading must not create an empty store where the user mistyped the path.
  require_existing_db(args.db);
  Store store(args.db);
  std::int64_t id = args.campaign;
  if (id == 0) {
    const auto newest = store.campaigns(std::nullopt, 1, 0);
    if (newest.empty()) throw std::runtime_error("no campaign in " + args.db);
    id = newest.front().id;
  }
  if (!store.campaign(id))
    throw std::runtime_error("no campaign " + std::to_string(id) + " in " + args.db);
  std::string format = args.format;
  if (args.json) {
    if (!format.empty() && format != "json")
      throw std::invalid_argument("--json contradicts --format " + format);
    format = "json";
  }
  if (format.empty())
    format = args.out.empty() ? "table" : (is_html_path(args.out) ? "html" : "json");
  if (format == "table" && !args.out.empty())
    throw std::invalid_argument("--format table prints to the terminal; drop --out");
  if (!args.out.empty() && (format == "html") != is_html_path(args.out))
    throw std::invalid_argument("--out " + args.out + " does not match --format " + format +
                                " (name HTML files .html or .htm)");
  // Algorithm names of Open MPI 4.1 (the store does not keep the target's ompi_info).
  const nlohmann::json report = campaign_report(store, id, AlgorithmTable::builtin_4_1());
  if (!args.out.empty()) {
    write_report_file(args.out, report);
    std::fprintf(stderr, "colltune: wrote %s\n", args.out.c_str());
    return 0;
  }
  if (format == "table") {
    print_report_table(stdout, report);
  } else {
    const std::string text =
        format == "html"
            ? render_report_html(report)
            : report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (std::ferror(stdout) || std::fflush(stdout) != 0)
    throw std::runtime_error("failed writing stdout");
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report", "A stored campaign's report: table, JSON (--json), or a self-contained HTML page");
  cmd->add_option("campaign", args->campaign, "Campaign id (default: the newest in --db)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--campaign", args->campaign, "Campaign id (same as the positional one)")
      ->check(CLI::PositiveNumber);
  add_db_option(cmd, args->db, "SQLite store the campaign ran with");
  cmd->add_flag("--json", args->json, "JSON for machines (fields: docs/report.md)");
  cmd->add_option("-o,--out", args->out,
                  "File to write (.html/.htm: the HTML page, else JSON; default: stdout)")
      ->type_name("FILE");
  cmd->add_option("--format", args->format, "table, json or html (default: from --out's name)")
      ->check(CLI::IsMember({"table", "json", "html"}));
  set_exit_codes(cmd, {});
  cmd->callback([args] { run_report(*args); });
}

}  // namespace colltune
