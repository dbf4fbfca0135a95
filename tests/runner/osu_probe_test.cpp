// Issue 20 item 13: what an installed OSU benchmark accepts is read from its own -h and -v, and
// a benchmark that rejects colltune's arguments fails the campaign before any run is spent.
// No OMB is installed here: small fake benchmarks (shell scripts) print the real help texts of
// OMB 5.x, 7.0 (no -T) and later 7.x (-T) and reject options their help does not list, as
// OMB's getopt does ("Invalid Option [-T]" on stderr, the help on stdout, exit 1).
#include "runner/osu_probe.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/store.h"
#include "core/algorithm_table.h"
#include "osu/osu_command.h"
#include "runner/local_backend.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

// OMB 5.6.2's help for a collective (print_help_message, 5.x: short options only).
const char* kHelp5 =
    "Usage: osu_reduce [options]\n"
    "options:\n"
    "  -m SIZE       set maximum message size to SIZE bytes (default 1048576)\n"
    "  -M SIZE       set per process maximum memory consumption to SIZE bytes\n"
    "                (default 536870912)\n"
    "  -i ITER       set iterations per message size to ITER (default 1000 for small\n"
    "                messages, 100 for large messages)\n"
    "  -f            print full format listing (MIN/MAX latency and ITERATIONS\n"
    "                displayed in addition to AVERAGE latency)\n"
    "  -x ITER       number of warmup iterations to skip before timing(default 200)\n"
    "  -h            print this help\n"
    "  -v            print version info\n"
    "\n";

// OMB 7.0's help: long options, validation and graphs, but no -T (data types came later).
const char* kHelp70 =
    "Usage: osu_reduce [options]\n"
    "Options:\n"
    "  -m, --message-size          [MIN:]MAX  set the minimum and/or the maximum message size to "
    "MIN and/or MAX\n"
    "                              bytes respectively. Examples:\n"
    "                              -m 128      // min = default, max = 128\n"
    "                              -m 2:128    // min = 2, max = 128\n"
    "                              -m 2:       // min = 2, max = default\n"
    "  -M, --mem-limit SIZE        set per process maximum memory consumption to SIZE bytes\n"
    "                              (default 536870912)\n"
    "  -i, --iterations ITER       number of iterations for timing (default 10000)\n"
    "  -x, --warmup ITER           set number of warmup iterations to skip before timing (default "
    "200)\n"
    "  -f, --full                  print full format listing (MIN/MAX latency and ITERATIONS\n"
    "                              displayed in addition to AVERAGE latency)\n"
    "  -c, --validation            Enable or disable data validation\n"
    "  -u, --validation-warmup ITR Set number of warmup iterations for validation\n"
    "  -G, --graph tty,png,pdf     graph output of per iteration values.\n"
    "  -h, --help                  print this help\n"
    "  -v, --version               print version info\n"
    "\n";

// A later 7.x (7.1+): the same with -T.
const char* kHelp7T =
    "Usage: osu_reduce [options]\n"
    "Options:\n"
    "  -m, --message-size          [MIN:]MAX  set the minimum and/or the maximum message size to "
    "MIN and/or MAX\n"
    "  -M, --mem-limit SIZE        set per process maximum memory consumption to SIZE bytes\n"
    "  -i, --iterations ITER       number of iterations for timing (default 10000)\n"
    "  -x, --warmup ITER           set number of warmup iterations to skip before timing (default "
    "200)\n"
    "  -f, --full                  print full format listing (MIN/MAX latency and ITERATIONS\n"
    "  -c, --validation            Enable or disable data validation\n"
    "  -T, --type [all|mpi_char|mpi_int|mpi_float]\n"
    "                              Specify Datatype for benchmark\n"
    "  -P, --papi [EVENTS]:[PATH]  Enable PAPI support\n"
    "  -h, --help                  print this help\n"
    "  -v, --version               print version info\n"
    "\n";

struct FakeOmb {
  std::string version;   // "7.0"
  std::string help;      // what -h prints; the letters it lists are the accepted options
  std::string accepted;  // option letters getopt takes (may differ from the help)
};

// A shell script with OMB's command-line behaviour and output format for osu_reduce.
std::string fake_script(const FakeOmb& omb) {
  std::string s = "#!/bin/sh\n";
  s += "help() {\ncat <<'HELP_EOF'\n" + omb.help + "HELP_EOF\n}\n";
  s += "header='# OSU MPI Reduce Latency Test v" + omb.version + "'\n";
  s += "accepted='" + omb.accepted + "'\n";
  s += R"SH(
while [ $# -gt 0 ]; do
  case "$1" in
    -h) help; exit 0 ;;
    -v) echo "$header"; exit 0 ;;
    -?) letter=${1#-}
        case "$accepted" in *"$letter"*) ;; *)
          echo "Invalid Option [$1]" >&2; echo >&2; help; exit 1 ;; esac
        case "$letter" in m|M|i|x|T|a|u|G|P|D) shift ;; esac ;;
    *) echo "Invalid Option [$1]" >&2; help; exit 1 ;;
  esac
  shift
done
if [ -z "$OMPI_COMM_WORLD_SIZE" ]; then
  echo "This test requires at least two processes" >&2; exit 1
fi
[ "$OMPI_COMM_WORLD_RANK" = 0 ] || exit 0
echo
echo "$header"
echo "# Datatype: MPI_CHAR."
printf '%-10s%20s%20s%20s%12s\n' '# Size' 'Avg Latency(us)' 'Min Latency(us)' 'Max Latency(us)' 'Iterations'
printf '%-10d%20.2f%20.2f%20.2f%12d\n' 4 1.50 1.40 1.60 10
printf '%-10d%20.2f%20.2f%20.2f%12d\n' 8 1.70 1.60 1.80 10
exit 0
)SH";
  return s;
}

class OsuProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("colltune-osu-probe-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path install(const std::string& name, const FakeOmb& omb) {
    const fs::path folder = dir_ / name;
    fs::create_directories(folder);
    const fs::path binary = folder / "osu_reduce";
    std::ofstream(binary) << fake_script(omb);
    ::chmod(binary.c_str(), 0755);
    return folder;
  }

  static BenchmarkRequest reduce_request() {
    BenchmarkRequest r;
    r.tag = "probe";
    r.collective = Collective::reduce;
    r.comm_size = 2;
    r.min_size = 4;
    r.max_size = 8;
    r.iterations = 10;
    r.warmup = 1;
    r.configs = {TuningConfig::default_decision()};
    r.run_timeout_s = 60;
    return r;
  }

  fs::path dir_;
};

TEST(OsuCapabilities, ReadsEveryKnownHelpFormat) {
  const auto v5 = parse_osu_capabilities(kHelp5, "# OSU MPI Reduce Latency Test v5.6.2\n");
  EXPECT_EQ(v5.version, "5.6.2");
  EXPECT_EQ(v5.major, 5);
  EXPECT_EQ(v5.options, (std::set<char>{'m', 'M', 'i', 'f', 'x', 'h', 'v'}));
  EXPECT_FALSE(v5.accepts_type_option());

  const auto v70 = parse_osu_capabilities(kHelp70, "\n# OSU MPI Reduce Latency Test v7.0\n");
  EXPECT_EQ(v70.major, 7);
  EXPECT_TRUE(v70.help_read());
  EXPECT_TRUE(v70.options.count('c'));
  EXPECT_FALSE(v70.accepts_type_option()) << "7.0 has no -T";

  const auto v7t = parse_osu_capabilities(kHelp7T, "# OSU MPI Reduce Latency Test v7.4\n");
  EXPECT_EQ(v7t.version, "7.4");
  EXPECT_TRUE(v7t.accepts_type_option());

  // No help read: by version (the old rule), which the argument check then confirms or not.
  const auto bare = parse_osu_capabilities("", "# OSU MPI Reduce Latency Test v7.0\n");
  EXPECT_FALSE(bare.help_read());
  EXPECT_TRUE(bare.accepts_type_option());
  EXPECT_FALSE(parse_osu_capabilities("", "").major);
}

TEST(OsuCapabilities, ArgumentsFollowWhatTheBinaryAccepts) {
  OsuOptions o;
  o.collective = Collective::reduce;
  o.min_size = 6;
  o.max_size = 64;
  using Args = std::vector<std::string>;
  const Args plain{"-m", "6:64", "-i", "100", "-x", "10", "-f"};
  EXPECT_EQ(osu_arguments(o, parse_osu_capabilities(kHelp5, "# OSU MPI Reduce Latency Test v5.9")),
            plain);
  // 7.0: no -T (its reductions run MPI_CHAR) and no rounding of MIN to whole floats.
  EXPECT_EQ(osu_arguments(o, parse_osu_capabilities(kHelp70, "# OSU MPI Reduce Latency Test v7.0")),
            plain);
  EXPECT_EQ(osu_arguments(o, parse_osu_capabilities(kHelp7T, "# OSU MPI Reduce Latency Test v7.3")),
            (Args{"-m", "4:64", "-i", "100", "-x", "10", "-f", "-T", "mpi_float"}));
  // The bundled benchmark lists -T but is 5.x-like (float reductions by default): no -T.
  EXPECT_EQ(osu_arguments(o, parse_osu_capabilities(
                                 kHelp7T, "# OSU MPI Reduce Latency Test v5.6.2-colltune")),
            plain);
}

TEST_F(OsuProbeTest, Omb70ReductionPassesPreflightWithoutTypeOption) {
  // Before: -T mpi_float for every 7.x, and OMB 7.0 failed every run on "Invalid Option [-T]".
  const auto folder = install("omb70", {"7.0", kHelp70, "mMixfcuGhv"});
  LocalBackendOptions options;
  options.osu_dir = folder;
  LocalBackend backend(options);
  EXPECT_EQ(backend.preflight(reduce_request()), "");

  struct Sink : RunSink {
    std::vector<RunResult> results;
    void on_result(const RunResult& r) override { results.push_back(r); }
  } sink;
  CancelFlag cancel;
  backend.run(reduce_request(), sink, cancel);
  ASSERT_EQ(sink.results.size(), 1u);
  const auto& run = sink.results[0];
  EXPECT_EQ(run.outcome, RunOutcome::ok) << run.error << "\n" << run.provenance.stderr_excerpt;
  EXPECT_EQ(std::count(run.provenance.argv.begin(), run.provenance.argv.end(), "-T"), 0);
  EXPECT_EQ(run.rows.size(), 2u);
}

TEST_F(OsuProbeTest, Omb7WithTypeOptionGetsFloatReductions) {
  const auto folder = install("omb74", {"7.4", kHelp7T, "mMixfcTPhv"});
  OsuProbe probe;
  const auto argv = probe.command(folder / "osu_reduce", osu_options_for(reduce_request()));
  EXPECT_EQ(argv.back(), "mpi_float");
  EXPECT_FALSE(probe.check(folder / "osu_reduce", osu_options_for(reduce_request())).rejected);
}

TEST_F(OsuProbeTest, Omb5PassesPreflight) {
  const auto folder = install("omb5", {"5.6.2", kHelp5, "mMifxhv"});
  LocalBackendOptions options;
  options.osu_dir = folder;
  LocalBackend backend(options);
  EXPECT_EQ(backend.preflight(reduce_request()), "");
}

TEST_F(OsuProbeTest, RejectedArgumentsFailTheCampaignAtOnceWithTheBenchmarksMessage) {
  // A 7.0 whose -h prints nothing usable: colltune falls back to the version and passes -T,
  // which the benchmark rejects. The campaign fails in preflight: no job, no run.
  const auto folder = install("omb70-nohelp", {"7.0", "", "mMixfhv"});
  LocalBackendOptions options;
  options.osu_dir = folder;
  LocalBackend backend(options);
  const std::string reason = backend.preflight(reduce_request());
  EXPECT_NE(reason.find("Invalid Option [-T]"), std::string::npos) << reason;
  EXPECT_NE(reason.find("v7.0"), std::string::npos) << reason;

  Store store((dir_ / "store.db").string());
  const auto spec =
      parse_campaign_spec({{"backend", "local"},
                           {"contexts", {{{"collective", "reduce"}, {"comm_size", 2}}}},
                           {"sizes", "4:8"},
                           {"iterations", 10},
                           {"warmup", 1}});
  const auto id = CampaignEngine::create_campaign(store, spec);
  const AlgorithmTable table = AlgorithmTable::builtin_4_1();
  CampaignEngine engine(store, backend, table);
  CancelFlag cancel;
  EXPECT_EQ(engine.run(id, cancel), EngineOutcome::failed);
  EXPECT_NE(engine.error().find("Invalid Option [-T]"), std::string::npos) << engine.error();
  EXPECT_EQ(store.count_runs(id), 0);
  EXPECT_EQ(store.campaign(id)->state, CampaignState::failed);
}

}  // namespace
}  // namespace colltune
