// `colltune sentinel`: a cheap non-regression check of a deployed rules file (campaign/sentinel.h):
// a few (collective, size) cells re-measured with the rules and with Open MPI's default,
// interleaved, judged with a bootstrap interval. On a regression it asks the daemon to re-tune
// (--server) like a fingerprint change would.
//
//   colltune sentinel --rules FILE [--cells bcast:1M,allreduce:64K] [--np 4] [--rounds 10]
//
// Exit: 0 the rules hold, 10 regression and a re-tuning campaign was started (or is already
// running), 11 regression reported without a server, 1 error.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>

#include "campaign/retune.h"
#include "campaign/sentinel.h"
#include "cli/commands.h"
#include "cli/conventions.h"
#include "core/ompi_version.h"
#include "rules/rules_reader.h"
#include "runner/backend_factory.h"
#include "server/retune_client.h"

namespace colltune {
namespace {

struct SentinelArgs {
  std::string rules;
  std::string cells;
  int np = 4;
  int nodes = 1;
  int rounds = 10;
  int iterations = 50;
  int warmup = 5;
  std::uint64_t seed = 1;
  double tolerance = 0.10;
  double confidence = 0.95;
  std::string expect;  // bcast:1M=1.8,...
  std::string backend = "local";
  std::string backend_config;  // --backend-config FILE|JSON
  std::string osu_dir;
  bool json = false;
  DaemonEndpoint daemon;
  bool use_server = false;
};

std::map<std::string, double> parse_expectations(const std::string& text) {
  std::map<std::string, double> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("--expect-speedup: '" + item + "' is not CELL=SPEEDUP");
    const auto cells = parse_sentinel_cells(item.substr(0, eq));
    double v = 0;
    try {
      v = std::stod(item.substr(eq + 1));
    } catch (const std::exception&) {
      throw std::invalid_argument("--expect-speedup: '" + item + "': speed-up is not a number");
    }
    if (!(v > 0))
      throw std::invalid_argument("--expect-speedup: '" + item + "': speed-up must be > 0");
    out[to_string(cells.front())] = v;
  }
  return out;
}

int run_sentinel_command(const SentinelArgs& args) {
  nlohmann::json settings = read_backend_config(args.backend_config);
  if (!args.osu_dir.empty()) settings["osu_dir"] = args.osu_dir;
  auto backend = make_backend(args.backend, settings);

  SentinelOptions options;
  options.rules_path = args.rules;
  options.comm_size = args.np;
  options.nodes = args.nodes;
  options.rounds = args.rounds;
  options.iterations = args.iterations;
  options.warmup = args.warmup;
  options.seed = args.seed;
  options.tolerance = args.tolerance;
  options.confidence = args.confidence;
  options.expected_speedup = parse_expectations(args.expect);
  if (!args.cells.empty()) {
    options.cells = parse_sentinel_cells(args.cells);
  } else {
    // The cells the file tunes, read as the target's Open MPI reads it.
    const auto version =
        parse_ompi_version(backend->describe().ompi_version).value_or(OmpiVersion{4, 1, 4});
    const auto read = read_rules_file(args.rules, rules_dialect_for(version));
    if (!read.loaded)
      throw std::invalid_argument(args.rules + ": Open MPI " + version.to_string() +
                                  " would ignore this file (" + read.reason + ")");
    options.cells = sentinel_cells_from_rules(read.model, args.np, 3);
    if (options.cells.empty())
      throw std::invalid_argument(args.rules + " tunes nothing at " + std::to_string(args.np) +
                                  " ranks; name cells with --cells");
  }

  CancelFlag cancel;
  const SentinelReport report = run_sentinel(*backend, options, cancel);
  if (args.json)
    std::cout << report.to_json().dump(2) << "\n";
  else
    std::printf("%s", report.to_text().c_str());
  if (report.failed_runs == report.runs)
    throw std::runtime_error("every run failed: " + report.first_failure);
  // The daemon keeps every verdict (its /metrics shows the newest), regression or not.
  // Best effort: a daemon that cannot record it (older, unreachable) does not change the
  // verdict, which the exit code carries; the re-tune request below still needs the daemon.
  if (args.use_server) {
    try {
      daemon_request(args.daemon, "POST", "/api/v1/sentinel/reports", report.to_json().dump());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "colltune: warning: the daemon did not record the verdict: %s\n",
                   e.what());
    }
  }
  if (!report.regression) return kExitNothingToDo;
  if (!args.use_server) return kExitRegressionOnly;

  std::string reason = "sentinel:";
  for (const auto& c : report.cells)
    if (c.verdict == "regressed" || c.verdict == "advantage_lost") {
      char buf[160];
      std::snprintf(buf, sizeof buf, " %s %s (tuned/default %.2f, interval [%.2f, %.2f]);",
                    to_string(c.cell).c_str(), c.verdict.c_str(), c.ratio.ratio, c.ratio.low,
                    c.ratio.high);
      reason += buf;
    }
  reason.pop_back();
  const nlohmann::json body = {
      {"force", true}, {"if_changed", false}, {"reason", reason}, {"sentinel", report.to_json()}};
  const auto answer = daemon_request(args.daemon, "POST", "/api/v1/retune", body.dump());
  const std::string action = answer.body.value("action", "");
  if (!args.json) std::printf("%s\n", answer.body.value("message", action).c_str());
  if (action == "retune" || action == "running") return kExitRetuneStarted;
  return kExitRegressionOnly;
}

}  // namespace

void add_sentinel_command(CLI::App& app) {
  auto args = std::make_shared<SentinelArgs>();
  auto* cmd = app.add_subcommand(
      "sentinel", "Check that deployed rules still beat Open MPI's default (cheap; for cron)");
  cmd->add_option("--rules", args->rules, "The rules file (as deployed)")->required();
  cmd->add_option(
      "--cells", args->cells,
      "Cells to measure, e.g. bcast:1M,allreduce:64K (default: up to 3 the file tunes)");
  cmd->add_option("--np", args->np, "Ranks")->check(CLI::Range(2, 1 << 20))->capture_default_str();
  cmd->add_option("--nodes", args->nodes, "Nodes")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--rounds", args->rounds, "Interleaved (tuned, default) pairs per cell")
      ->check(CLI::Range(3, 1000))
      ->capture_default_str();
  cmd->add_option("--iterations", args->iterations, "OSU -i per run")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "OSU -x per run")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the order and of the bootstrap")
      ->capture_default_str();
  cmd->add_option("--tolerance", args->tolerance, "Slow-down accepted before it is a regression")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  cmd->add_option("--confidence", args->confidence, "Of the bootstrap interval")
      ->check(CLI::Range(0.5, 0.9999))
      ->capture_default_str();
  cmd->add_option(
      "--expect-speedup", args->expect,
      "Speed-ups measured at tuning, e.g. bcast:1M=1.8 (a lost advantage then fires too)");
  cmd->add_option("--backend", args->backend, "Backend that runs the real Open MPI")
      ->capture_default_str()
      ->check(CLI::IsMember({"local", "slurm"}));
  add_backend_config_option(cmd, args->backend_config);
  cmd->add_option("--osu-dir", args->osu_dir, "OSU folder (default: the bundled benchmark)");
  cmd->add_flag("--json", args->json, "Print the report as JSON");
  auto* server = cmd->add_option("--server", args->daemon.server,
                                 "Report the verdict to this daemon; on a regression ask it to "
                                 "re-tune (else exit 11)");
  cmd->add_option("--token", args->daemon.token, "Admin API token (default $COLLTUNE_TOKEN)");
  cmd->add_option("--ca-cert", args->daemon.ca_cert, "PEM file to trust for https");
  set_exit_codes(cmd,
                 {{kExitNothingToDo, "the rules hold"},
                  {kExitRetuneStarted, "regression; a re-tuning campaign was started (or runs)"},
                  {kExitRegressionOnly, "regression; no daemon to re-tune"}});
  cmd->callback([args, server] {
    args->use_server = server->count() > 0 || std::getenv("COLLTUNE_SERVER") != nullptr;
    const int rc = run_sentinel_command(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace colltune
