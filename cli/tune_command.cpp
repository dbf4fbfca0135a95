// `colltune tune`: a foreground tuning campaign on one backend, stored in SQLite as it goes.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_lifecycle.h"
#include "campaign/campaign_spec.h"
#include "campaign/comm_sizes.h"
#include "campaign/database_owner.h"
#include "campaign/report.h"
#include "campaign/retune.h"
#include "campaign/rules_stage.h"
#include "campaign/store.h"
#include "cli/cluster_summary.h"
#include "cli/commands.h"
#include "cli/conventions.h"
#include "cli/progress.h"
#include "cli/report_file.h"
#include "cli/report_table.h"
#include "core/algorithm_table.h"
#include "optimizer/strategy.h"
#include "runner/backend_factory.h"
#include "runner/slurm_backend.h"
#include "slurm/batch_script.h"

namespace colltune {
namespace {

struct TuneArgs {
  std::string backend = "local";
  std::string backend_config;  // --backend-config FILE|JSON
  std::string collectives = "bcast,allreduce,reduce,gather";
  // Communicator sizes and layouts (server/comm_sizes.h); "" = not given.
  std::string np;
  std::string nodes;
  std::string ppn;
  std::string layout;
  std::string cluster_strategy = "bo-cluster";
  double min_confidence = 0.8;
  int predict_up_to = 0;
  double node_seconds = 0;        // --node-seconds: the whole-cluster search's node-second budget
  double total_node_seconds = 0;  // --total-node-seconds: the search's and the final phases'
  // The whole-cluster options given on the command line: refused for a single comm size, where
  // they would mean nothing.
  std::vector<std::string> cluster_options;
  std::string sizes = "4:1048576";
  std::string strategy = "bo";
  int budget = 0;
  int repeats = 1;
  std::uint64_t seed = 1;
  int iterations = 100;
  int warmup = 10;
  int batch_size = 8;
  int final_repeats = 3;
  std::string final_method = "paired";
  double min_gain = 0;
  int final_max_runs = 0;
  double run_timeout = 120;
  std::string osu_dir;
  std::string profile;  // sim
  std::string dataset;  // replay
  // Slurm: the usual sbatch flags, stored in the backend settings of the launch.
  std::string partition;
  std::string account;
  std::string qos;
  std::string time_limit;
  std::string db = "colltune.db";
  std::string rules_out = "colltune-rules.conf";
  std::string report_out;
  std::int64_t resume = 0;
  bool no_verify = false;
  // Which flags the command line gave explicitly (a resume refuses those that would change
  // what the campaign was created with).
  bool backend_given = false;
  bool backend_settings_given = false;
  bool rules_out_given = false;
  bool report_out_given = false;
};

CancelFlag* g_cancel = nullptr;
volatile std::sig_atomic_t g_interrupts = 0;

extern "C" void on_sigint(int) {
  g_interrupts = g_interrupts + 1;
  if (g_interrupts > 1) std::_Exit(130);  // measurements are committed as they arrive
  if (g_cancel) g_cancel->cancel();
}

// The backend and outputs a campaign runs with. A new campaign takes them from the flags; a
// resumed one from what its launch stored (store.campaign_launch), so that `tune --resume ID`
// continues on the backend, settings and files it was created with whatever the resume command
// says. Flags that would change them are refused with the reason; the output paths may be
// overridden explicitly.
struct Launch {
  std::string backend;
  nlohmann::json backend_settings = nlohmann::json::object();
  std::string rules_out;
  std::string report_out;

  nlohmann::json to_json() const {
    return {{"backend", backend},
            {"backend_settings", backend_settings},
            {"rules_out", rules_out},
            {"report_out", report_out}};
  }
};

// `backend`: the flags' (a new campaign) or the stored one (a resume).
Launch launch_from_flags(const TuneArgs& args, const std::string& backend) {
  Launch launch;
  launch.backend = backend;
  launch.backend_settings = read_backend_config(args.backend_config);
  const bool slurm_flags = !args.partition.empty() || !args.account.empty() || !args.qos.empty() ||
                           !args.time_limit.empty();
  if (slurm_flags && backend != "slurm")
    throw std::invalid_argument("--partition/--account/--qos/--time are Slurm flags (backend is '" +
                                backend + "'; add --backend slurm)");
  if (!args.partition.empty()) launch.backend_settings["partition"] = args.partition;
  if (!args.account.empty()) launch.backend_settings["account"] = args.account;
  if (!args.qos.empty()) launch.backend_settings["qos"] = args.qos;
  if (!args.time_limit.empty())
    launch.backend_settings["time_limit_minutes"] =
        slurm::parse_time_limit_minutes(args.time_limit);
  if (!args.osu_dir.empty()) launch.backend_settings["osu_dir"] = args.osu_dir;
  if (!args.profile.empty()) launch.backend_settings["profile"] = args.profile;
  if (!args.dataset.empty()) launch.backend_settings["dataset"] = args.dataset;
  launch.rules_out = args.rules_out;
  launch.report_out = args.report_out;
  return launch;
}

Launch launch_for_resume(Store& store, const TuneArgs& args, const CampaignRecord& campaign) {
  const std::string id = std::to_string(campaign.id);
  const std::string stored_backend = campaign.spec.value("backend", "");
  if (args.backend_given && args.backend != stored_backend)
    throw std::invalid_argument("campaign " + id + " runs on backend '" + stored_backend +
                                "'; it cannot be resumed on '" + args.backend +
                                "' (drop --backend to resume it where it was created)");
  const auto stored = store.campaign_launch(campaign.id);
  Launch launch;
  if (!stored) {
    // A campaign the daemon created, or one from a store older than launch records: its
    // backend comes from the spec and its settings from these flags.
    return launch_from_flags(args, stored_backend);
  }
  launch.backend = stored->value("backend", stored_backend);
  launch.backend_settings = stored->value("backend_settings", nlohmann::json::object());
  launch.rules_out = stored->value("rules_out", args.rules_out);
  launch.report_out = stored->value("report_out", std::string());
  if (args.backend_settings_given) {
    const nlohmann::json wanted = launch_from_flags(args, launch.backend).backend_settings;
    if (wanted != launch.backend_settings)
      throw std::invalid_argument(
          "campaign " + id + " was created with backend settings " +
          launch.backend_settings.dump() + "; the resume command asks for " + wanted.dump() +
          " (drop --backend-config/--osu-dir/--profile/--dataset and the Slurm flags to resume as "
          "created)");
  }
  if (args.rules_out_given) launch.rules_out = args.rules_out;
  if (args.report_out_given) launch.report_out = args.report_out;
  return launch;
}

// A Slurm campaign with no controller to talk to would only fail later, job by job: say so now
// (scontrol ping answers within seconds when nothing listens).
void require_reachable(Backend& backend) {
  if (auto* slurm = dynamic_cast<SlurmBackend*>(&backend)) {
    std::string detail;
    if (!slurm->controller_up(&detail))
      throw BackendUnavailable(
          "no Slurm controller answers (scontrol ping: " +
          (detail.empty() ? std::string("no answer") : detail) +
          "); is slurmctld running, and does SLURM_CONF (or /etc/slurm/slurm.conf) name it?");
  }
}

// A new campaign's spec from the flags; refused here, before anything is opened or written.
CampaignSpec spec_from_flags(const TuneArgs& args) {
  nlohmann::json spec_json = {{"backend", args.backend},
                              {"sizes", args.sizes},
                              {"strategy", args.strategy},
                              {"budget", args.budget},
                              {"repeats", args.repeats},
                              {"seed", args.seed},
                              {"iterations", args.iterations},
                              {"warmup", args.warmup},
                              {"batch_size", args.batch_size},
                              {"final_repeats", args.final_repeats},
                              {"final_method", args.final_method},
                              {"min_gain", args.min_gain},
                              {"final_max_runs", args.final_max_runs},
                              {"run_timeout_s", args.run_timeout},
                              {"verify", !args.no_verify}};
  nlohmann::json contexts = nlohmann::json::array();
  const auto layouts = plan_layouts(args.np, args.nodes, args.ppn, args.layout);
  for (Collective c : parse_collective_list(args.collectives))
    for (const auto& l : layouts)
      contexts.push_back({{"collective", std::string(name(c))},
                          {"comm_size", l.comm_size},
                          {"nodes", l.nodes},
                          {"ppn", l.ppn}});
  spec_json["contexts"] = contexts;
  // Several communicator sizes: one whole-cluster campaign (docs/whole-cluster.md).
  if (layouts.size() > 1)
    spec_json["cluster"] = {{"strategy", args.cluster_strategy},
                            {"min_confidence", args.min_confidence},
                            {"predict_up_to", args.predict_up_to},
                            {"budget_node_seconds", args.node_seconds},
                            {"total_node_seconds", args.total_node_seconds}};
  else if (!args.cluster_options.empty())
    throw std::invalid_argument(
        args.cluster_options.front() +
        " applies to a whole-cluster campaign, which needs several communicator sizes "
        "(e.g. --np 2,4,8,16); this one tunes " +
        std::to_string(layouts.front().comm_size) + " ranks only");
  return parse_campaign_spec(spec_json);
}

int run_tune(const TuneArgs& args) {
  // A new campaign's spec is read, and its backend made and checked, before the store is
  // touched: bad flags or an unreachable backend leave no file behind. A resumed campaign's
  // backend comes from its stored launch.
  Launch launch;
  std::unique_ptr<Backend> backend;
  std::optional<CampaignSpec> new_spec;
  if (args.resume == 0) {
    new_spec = spec_from_flags(args);
    launch = launch_from_flags(args, args.backend);
    backend = make_backend(launch.backend, launch.backend_settings);
    require_reachable(*backend);
  }
  // One writer per database (a daemon or another tune on it is refused with its pid).
  DatabaseOwner owner(args.db, args.resume ? "colltune tune --resume" : "colltune tune");
  Store store(args.db);
  std::int64_t campaign_id = args.resume;
  if (campaign_id != 0) {
    const auto campaign = store.campaign(campaign_id);
    if (!campaign)
      throw std::invalid_argument("no campaign " + std::to_string(campaign_id) + " in " + args.db);
    launch = launch_for_resume(store, args, *campaign);
    std::fprintf(stderr, "colltune: resuming campaign %lld on backend %s as created\n",
                 static_cast<long long>(campaign_id), launch.backend.c_str());
    backend = make_backend(launch.backend, launch.backend_settings);
    require_reachable(*backend);
  }
  const nlohmann::json& backend_settings = launch.backend_settings;

  if (new_spec)
    campaign_id = create_admitted_campaign(store, *backend, *new_spec, launch.to_json());

  const BackendInfo info = backend->describe();
  const AlgorithmTable table = algorithm_table_for(*backend, "");
  std::fprintf(stderr, "colltune: campaign %lld on %s (%s, Open MPI %s), store %s\n",
               static_cast<long long>(campaign_id), info.backend.c_str(), info.host.c_str(),
               info.ompi_version.empty() ? "unknown" : info.ompi_version.c_str(), args.db.c_str());

  // The lifecycle (server/campaign_lifecycle.h): engine, rules stage, final state.
  ProgressDisplay progress;
  progress.set_budget(args.budget);
  bool rules_stage = false;
  // The CLI prints the campaign's end itself: once the rules stage started, the lifecycle's
  // final campaign_state event is not shown as progress.
  StoreEventSink events(store, [&](const std::string& type, const nlohmann::json& payload) {
    if (rules_stage && type == "campaign_state") return;
    progress.on_event(type, payload);
  });
  CancelFlag cancel;
  CampaignRun run;
  run.rules_path = launch.rules_out;
  run.work_dir = args.db + ".work";
  run.verify = !args.no_verify;
  run.backend_name = launch.backend;
  run.backend_settings = backend_settings;
  run.table = &table;
  run.events = &events;
  run.cancel = &cancel;
  run.pause_reason = "interrupted by signal";
  run.before_rules_stage = [&] {
    rules_stage = true;
    progress.finish_line();
    std::fprintf(stderr, "colltune: writing %s, verifying it on %s ...\n", launch.rules_out.c_str(),
                 backend->name().c_str());
  };
  g_cancel = &cancel;
  auto previous = std::signal(SIGINT, on_sigint);
  auto previous_term = std::signal(SIGTERM, on_sigint);
  const CampaignRunResult result = run_campaign(store, *backend, campaign_id, run);
  std::signal(SIGINT, previous);
  std::signal(SIGTERM, previous_term);
  g_cancel = nullptr;
  progress.finish_line();

  if (result.end == CampaignRunResult::End::interrupted && !result.in_rules_stage) {
    std::fprintf(stderr,
                 "colltune: interrupted; %lld measurements of %lld runs are kept in %s.\n"
                 "Resume with: colltune tune --db %s --resume %lld\n",
                 static_cast<long long>(store.count_measurements(campaign_id)),
                 static_cast<long long>(store.count_runs(campaign_id)), args.db.c_str(),
                 args.db.c_str(), static_cast<long long>(campaign_id));
    return kExitInterrupted;
  }
  if (result.end == CampaignRunResult::End::interrupted) {
    std::fprintf(stderr,
                 "colltune: interrupted during verification; resume with: colltune tune "
                 "--db %s --resume %lld\n",
                 args.db.c_str(), static_cast<long long>(campaign_id));
    return kExitInterrupted;
  }
  if (!result.rules) {
    std::fprintf(stderr, "colltune: campaign %lld failed: %s\n",
                 static_cast<long long>(campaign_id), result.error.c_str());
    return 1;
  }
  const RulesStageResult& rules = *result.rules;
  if (!rules.error.empty() && !rules.deployable) {
    std::fprintf(stderr, "colltune: %s\n%s\n", rules.error.c_str(), rules.validation_text.c_str());
    return 1;
  }

  nlohmann::json report = campaign_report(store, campaign_id, table);
  print_report_table(stdout, report);
  print_cluster_summary(stdout, report);
  if (!launch.report_out.empty()) write_report_file(launch.report_out, report);
  std::fprintf(stdout, "\nrules file: %s (%s format)\n%s", launch.rules_out.c_str(),
               rules.format.c_str(), rules.validation_text.c_str());
  if (!rules.validation_text.empty() && rules.validation_text.back() != '\n')
    std::fputc('\n', stdout);
  if (rules.verification_skipped) {
    std::fprintf(stdout, "%s\n", rules.verification_text.c_str());
  } else {
    std::fprintf(stdout, "\nverification with the file loaded (algorithm tracer):\n%s",
                 rules.verification_text.c_str());
  }
  if (!rules.error.empty()) {
    std::fprintf(stderr, "colltune: rules file NOT verified: %s\n", rules.error.c_str());
    return 3;
  }
  std::fprintf(stdout, "%s\n",
               rules.verification_skipped
                   ? "rules file written (not verified)"
                   : "rules file verified: Open MPI runs what it says at every tested size");
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "Run a tuning campaign in the foreground");
  cmd->add_option("--backend", args->backend, "Backend that runs the benchmarks")
      ->capture_default_str()
      ->check(CLI::IsMember(backend_names()));
  add_backend_config_option(cmd, args->backend_config);
  cmd->add_option("--collectives", args->collectives, "Comma-separated collectives")
      ->capture_default_str();
  cmd->add_option("--np", args->np,
                  "Ranks (communicator sizes): 4, a list 2,4,8, doubling 2:64 or steps 2:8:1; "
                  "several sizes make a whole-cluster campaign (default 4)");
  cmd->add_option("--nodes", args->nodes, "Nodes (Slurm); a list with --ppn (default 1)");
  cmd->add_option("--ppn", args->ppn, "Ranks per node (Slurm): every --nodes x --ppn combination");
  cmd->add_option("--layout", args->layout,
                  "packed | spread (which nodes x ppn per size) or explicit NODESxPPN,...");
  const auto whole_cluster_only = [args](const std::string& flag) {
    return [args, flag](const std::string&) { args->cluster_options.push_back(flag); };
  };
  cmd->add_option("--cluster-strategy", args->cluster_strategy,
                  "Whole-cluster search (several sizes)")
      ->capture_default_str()
      ->each(whole_cluster_only("--cluster-strategy"));
  cmd->add_option("--min-confidence", args->min_confidence,
                  "Whole-cluster: a predicted size keeps a choice only at this confidence")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 1.0))
      ->each(whole_cluster_only("--min-confidence"));
  cmd->add_option("--predict-up-to", args->predict_up_to,
                  "Whole-cluster: the rules file predicts sizes up to N ranks (default: the "
                  "largest --np); Open MPI's default above")
      ->check(CLI::Range(0, 10000000))
      ->each(whole_cluster_only("--predict-up-to"));
  cmd->add_option("--node-seconds", args->node_seconds,
                  "Whole-cluster: the search's budget in node-seconds (each run's benchmark "
                  "seconds x its nodes; 0 = none). The final phases come on top")
      ->check(CLI::Range(0.0, 1e12))
      ->each(whole_cluster_only("--node-seconds"));
  cmd->add_option("--total-node-seconds", args->total_node_seconds,
                  "Whole-cluster: the budget of the search and the final phases together, per "
                  "collective, in node-seconds; the first final look at every size's nominees is "
                  "held back from the search, and a nominee whose look does not fit keeps Open "
                  "MPI's default")
      ->check(CLI::Range(0.0, 1e12))
      ->each(whole_cluster_only("--total-node-seconds"));
  cmd->add_option("--sizes", args->sizes, "Message sizes MIN:MAX (bytes, K/M suffixes)")
      ->capture_default_str();
  cmd->add_option("--strategy", args->strategy, "Search strategy")
      ->capture_default_str()
      ->check(CLI::IsMember(strategy_names()));
  cmd->add_option("--budget", args->budget, "Evaluations per collective (0 = strategy default)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--repeats", args->repeats, "Runs per suggested configuration")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--seed", args->seed, "Random seed")->capture_default_str();
  cmd->add_option("--iterations", args->iterations, "OSU -i")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", args->warmup, "OSU -x")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--batch-size", args->batch_size, "Configurations per backend job")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--final-repeats", args->final_repeats,
                  "Re-measure rounds with the rules file (and, for --final-method median, runs of "
                  "each finalist)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--final-method", args->final_method,
                  "Final choice: paired (sequential paired test against the default) or median "
                  "(the earlier method; docs/final-choice.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"paired", "median"}));
  cmd->add_option("--min-gain", args->min_gain,
                  "Smallest relative gain a change must prove (0.03 = 3 %)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.5));
  cmd->add_option("--final-max-runs", args->final_max_runs,
                  "Cap on the paired final phase's runs per collective (0 = the search's runs)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--run-timeout", args->run_timeout, "Seconds before a run is killed")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  cmd->add_option("--osu-dir", args->osu_dir,
                  "OMB install or build folder (default: the bundled colltune-osu-bench)");
  cmd->add_option("--profile", args->profile,
                  "Cluster profile for --backend sim (name or JSON file)");
  cmd->add_option("--dataset", args->dataset, "Landscape CSV for --backend replay");
  cmd->add_option("-p,--partition", args->partition, "Slurm partition (backend slurm)");
  cmd->add_option("-A,--account", args->account, "Slurm account to charge (backend slurm)");
  cmd->add_option("--qos", args->qos, "Slurm quality of service (backend slurm)");
  cmd->add_option("-t,--time", args->time_limit,
                  "Slurm time limit per job, as sbatch -t: M, H:M:S, D-H:M ... (default: computed "
                  "from the runs' timeouts)");
  add_db_option(cmd, args->db, "SQLite store (every measurement is kept as it arrives)");
  cmd->add_option("--rules-out", args->rules_out, "Rules file to write")->capture_default_str();
  cmd->add_option("--report-out", args->report_out,
                  "Report to write: .html/.htm the self-contained HTML page, else JSON");
  cmd->add_option("--resume", args->resume,
                  "Resume campaign ID from --db (backend and its "
                  "settings, Slurm flags included, as created)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-verify", args->no_verify, "Skip verification of the rules file");
  set_exit_codes(cmd,
                 {{kExitOk, "rules file written and verified (or --no-verify)"},
                  {3, "rules file written but NOT verified"},
                  {kExitBackendUnavailable, "the backend cannot be reached (no Slurm controller)"}},
                 true);
  cmd->callback([args, cmd] {
    args->backend_given = cmd->count("--backend") > 0;
    args->backend_settings_given =
        backend_config_given(cmd) || cmd->count("--osu-dir") + cmd->count("--profile") +
                                             cmd->count("--dataset") + cmd->count("--partition") +
                                             cmd->count("--account") + cmd->count("--qos") +
                                             cmd->count("--time") >
                                         0;
    args->rules_out_given = cmd->count("--rules-out") > 0;
    args->report_out_given = cmd->count("--report-out") > 0;
    int rc = 0;
    try {
      rc = run_tune(*args);
    } catch (const BackendUnavailable& e) {
      std::fprintf(stderr, "colltune: error: %s\n", e.what());
      rc = kExitBackendUnavailable;
    }
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace colltune
