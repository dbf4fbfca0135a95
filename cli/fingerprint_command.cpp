// `colltune fingerprint`: what tuned rules depend on (Open MPI, coll components, nodes, network),
// read here (or on a Slurm partition's nodes, or asked of a daemon), as a summary or JSON, and
// compared with a saved one.
//
//   colltune fingerprint                       summary of this machine (Slurm when sinfo answers)
//   colltune fingerprint --json -o fp.json     the JSON document
//   colltune fingerprint --compare fp.json     what changed since (exit 4 on a relevant change)
//   colltune fingerprint --server URL          the daemon's view of its backend's target
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>

#include "campaign/fingerprint.h"
#include "campaign/retune.h"
#include "cli/commands.h"
#include "cli/conventions.h"
#include "runner/local_backend.h"
#include "server/retune_client.h"

namespace colltune {
namespace {

struct FingerprintArgs {
  std::string scheduler = "auto";
  std::string partition;
  std::string osu_dir;
  std::string ompi_info = "ompi_info";
  bool json = false;
  std::string output;
  std::string compare;
  DaemonEndpoint daemon;
  bool use_server = false;
  std::string backend;
  double probe_timeout = 60;  // seconds per probe (ompi_info, sinfo, a node's srun ...)
};

// Says on stderr what each probe is waiting for and how long it may take, and why it failed
// (a probe that times out leaves its fields "unknown"; the fingerprint lists them).
CommandRunner announced(CommandRunner inner, double timeout_s) {
  return [inner = std::move(inner), timeout_s](const std::vector<std::string>& argv,
                                               const std::string& node) {
    std::string command;
    for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
    std::fprintf(stderr, "colltune: fingerprint: waiting for '%s'%s (at most %.0f s)\n",
                 command.c_str(), node.empty() ? "" : (" on " + node).c_str(), timeout_s);
    CommandOutput out = inner(argv, node);
    if (!out.ok())
      std::fprintf(stderr, "colltune: fingerprint:   '%s' failed: %s\n",
                   argv.empty() ? "" : argv[0].c_str(), out.failure().c_str());
    return out;
  };
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  auto j =
      nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
  if (j.is_discarded()) throw std::runtime_error(path + " is not JSON");
  // A rules version (GET /api/v1/rules/{id}) carries its fingerprint.
  if (j.is_object() && j.contains("fingerprint") && j["fingerprint"].is_object())
    return j["fingerprint"];
  if (j.is_object() && j.contains("hash")) return j;
  throw std::runtime_error(path + " holds no fingerprint");
}

int run_fingerprint(const FingerprintArgs& args) {
  nlohmann::json fp;
  if (args.use_server) {
    std::string path = "/api/v1/fingerprint";
    if (!args.backend.empty()) path += "?backend=" + args.backend;
    fp = daemon_request(args.daemon, "GET", path).body.at("fingerprint");
  } else {
    FingerprintOptions options;
    options.scheduler = args.scheduler;
    options.partition = args.partition;
    options.ompi_info = args.ompi_info;
    options.osu_dir = args.osu_dir.empty() ? LocalBackend::bundled_osu_dir()
                                           : std::filesystem::path(args.osu_dir);
    const CommandRunner runner = announced(
        args.scheduler == "none" ? local_command_runner(args.probe_timeout)
                                 : srun_command_runner(args.partition, args.probe_timeout),
        args.probe_timeout);
    fp = collect_fingerprint(runner, options);
  }
  if (!args.output.empty()) {
    std::ofstream out(args.output);
    if (!out) throw std::runtime_error("cannot write " + args.output);
    out << fp.dump(2) << "\n";
  }
  if (!args.compare.empty()) {
    const auto before = read_json_file(args.compare);
    const auto changes = diff_fingerprints(before, fp);
    if (args.json) {
      std::cout << nlohmann::json{{"changes", changes_json(changes)},
                                  {"relevant", any_relevant(changes)},
                                  {"fingerprint", fp}}
                       .dump(2)
                << "\n";
    } else if (changes.empty()) {
      std::printf("no change since %s (hash %s)\n", args.compare.c_str(),
                  fp.value("hash", "").c_str());
    } else {
      std::printf("changes since %s:\n", args.compare.c_str());
      std::printf("%s", format_changes(changes).c_str());
      std::printf(any_relevant(changes)
                      ? "relevant: tuned rules may no longer fit (colltune retune)\n"
                      : "none of them is relevant to tuned rules\n");
    }
    return any_relevant(changes) ? 4 : 0;
  }
  if (args.json)
    std::cout << fp.dump(2) << "\n";
  else
    std::printf("%s", format_fingerprint(fp).c_str());
  return 0;
}

}  // namespace

void add_fingerprint_command(CLI::App& app) {
  auto args = std::make_shared<FingerprintArgs>();
  auto* cmd = app.add_subcommand(
      "fingerprint",
      "Describe what tuned rules depend on (Open MPI, coll components, nodes, network)");
  cmd->add_option("--scheduler", args->scheduler, "auto (Slurm when sinfo answers), slurm or none")
      ->check(CLI::IsMember({"auto", "slurm", "none"}))
      ->capture_default_str();
  cmd->add_option("--partition", args->partition, "Slurm partition (default: the default one)");
  cmd->add_option("--osu-dir", args->osu_dir, "OSU folder (default: the bundled benchmark)");
  cmd->add_option("--ompi-info", args->ompi_info, "ompi_info program")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_option("-o,--output", args->output, "Also write the JSON to this file");
  cmd->add_option(
      "--compare", args->compare,
      "Compare with a saved fingerprint (or rules version) JSON; exit 4 on a relevant change");
  auto* server = cmd->add_option("--server", args->daemon.server,
                                 "Ask this daemon instead (its backend's target)");
  cmd->add_option("--token", args->daemon.token, "API token (default $COLLTUNE_TOKEN)");
  cmd->add_option("--backend", args->backend, "With --server: the daemon backend to describe");
  cmd->add_option("--probe-timeout", args->probe_timeout,
                  "Seconds each probe (ompi_info, sinfo, srun on a node ...) may take before its "
                  "fields are left unknown")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  set_exit_codes(cmd, {{kExitOk, "printed (with --compare: no relevant change)"},
                       {4, "--compare: a change relevant to tuned rules"}});
  cmd->callback([args, server] {
    args->use_server = server->count() > 0;
    const int rc = run_fingerprint(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace colltune
