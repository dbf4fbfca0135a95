// `colltune tune`: a foreground tuning campaign on one backend, stored in SQLite as it goes.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/database_owner.h"
#include "campaign/retune.h"
#include "campaign/rules_stage.h"
#include "campaign/store.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/report_table.h"
#include "core/algorithm_table.h"
#include "optimizer/strategy.h"
#include "runner/backend_factory.h"

namespace colltune {
namespace {

struct TuneArgs {
  std::string backend = "local";
  std::string backend_config;  // JSON file with backend settings
  std::string collectives = "bcast,allreduce,reduce,gather";
  int np = 4;
  int nodes = 1;
  std::string sizes = "4:1048576";
  std::string strategy = "random";
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

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": invalid JSON: " + e.what());
  }
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
  if (!out.flush()) throw std::runtime_error("failed writing " + path);
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

Launch launch_from_flags(const TuneArgs& args) {
  Launch launch;
  launch.backend = args.backend;
  if (!args.backend_config.empty()) launch.backend_settings = read_json_file(args.backend_config);
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
    launch = launch_from_flags(args);
    launch.backend = stored_backend;
    return launch;
  }
  launch.backend = stored->value("backend", stored_backend);
  launch.backend_settings = stored->value("backend_settings", nlohmann::json::object());
  launch.rules_out = stored->value("rules_out", args.rules_out);
  launch.report_out = stored->value("report_out", std::string());
  if (args.backend_settings_given) {
    const nlohmann::json wanted = launch_from_flags(args).backend_settings;
    if (wanted != launch.backend_settings)
      throw std::invalid_argument(
          "campaign " + id + " was created with backend settings " +
          launch.backend_settings.dump() + "; the resume command asks for " + wanted.dump() +
          " (drop --backend-config/--osu-dir/--profile/--dataset to resume as created)");
  }
  if (args.rules_out_given) launch.rules_out = args.rules_out;
  if (args.report_out_given) launch.report_out = args.report_out;
  return launch;
}

int run_tune(const TuneArgs& args) {
  // One writer per database (a daemon or another tune on it is refused with its pid).
  DatabaseOwner owner(args.db, args.resume ? "colltune tune --resume" : "colltune tune");
  Store store(args.db);
  std::int64_t campaign_id = args.resume;
  Launch launch;
  if (campaign_id == 0) {
    launch = launch_from_flags(args);
  } else {
    const auto campaign = store.campaign(campaign_id);
    if (!campaign)
      throw std::invalid_argument("no campaign " + std::to_string(campaign_id) + " in " + args.db);
    launch = launch_for_resume(store, args, *campaign);
    std::fprintf(stderr, "colltune: resuming campaign %lld on backend %s as created\n",
                 static_cast<long long>(campaign_id), launch.backend.c_str());
  }
  const nlohmann::json& backend_settings = launch.backend_settings;
  auto backend = make_backend(launch.backend, backend_settings);

  if (campaign_id == 0) {
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
    for (Collective c : parse_collective_list(args.collectives))
      contexts.push_back(
          {{"collective", std::string(name(c))}, {"comm_size", args.np}, {"nodes", args.nodes}});
    spec_json["contexts"] = contexts;
    const CampaignSpec spec = parse_campaign_spec(spec_json);
    const auto names = strategy_names();
    if (std::find(names.begin(), names.end(), spec.strategy) == names.end())
      throw std::invalid_argument("unknown strategy '" + spec.strategy + "'");
    CampaignEngine::check_admissible(store, *backend, spec);
    campaign_id = CampaignEngine::create_campaign(store, spec);
    store.set_campaign_launch(campaign_id, launch.to_json());
  }

  const BackendInfo info = backend->describe();
  AlgorithmTable table = AlgorithmTable::builtin_4_1();
  if (auto text = backend->ompi_info_parsable(); !text.empty()) {
    try {
      table = AlgorithmTable::from_ompi_info(text);
    } catch (const std::exception& e) {
      spdlog::warn("ompi_info output not usable ({}); using the built-in 4.1 table", e.what());
    }
  }
  std::fprintf(stderr, "colltune: campaign %lld on %s (%s, Open MPI %s), store %s\n",
               static_cast<long long>(campaign_id), info.backend.c_str(), info.host.c_str(),
               info.ompi_version.empty() ? "unknown" : info.ompi_version.c_str(), args.db.c_str());

  ProgressDisplay progress;
  CampaignEngine engine(store, *backend, table,
                        [&](const std::string& type, const nlohmann::json& payload) {
                          progress.on_event(type, payload);
                        });
  CancelFlag cancel;
  g_cancel = &cancel;
  auto previous = std::signal(SIGINT, on_sigint);
  auto previous_term = std::signal(SIGTERM, on_sigint);
  const EngineOutcome outcome = engine.run(campaign_id, cancel);
  std::signal(SIGINT, previous);
  std::signal(SIGTERM, previous_term);
  g_cancel = nullptr;
  progress.finish_line();

  if (outcome == EngineOutcome::interrupted) {
    store.set_campaign_state(campaign_id, "paused", "interrupted by signal");
    std::fprintf(stderr,
                 "colltune: interrupted; %lld measurements of %lld runs are kept in %s.\n"
                 "Resume with: colltune tune --db %s --resume %lld\n",
                 static_cast<long long>(store.count_measurements(campaign_id)),
                 static_cast<long long>(store.count_runs(campaign_id)), args.db.c_str(),
                 args.db.c_str(), static_cast<long long>(campaign_id));
    return 130;
  }
  if (outcome == EngineOutcome::failed) {
    std::fprintf(stderr, "colltune: campaign %lld failed: %s\n",
                 static_cast<long long>(campaign_id), engine.error().c_str());
    return 1;
  }

  // The rules file: written for the target's Open MPI, validated, verified, re-measured.
  RulesStageOptions rules_options;
  rules_options.rules_path = launch.rules_out;
  rules_options.work_dir = args.db + ".work";
  rules_options.verify = !args.no_verify;
  rules_options.remeasure_rounds = args.final_repeats;
  // What the rules depend on, stored with them so `colltune retune --if-changed` can compare.
  try {
    rules_options.fingerprint = backend_fingerprint(launch.backend, backend_settings, *backend);
  } catch (const std::exception& e) {
    spdlog::warn("no fingerprint recorded with the rules: {}", e.what());
  }
  {
    const auto spec = parse_campaign_spec(store.campaign(campaign_id)->spec);
    rules_options.format = spec.rules_format;
    rules_options.verify = rules_options.verify && spec.verify;
  }
  std::fprintf(stderr, "colltune: writing %s, verifying it on %s ...\n", launch.rules_out.c_str(),
               backend->name().c_str());
  JobExecutor executor(store, *backend, [&](const std::string& type, const nlohmann::json& p) {
    progress.on_event(type, p);
  });
  g_cancel = &cancel;
  std::signal(SIGINT, on_sigint);
  const RulesStageResult rules =
      finish_campaign_rules(store, executor, table, campaign_id, rules_options, cancel);
  std::signal(SIGINT, previous);
  g_cancel = nullptr;
  progress.finish_line();
  if (rules.interrupted) {
    store.set_campaign_state(campaign_id, "paused", "interrupted by signal");
    std::fprintf(stderr,
                 "colltune: interrupted during verification; resume with: colltune tune "
                 "--db %s --resume %lld\n",
                 args.db.c_str(), static_cast<long long>(campaign_id));
    return 130;
  }
  if (!rules.error.empty() && !rules.deployable) {
    store.set_campaign_state(campaign_id, "failed", rules.error);
    std::fprintf(stderr, "colltune: %s\n%s\n", rules.error.c_str(), rules.validation_text.c_str());
    return 1;
  }

  store.set_campaign_state(campaign_id, rules.error.empty() ? "done" : "failed", rules.error);
  nlohmann::json report = campaign_report(store, campaign_id, table);
  print_report_table(stdout, report);
  if (!launch.report_out.empty()) write_text_file(launch.report_out, report.dump(2) + "\n");
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
      ->capture_default_str();
  cmd->add_option("--backend-config", args->backend_config, "JSON file with backend settings");
  cmd->add_option("--collectives", args->collectives, "Comma-separated collectives")
      ->capture_default_str();
  cmd->add_option("--np", args->np, "Ranks (communicator size)")
      ->capture_default_str()
      ->check(CLI::Range(2, 10000000));
  cmd->add_option("--nodes", args->nodes, "Nodes (Slurm)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--sizes", args->sizes, "Message sizes MIN:MAX (bytes, K/M suffixes)")
      ->capture_default_str();
  cmd->add_option("--strategy", args->strategy,
                  "Search strategy: bo, bo-per-size, random, exhaustive")
      ->capture_default_str();
  cmd->add_option("--budget", args->budget, "Evaluations per collective (0 = strategy default)")
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
      ->capture_default_str();
  cmd->add_option("--min-gain", args->min_gain,
                  "Smallest relative gain a change must prove (0.03 = 3 %)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.5));
  cmd->add_option("--final-max-runs", args->final_max_runs,
                  "Cap on the paired final phase's runs per collective (0 = the search's runs)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--run-timeout", args->run_timeout, "Seconds before a run is killed")
      ->capture_default_str();
  cmd->add_option("--osu-dir", args->osu_dir,
                  "OMB install or build folder (default: the bundled colltune-osu-bench)");
  cmd->add_option("--profile", args->profile,
                  "Cluster profile for --backend sim (name or JSON file)");
  cmd->add_option("--dataset", args->dataset, "Landscape CSV for --backend replay");
  cmd->add_option("--db", args->db, "SQLite store (every measurement is kept as it arrives)")
      ->capture_default_str();
  cmd->add_option("--rules-out", args->rules_out, "Rules file to write")->capture_default_str();
  cmd->add_option("--report-out", args->report_out, "Report JSON to write");
  cmd->add_option("--resume", args->resume, "Resume campaign ID from --db");
  cmd->add_flag("--no-verify", args->no_verify, "Skip verification of the rules file");
  cmd->callback([args, cmd] {
    args->backend_given = cmd->count("--backend") > 0;
    args->backend_settings_given = cmd->count("--backend-config") + cmd->count("--osu-dir") +
                                       cmd->count("--profile") + cmd->count("--dataset") >
                                   0;
    args->rules_out_given = cmd->count("--rules-out") > 0;
    args->report_out_given = cmd->count("--report-out") > 0;
    int rc = run_tune(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace colltune
