// `colltune export landscape`: every successful measurement of a store as a landscape CSV
// (collective, comm_size, algorithm, segsize, fanout, msg_size, latency_us, ...), the format
// the replay backend and colltune-bench-optimizer read. One row per run and size: repeats stay
// separate rows so the noise is kept.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "campaign/campaign_states.h"
#include "campaign/store.h"
#include "cli/commands.h"
#include "cli/conventions.h"

namespace colltune {
namespace {

struct ExportArgs {
  std::string db = "colltune.db";
  std::int64_t campaign = 0;  // 0 = all campaigns
  std::string out;
  bool include_final = true;
};

int run_export(const ExportArgs& args) {
  require_existing_db(args.db);  // reading a store that is not there is an error, not 0 rows
  Store store(args.db);
  std::ofstream file;
  if (!args.out.empty()) {
    file.open(args.out, std::ios::trunc);
    if (!file) throw std::runtime_error("cannot write " + args.out);
  }
  std::ostream& out = args.out.empty() ? std::cout : file;
  out << "collective,comm_size,algorithm,segsize,fanout,msg_size,latency_us,min_us,max_us,"
         "iterations,campaign,run_id,purpose\n";
  std::int64_t rows = 0;
  std::vector<CampaignRecord> campaigns;
  if (args.campaign > 0) {
    auto c = store.campaign(args.campaign);
    if (!c) throw std::invalid_argument("no campaign " + std::to_string(args.campaign));
    campaigns.push_back(*c);
  } else {
    campaigns = store.campaigns(std::nullopt, 1000000, 0);
  }
  for (const auto& campaign : campaigns) {
    for (const auto& ctx : store.contexts(campaign.id)) {
      for (const auto& run : store.runs_of_context(ctx.id)) {
        if (run.outcome != RunOutcome::ok) continue;
        if (!args.include_final && run.purpose != JobPurpose::search) continue;
        for (const auto& row : run.rows) {
          out << name(ctx.collective) << ',' << ctx.comm_size << ',' << run.config.algorithm << ','
              << run.config.segsize << ',' << run.config.fanout << ',' << row.size << ','
              << row.avg_us << ',' << (row.min_us ? std::to_string(*row.min_us) : "") << ','
              << (row.max_us ? std::to_string(*row.max_us) : "") << ','
              << (row.iterations ? std::to_string(*row.iterations) : "") << ',' << campaign.id
              << ',' << run.id << ',' << to_string(run.purpose) << '\n';
          ++rows;
        }
      }
    }
  }
  out.flush();
  if (!out) throw std::runtime_error("failed writing the landscape");
  std::fprintf(stderr, "colltune: exported %lld measurements\n", static_cast<long long>(rows));
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto* exp = app.add_subcommand("export", "Export data from a store");
  exp->require_subcommand(1);
  set_exit_codes(exp, {});  // each subcommand lists its own
  auto args = std::make_shared<ExportArgs>();
  auto* landscape = exp->add_subcommand("landscape", "Measurements as a landscape CSV");
  add_db_option(landscape, args->db, "SQLite store to read (must exist)");
  landscape->add_option("--campaign", args->campaign, "Only this campaign (default: all)");
  landscape->add_option("--out", args->out, "Output CSV (default: stdout)");
  landscape->add_flag("!--no-final", args->include_final, "Leave out the final re-measurements");
  set_exit_codes(landscape, {});
  landscape->callback([args] { run_export(*args); });
}

}  // namespace colltune
