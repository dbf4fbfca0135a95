// `colltune rules validate|show|verify|deploy|rollback|history`: the rules file as an admin
// handles it.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "campaign/campaign_spec.h"
#include "campaign/database_owner.h"
#include "campaign/rules_deployment.h"
#include "campaign/rules_stage.h"
#include "campaign/store.h"
#include "cli/commands.h"
#include "cli/conventions.h"
#include "core/ompi_version.h"
#include "rules/rules_deploy.h"
#include "rules/rules_reader.h"
#include "rules/rules_show.h"
#include "rules/rules_validate.h"
#include "rules/trace.h"
#include "rules/verify.h"
#include "rules/version_tables.h"
#include "runner/backend_factory.h"
#include "runner/process.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

// Exit codes of `rules validate` (documented in --help).
constexpr int kLoads = 0, kLintErrors = 1, kIgnored = 2;
// `rules deploy`: the rules were not verified on the real Open MPI (and no --force).
constexpr int kNotVerified = 4;

struct RulesArgs {
  std::string file;
  std::string ompi;  // version; empty = detect with ompi_info, else 4.1.4
  // verify
  int np = 4;
  int nodes = 1;
  std::string backend = "local";
  std::string backend_config;
  std::string osu_dir;
  std::string collectives;  // empty = those in the file that colltune can benchmark
  std::string sizes = "4:1M";
  int iterations = 20;
  std::string work_dir;
  // deploy / rollback
  std::string to;
  std::string campaign;
  bool force = false;
  std::string db;  // the store holding the rules version (provenance, guard)
  std::int64_t rules_id = 0;
};

OmpiVersion target_version(const std::string& given) {
  if (!given.empty()) {
    auto v = parse_ompi_version(given);
    if (!v) throw std::invalid_argument("--ompi: not a version: '" + given + "'");
    return *v;
  }
  auto r = run_process({"ompi_info", "--version"}, {.timeout_s = 30});
  if (auto v = parse_ompi_version(r.stdout_text)) return *v;
  return OmpiVersion{4, 1, 4};
}

ValidationReport validate(const RulesArgs& a, const OmpiVersion& version) {
  ValidationOptions options = validation_options_for(version);
  return validate_rules_file(a.file, options);
}

int run_validate(const RulesArgs& a) {
  const OmpiVersion version = target_version(a.ompi);
  const auto report = validate(a, version);
  std::printf("%s: %s", a.file.c_str(), report.to_text().c_str());
  if (report.to_text().empty() || report.to_text().back() != '\n') std::printf("\n");
  if (!report.loads()) return kIgnored;
  return report.has_errors() ? kLintErrors : kLoads;
}

int run_show(const RulesArgs& a) {
  const OmpiVersion version = target_version(a.ompi);
  const auto report = validate(a, version);
  if (!report.loads()) {
    std::fprintf(stderr, "%s\n", report.verdict().c_str());
    return kIgnored;
  }
  std::printf("%s", format_rules_table(report.read.model, algorithm_table_for(version)).c_str());
  return 0;
}

class CollectingSink : public RunSink {
 public:
  void on_result(const RunResult& result) override { results.push_back(result); }
  std::vector<RunResult> results;
};

int run_verify(const RulesArgs& a) {
  const OmpiVersion version = target_version(a.ompi);
  const auto report = validate(a, version);
  // A file Open MPI ignores is still run: the trace then shows the fixed decision running
  // where the file's text asks for something else ("not applied").
  if (!report.loads()) std::printf("%s\n", report.verdict().c_str());
  nlohmann::json settings = nlohmann::json::object();
  settings = read_backend_config(a.backend_config);
  if (!a.osu_dir.empty()) settings["osu_dir"] = a.osu_dir;
  auto backend = make_backend(a.backend, settings);
  if (!backend->runs_real_open_mpi())
    throw std::invalid_argument("the " + a.backend + " backend does not run the real Open MPI");

  std::vector<Collective> collectives;
  if (!a.collectives.empty()) {
    collectives = parse_collective_list(a.collectives);
  } else {
    for (const auto& rules : report.read.model.collectives)
      if (auto c = collective_from_ompi_id(rules.collective_id); c && has_message_size(*c))
        collectives.push_back(*c);
  }
  if (collectives.empty()) throw std::invalid_argument("no collective to verify in the file");
  const auto [min_size, max_size] = parse_size_range(a.sizes);
  const fs::path work = a.work_dir.empty() ? fs::temp_directory_path() /
                                                 ("colltune-verify-" + std::to_string(::getpid()))
                                           : fs::path(a.work_dir);
  const AlgorithmTable& table = algorithm_table_for(version);
  bool all_match = true;
  CancelFlag cancel;
  for (Collective c : collectives) {
    const fs::path trace_dir = work / std::string(name(c));
    fs::remove_all(trace_dir);
    fs::create_directories(trace_dir);
    auto request = verification_request("verify-" + std::string(name(c)), c, a.np, a.nodes, 0,
                                        min_size, max_size, a.iterations, a.file, trace_dir);
    CollectingSink sink;
    backend->run(request, sink, cancel);
    if (sink.results.empty() || sink.results.front().outcome != RunOutcome::ok) {
      std::printf("%s P=%d: verification run failed: %s\n", std::string(name(c)).c_str(), a.np,
                  sink.results.empty() ? "no result" : sink.results.front().error.c_str());
      all_match = false;
      continue;
    }
    VerifyOptions options;
    options.min_calls = a.iterations;
    options.algorithms = &table;
    const auto vr =
        verify_trace(report.read.model, c, a.np, osu_message_sizes(c, min_size, max_size),
                     read_trace_dir(trace_dir), options);
    std::printf("%s\n", vr.to_text(table).c_str());
    all_match = all_match && vr.all_match();
  }
  if (a.work_dir.empty()) fs::remove_all(work);
  if (!report.loads()) {
    std::printf("NOT applied: Open MPI ignored the file, so its fixed decision ran instead\n");
    return 3;
  }
  std::printf("%s\n", all_match
                          ? "verified: Open MPI runs what the file says at every tested size"
                          : "NOT verified: Open MPI does not run what the file says (see above)");
  return all_match ? 0 : 3;
}

// The rules to deploy and why they may not go live unverified.
struct DeploySource {
  std::string content;
  std::optional<RulesVersionRecord> record;  // with --db/--rules-id
  std::optional<std::string> unverified;     // the guard's reason; nullopt = verified
};

DeploySource deploy_source(const RulesArgs& a, Store* store) {
  DeploySource src;
  if (store) {
    src.record = store->rules_version(a.rules_id);
    if (!src.record)
      throw std::invalid_argument("no rules version " + std::to_string(a.rules_id) + " in " + a.db);
    src.content = src.record->content;
    if (!a.file.empty() && read_rules_source(a.file) != src.content)
      throw std::invalid_argument(a.file + " differs from rules version " +
                                  std::to_string(a.rules_id) + " of " + a.db);
    src.unverified = unverified_reason(*src.record);
    return src;
  }
  if (a.file.empty()) throw std::invalid_argument("rules deploy: give FILE or --db and --rules-id");
  src.content = read_rules_source(a.file);
  src.unverified = a.file +
                   " has no verification record (a plain file): deploy the rules version of its "
                   "campaign with --db DB --rules-id N, which carries the proof of `verify` on "
                   "the real Open MPI";
  return src;
}

void print_snippet(const fs::path& target) {
  const McaSnippet snippet = mca_snippet(target);
  std::printf("For every job to load it, add to %s%s:\n%s\n", snippet.params_file.c_str(),
              snippet.detected ? " (the system-wide file this Open MPI reads)" : "",
              snippet.text.c_str());
  for (const auto& w : snippet.warnings) std::printf("note: %s\n", w.c_str());
}

int run_deploy(const RulesArgs& a) {
  if (a.db.empty() != (a.rules_id == 0))
    throw std::invalid_argument("rules deploy: --db and --rules-id go together");
  std::unique_ptr<DatabaseOwner> owner;
  std::unique_ptr<Store> store;
  if (!a.db.empty()) {
    if (!fs::is_regular_file(a.db)) throw std::invalid_argument("no database " + a.db);
    owner = std::make_unique<DatabaseOwner>(a.db, "colltune rules deploy");
    store = std::make_unique<Store>(a.db);
  }
  const DeploySource src = deploy_source(a, store.get());
  const OmpiVersion version = target_version(a.ompi);
  const auto report = validate_rules_text(src.content, validation_options_for(version));
  if (!report.deployable() && !a.force) {
    std::fprintf(stderr, "refusing to deploy: %s\n(--force deploys anyway)\n",
                 report.to_text().c_str());
    return report.loads() ? kLintErrors : kIgnored;
  }
  if (src.unverified && !a.force) {
    std::fprintf(stderr,
                 "refusing to deploy: %s\n(--force deploys it anyway; the history records "
                 "that it was forced)\n",
                 src.unverified->c_str());
    return kNotVerified;
  }
  DeployProvenance provenance;
  provenance.campaign = a.campaign;
  provenance.ompi_version = version.to_string();
  provenance.source = a.file.empty() ? "colltune rules deploy --db " + fs::absolute(a.db).string() +
                                           " --rules-id " + std::to_string(a.rules_id)
                                     : fs::absolute(a.file).string();
  if (src.unverified) provenance.extra["forced"] = *src.unverified;
  if (src.record && provenance.campaign.empty() && src.record->campaign_id)
    provenance.campaign = std::to_string(*src.record->campaign_id);
  const auto result = store ? deploy_recorded(*store, *src.record, a.to, provenance)
                            : deploy_rules(src.content, a.to, provenance);
  std::printf(
      "deployed %s as version %d of %s%s%s\n\n",
      a.file.empty() ? ("rules version " + std::to_string(a.rules_id)).c_str() : a.file.c_str(),
      result.version, result.target.c_str(),
      result.previous ? (" (previous: " + std::to_string(*result.previous) + ")").c_str() : "",
      src.unverified ? " - FORCED, not verified" : "");
  print_snippet(a.to);
  return 0;
}

int run_rollback(const RulesArgs& a) {
  DeployResult result;
  if (!a.db.empty()) {
    if (!fs::is_regular_file(a.db)) throw std::invalid_argument("no database " + a.db);
    DatabaseOwner owner(a.db, "colltune rules rollback");
    Store store(a.db);
    std::optional<std::int64_t> live;
    result = rollback_recorded(store, a.to, live);
  } else {
    result = rollback_rules(a.to);
  }
  std::printf("rolled back %s to version %d\n", result.target.c_str(), result.version);
  return 0;
}

int run_history(const RulesArgs& a) {
  const auto active = active_version(a.to);
  for (const auto& e : deploy_history(a.to)) {
    std::printf("%s %04d  %s  campaign=%s ompi=%s source=%s\n",
                active && *active == e.version ? "*" : " ", e.version,
                e.absent ? "(no file)" : e.rules_path.c_str(), e.provenance.campaign.c_str(),
                e.provenance.ompi_version.c_str(), e.provenance.source.c_str());
  }
  return 0;
}

void finish(int rc) {
  if (rc != 0) throw CLI::RuntimeError(rc);
}

}  // namespace

void add_rules_command(CLI::App& app) {
  auto* rules =
      app.add_subcommand("rules", "Validate, show, verify, deploy and roll back rules files");
  rules->require_subcommand(1);
  set_exit_codes(rules, {});  // each subcommand lists its own
  auto a = std::make_shared<RulesArgs>();

  auto* validate_cmd = rules->add_subcommand(
      "validate",
      "Would Open MPI load this file? (exit 0 loads, 1 loads but lint errors, 2 ignored)");
  validate_cmd->add_option("FILE", a->file, "Rules file")->required()->check(CLI::ExistingFile);
  validate_cmd->add_option("--ompi", a->ompi, "Target Open MPI version (default: this machine's)");
  set_exit_codes(validate_cmd, {{kLoads, "Open MPI loads the file, no lint error"},
                                {kLintErrors, "it loads, with lint errors (or another error)"},
                                {kIgnored, "Open MPI would ignore the file"}});
  validate_cmd->callback([a] { finish(run_validate(*a)); });

  auto* show = rules->add_subcommand("show", "The rules as a table");
  show->add_option("FILE", a->file, "Rules file")->required()->check(CLI::ExistingFile);
  show->add_option("--ompi", a->ompi, "Target Open MPI version");
  set_exit_codes(show, {{kIgnored, "Open MPI would ignore the file"}});
  show->callback([a] { finish(run_show(*a)); });

  auto* verify = rules->add_subcommand(
      "verify",
      "Prove on the real library which algorithms run with the file (exit 3 on mismatch)");
  verify->add_option("FILE", a->file, "Rules file")->required()->check(CLI::ExistingFile);
  verify->add_option("--np", a->np, "Ranks")->capture_default_str()->check(CLI::Range(2, 1000000));
  verify->add_option("--nodes", a->nodes, "Nodes (Slurm)")->capture_default_str();
  verify->add_option("--backend", a->backend, "Backend that runs the real Open MPI")
      ->capture_default_str()
      ->check(CLI::IsMember({"local", "slurm"}));
  add_backend_config_option(verify, a->backend_config);
  verify->add_option("--osu-dir", a->osu_dir, "OMB folder (default: bundled benchmark)");
  verify->add_option("--collectives", a->collectives, "Collectives to test (default: the file's)");
  verify->add_option("--sizes", a->sizes, "OSU sizes MIN:MAX")->capture_default_str();
  verify->add_option("--iterations", a->iterations, "OSU -i")->capture_default_str();
  verify->add_option("--work-dir", a->work_dir, "Where trace files go (shared on a cluster)");
  verify->add_option("--ompi", a->ompi, "Target Open MPI version");
  set_exit_codes(verify, {{kExitOk, "verified: Open MPI runs what the file says"},
                          {3, "NOT verified (a mismatch, or the file is ignored)"}});
  verify->callback([a] { finish(run_verify(*a)); });

  auto* deploy = rules->add_subcommand(
      "deploy",
      "Install a verified rules version atomically, with history (exit 1 lint errors, 2 ignored, "
      "4 not verified on the real Open MPI)");
  deploy->add_option("FILE", a->file, "Rules file (or --db and --rules-id)")
      ->check(CLI::ExistingFile);
  deploy->add_option("--to", a->to, "Path Open MPI reads")->required();
  deploy->add_option("--db", a->db, "Store holding the rules version (its verification record)");
  deploy->add_option("--rules-id", a->rules_id, "Rules version id in --db")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 62));
  deploy->add_option("--campaign", a->campaign, "Campaign the rules came from (provenance)");
  deploy->add_option("--ompi", a->ompi, "Target Open MPI version");
  deploy->add_flag("--force", a->force,
                   "Deploy even if not verified on the real Open MPI or validation finds errors");
  set_exit_codes(deploy, {{kExitOk, "deployed"},
                          {kLintErrors, "lint errors (or another error)"},
                          {kIgnored, "Open MPI would ignore the file"},
                          {kNotVerified, "not verified on the real Open MPI (see --force)"}});
  deploy->callback([a] { finish(run_deploy(*a)); });

  auto* rollback =
      rules->add_subcommand("rollback", "Make the previously deployed version live again");
  rollback->add_option("--to", a->to, "Path Open MPI reads")->required();
  rollback->add_option("--db", a->db, "Store whose deploy records follow the rollback");
  set_exit_codes(rollback, {});
  rollback->callback([a] { finish(run_rollback(*a)); });

  auto* history = rules->add_subcommand("history", "Deployed versions (* = active)");
  history->add_option("--to", a->to, "Path Open MPI reads")->required();
  set_exit_codes(history, {});
  history->callback([a] { finish(run_history(*a)); });
}

}  // namespace colltune
