// The CLI's conventions on the real binary: one name per concept (--backend-config, --db),
// defaults, choices and exit codes in every --help and in docs/cli.md, -v after the
// subcommand, usage errors exit 64, Slurm fails at once without a controller, the local
// backend warns when ranks exceed cores, fingerprint names and bounds each probe.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/file_text.h"
#include "runner/process.h"
#include "slurm/batch_script.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

ProcessResult colltune(std::vector<std::string> args, ProcessOptions options = {}) {
  args.insert(args.begin(), COLLTUNE_BINARY);
  if (options.timeout_s == 0) options.timeout_s = 60;
  return run_process(args, options);
}

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("colltune-conv-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Every command and subcommand that runs something.
const std::vector<std::vector<std::string>> kCommands = {{"tune"},
                                                         {"serve"},
                                                         {"campaign", "create"},
                                                         {"campaign", "list"},
                                                         {"campaign", "show"},
                                                         {"campaign", "pause"},
                                                         {"campaign", "resume"},
                                                         {"campaign", "cancel"},
                                                         {"campaign", "watch"},
                                                         {"export", "landscape"},
                                                         {"report"},
                                                         {"rules", "validate"},
                                                         {"rules", "show"},
                                                         {"rules", "verify"},
                                                         {"rules", "deploy"},
                                                         {"rules", "rollback"},
                                                         {"rules", "history"},
                                                         {"fingerprint"},
                                                         {"retune"},
                                                         {"sentinel"},
                                                         {"token", "new"}};

std::string help_of(const std::vector<std::string>& command) {
  auto args = command;
  args.push_back("--help");
  const auto r = colltune(args);
  EXPECT_EQ(r.exit_code, 0) << command[0] << ": " << r.stderr_text;
  return r.stdout_text;
}

std::string joined(const std::vector<std::string>& command) {
  std::string s;
  for (const auto& c : command) s += (s.empty() ? "" : " ") + c;
  return s;
}

TEST(CliConventions, EveryHelpListsExitCodesAndDocsCliHasEveryCommand) {
  const auto cli_md = read_file_text(fs::path(COLLTUNE_SOURCE_DIR) / "docs" / "cli.md");
  ASSERT_TRUE(cli_md) << "docs/cli.md";
  const std::string& doc = *cli_md;
  for (const auto& command : kCommands) {
    const std::string help = help_of(command);
    EXPECT_NE(help.find("Exit codes:\n"), std::string::npos) << joined(command) << "\n" << help;
    EXPECT_NE(help.find("   64  bad command line"), std::string::npos) << joined(command);
    EXPECT_NE(doc.find("`colltune " + joined(command) + "`"), std::string::npos)
        << "docs/cli.md does not name colltune " << joined(command);
  }
}

TEST(CliConventions, OneNameForBackendSettingsAndForTheStore) {
  for (const auto& command :
       std::vector<std::vector<std::string>>{{"tune"}, {"rules", "verify"}, {"sentinel"}}) {
    const std::string help = help_of(command);
    EXPECT_NE(help.find("--backend-config FILE|JSON"), std::string::npos) << joined(command);
    EXPECT_EQ(help.find("--backend-settings"), std::string::npos) << joined(command);
  }
  for (const auto& command : std::vector<std::vector<std::string>>{{"tune"},
                                                                   {"export", "landscape"},
                                                                   {"report"},
                                                                   {"serve"},
                                                                   {"rules", "deploy"},
                                                                   {"rules", "rollback"}})
    EXPECT_NE(help_of(command).find("--db"), std::string::npos) << joined(command);
  // The old spelling still works, with a warning.
  const fs::path dir = scratch("alias");
  const auto r = colltune({"sentinel", "--rules", (dir / "missing.conf").string(),
                           "--backend-settings", "{}", "--cells", "bcast:4"});
  EXPECT_NE(r.stderr_text.find("--backend-settings is deprecated; use --backend-config"),
            std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.exit_code, 64) << "the deprecated spelling must still parse: " << r.stderr_text;
  fs::remove_all(dir);
}

TEST(CliConventions, HelpShowsDefaultsAndChoicesAndBadValuesExit64) {
  const std::string help = help_of({"tune"});
  EXPECT_NE(help.find("{local,slurm,sim,replay}"), std::string::npos) << help;
  EXPECT_NE(help.find("--db FILE=colltune.db"), std::string::npos) << help;
  EXPECT_NE(help.find("--final-method TEXT:{paired,median}"), std::string::npos) << help;
  EXPECT_NE(help.find("-p,--partition"), std::string::npos);
  EXPECT_NE(help.find("-A,--account"), std::string::npos);
  EXPECT_NE(help.find("--qos"), std::string::npos);
  EXPECT_NE(help.find("-t,--time"), std::string::npos);
  auto r = colltune({"tune", "--backend", "nowhere"});
  EXPECT_EQ(r.exit_code, 64) << r.stderr_text;
  r = colltune({"tune", "--strategy", "guess"});
  EXPECT_EQ(r.exit_code, 64) << r.stderr_text;
  r = colltune({"no-such-command"});
  EXPECT_EQ(r.exit_code, 64) << r.stderr_text;
}

TEST(CliConventions, VerboseIsAcceptedAfterTheSubcommand) {
  const fs::path dir = scratch("verbose");
  // Fails for its own reason (no store), not as an unknown option.
  for (const char* flag : {"-v", "--verbose"}) {
    const auto r = colltune({"export", "landscape", "--db", (dir / "none.db").string(), flag});
    EXPECT_EQ(r.exit_code, 1) << flag << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("no store at"), std::string::npos) << r.stderr_text;
  }
  fs::remove_all(dir);
}

TEST(CliConventions, SlurmFlagsNeedTheSlurmBackendAndTimeIsChecked) {
  auto r = colltune({"tune", "--backend", "sim", "--profile", "pise", "-p", "batch"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.stderr_text.find("are Slurm flags"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(slurm::parse_time_limit_minutes("30"), 30);
  EXPECT_EQ(slurm::parse_time_limit_minutes("1:30"), 2);  // M:S rounds up
  EXPECT_EQ(slurm::parse_time_limit_minutes("2:00:00"), 120);
  EXPECT_EQ(slurm::parse_time_limit_minutes("1-0"), 1440);
  EXPECT_EQ(slurm::parse_time_limit_minutes("1-2:30"), 1590);
  EXPECT_EQ(slurm::parse_time_limit_minutes("0-0:0:1"), 1);
  for (const char* bad : {"", "0", "UNLIMITED", "1:2:3:4", "x", "-5", "1--2"})
    EXPECT_THROW(slurm::parse_time_limit_minutes(bad), std::invalid_argument) << bad;
}

TEST(CliConventions, TuneOnSlurmFailsAtOnceWhenNoControllerAnswers) {
  // A Slurm configuration whose controller is a closed loopback port: scontrol ping gets a
  // refusal at once. No running Slurm needed (without scontrol at all it fails at once too).
  const fs::path dir = scratch("slurm");
  {
    std::ofstream conf(dir / "slurm.conf");
    conf << "ClusterName=nowhere\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\n"
            "NodeName=localhost CPUs=1 State=UNKNOWN\n"
            "PartitionName=debug Nodes=localhost Default=YES\n";
  }
  ProcessOptions options;
  options.env["SLURM_CONF"] = (dir / "slurm.conf").string();
  options.timeout_s = 120;
  const auto started = std::chrono::steady_clock::now();
  const auto r = colltune({"tune", "--backend", "slurm", "-p", "debug", "-t", "10", "--np", "2",
                           "--collectives", "bcast", "--db", (dir / "s.db").string()},
                          options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(r.exit_code, 69) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("no Slurm controller answers"), std::string::npos) << r.stderr_text;
  EXPECT_LT(seconds, 45) << "must fail at once, not after the controller timeout";
  EXPECT_FALSE(fs::exists(dir / "s.db")) << "nothing is stored for a campaign that cannot run";
  fs::remove_all(dir);
}

TEST(CliConventions, LocalBackendWarnsWhenRanksExceedCores) {
  const fs::path dir = scratch("oversubscribe");
  // 2 cores declared, 4 ranks; an empty OSU folder stops the campaign before any run.
  const auto r = colltune({"tune", "--backend", "local", "--backend-config", R"({"cores": 2})",
                           "--np", "4", "--collectives", "bcast", "--osu-dir", dir.string(), "--db",
                           (dir / "o.db").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("bcast 4 ranks on 2 core(s): the local backend oversubscribes"),
            std::string::npos)
      << r.stderr_text;
  // ... and not when they fit.
  const auto fits = colltune({"tune", "--backend", "local", "--backend-config", R"({"cores": 4})",
                              "--np", "4", "--collectives", "bcast", "--osu-dir", dir.string(),
                              "--db", (dir / "o2.db").string()});
  EXPECT_EQ(fits.stderr_text.find("oversubscribes"), std::string::npos) << fits.stderr_text;
  fs::remove_all(dir);
}

TEST(CliConventions, FingerprintNamesEachProbeAndBoundsIt) {
  const fs::path dir = scratch("fingerprint");
  const fs::path slow = dir / "slow-ompi-info";
  {
    std::ofstream script(slow);
    script << "#!/bin/sh\nexec sleep 30\n";
  }
  fs::permissions(slow, fs::perms::owner_all);
  const auto started = std::chrono::steady_clock::now();
  const auto r = colltune({"fingerprint", "--scheduler", "none", "--ompi-info", slow.string(),
                           "--probe-timeout", "2", "--json"},
                          {.timeout_s = 120});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(r.stderr_text.find("waiting for '" + slow.string()), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("(at most 2 s)"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("failed: "), std::string::npos) << r.stderr_text;
  EXPECT_LT(seconds, 25) << "each probe is bounded by --probe-timeout";
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;  // the fingerprint lists what stayed unknown
  EXPECT_NE(r.stdout_text.find("unknown"), std::string::npos);
  fs::remove_all(dir);
}

TEST(CliConventions, SlurmFlagsReachSbatchAndAreKeptForResume) {
  // Slurm commands stand-ins: a controller that answers, an sbatch that refuses the job (as a
  // wrong account would). The batch script it was given shows the flags.
  const fs::path dir = scratch("slurm-flags");
  fs::create_directories(dir / "bin");
  auto script = [&](const std::string& name, const std::string& body) {
    std::ofstream out(dir / "bin" / name);
    out << "#!/bin/sh\n" << body << "\n";
    out.close();
    fs::permissions(dir / "bin" / name, fs::perms::owner_all);
  };
  script("scontrol", "echo 'Slurmctld(primary) at fake is UP'");
  script("sbatch",
         "echo 'sbatch: error: Invalid account or account/partition combination' >&2; exit 1");
  for (const char* c : {"squeue", "sacct", "scancel", "sinfo", "srun"}) script(c, "exit 1");
  const std::string settings = "{\"slurm_bin_dir\": \"" + (dir / "bin").string() +
                               "\", \"controller_timeout_s\": 1, \"job_root\": \"" +
                               (dir / "jobs").string() + "\"}";
  const std::string db = (dir / "s.db").string();
  auto r = colltune({"tune",
                     "--backend",
                     "slurm",
                     "--backend-config",
                     settings,
                     "-p",
                     "debug",
                     "-A",
                     "acct",
                     "--qos",
                     "low",
                     "-t",
                     "1:30:00",
                     "--np",
                     "2",
                     "--collectives",
                     "bcast",
                     "--sizes",
                     "4:16",
                     "--budget",
                     "2",
                     "--db",
                     db,
                     "--no-verify",
                     "--rules-out",
                     (dir / "r.conf").string()},
                    {.timeout_s = 120});
  EXPECT_NE(r.stderr_text.find("Invalid account"), std::string::npos) << r.stderr_text;
  std::string batch;
  for (const auto& e : fs::recursive_directory_iterator(dir / "jobs"))
    if (e.path().extension() == ".sh") {
      std::ifstream in(e.path());
      batch.assign(std::istreambuf_iterator<char>(in), {});
      break;
    }
  for (const char* line : {"#SBATCH --partition=debug\n", "#SBATCH --account=acct\n",
                           "#SBATCH --qos=low\n", "#SBATCH --time=90\n"})
    EXPECT_NE(batch.find(line), std::string::npos) << line << " not in:\n" << batch;
  // A resume asking for another partition is refused (the campaign keeps what it was created
  // with); the Slurm flags are understood as such without --backend.
  r = colltune({"tune", "--db", db, "--resume", "1", "-p", "other"});
  EXPECT_EQ(r.exit_code, 1) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("\"partition\":\"debug\""), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("Slurm flags to resume as created"), std::string::npos)
      << r.stderr_text;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace colltune
