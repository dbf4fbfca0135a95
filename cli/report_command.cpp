// `colltune report`: a stored campaign's report, read from the SQLite store (no daemon, no
// backend): the table on stdout, or the JSON or the self-contained HTML page.
//
//   colltune report --db colltune.db --campaign 3                 the table
//   colltune report --db colltune.db --campaign 3 -o report.html  the HTML page
//   colltune report --db colltune.db --campaign 3 --format json   the JSON on stdout
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/report_file.h"
#include "cli/report_html.h"
#include "cli/report_table.h"
#include "core/algorithm_table.h"
#include "server/campaign_engine.h"
#include "server/store.h"

namespace colltune {
namespace {

struct ReportArgs {
  std::string db = "colltune.db";
  std::int64_t campaign = 0;
  std::string out;     // empty = stdout
  std::string format;  // table, json, html; empty = from --out's name (table on stdout)
};

int run_report(const ReportArgs& args) {
  // Reading must not create an empty store where the user mistyped the path.
  if (!std::filesystem::exists(args.db)) throw std::invalid_argument("no store at " + args.db);
  Store store(args.db);
  if (args.campaign <= 0 || !store.campaign(args.campaign))
    throw std::invalid_argument("no campaign " + std::to_string(args.campaign) + " in " + args.db);
  // Algorithm names of Open MPI 4.1 (the store does not keep the target's ompi_info).
  const nlohmann::json report =
      campaign_report(store, args.campaign, AlgorithmTable::builtin_4_1());
  std::string format = args.format;
  if (format.empty())
    format = args.out.empty() ? "table" : (is_html_path(args.out) ? "html" : "json");
  if (format == "table" && !args.out.empty())
    throw std::invalid_argument("--format table prints to the terminal; drop --out");
  if (args.out.empty()) {
    if (format == "table") {
      print_report_table(stdout, report);
    } else {
      const std::string text =
          format == "html" ? render_report_html(report) : report.dump(2) + "\n";
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
    return 0;
  }
  if ((format == "html") != is_html_path(args.out))
    throw std::invalid_argument("--out " + args.out + " does not match --format " + format +
                                " (name HTML files .html or .htm)");
  write_report_file(args.out, report);
  std::fprintf(stderr, "colltune: wrote %s\n", args.out.c_str());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report", "A stored campaign's report: table, JSON, or a self-contained HTML page");
  cmd->add_option("--db", args->db, "SQLite store")->capture_default_str();
  cmd->add_option("--campaign", args->campaign, "Campaign ID")->required();
  cmd->add_option("-o,--out", args->out,
                  "File to write (.html/.htm: the HTML page, else JSON; default: stdout)");
  cmd->add_option("--format", args->format, "table, json or html (default: from --out's name)")
      ->check(CLI::IsMember({"table", "json", "html"}));
  cmd->footer(
      "Exit codes: 0 written or printed; 1 error (no store, no such campaign, --format that "
      "does not match --out, a file that cannot be written); above 100 a malformed command line.");
  cmd->callback([args] { run_report(*args); });
}

}  // namespace colltune
