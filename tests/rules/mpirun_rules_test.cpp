// Integration tests on the real Open MPI 4.1.4: every file of corpus/ is loaded by mpirun
// (np 4, oversubscribed) with the algorithm tracer preloaded, a small MPI program calls the
// collective at a few sizes, and what ran must be exactly what the validator predicts: the
// file's rules (Open MPI loaded it) or the fixed decision (Open MPI silently ignored it), or a
// failing call (the file loads but names an algorithm that cannot run).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/fixed_decision.h"
#include "rules/rules_builder.h"
#include "rules/rules_validate.h"
#include "rules/rules_writer.h"
#include "rules/trace.h"
#include "rules/tracer_location.h"
#include "rules/verify.h"
#include "tests/support/process_runner.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;
using testing::run_process;

constexpr int kRanks = 4;
constexpr int kIterations = 3;
const std::vector<std::int64_t> kSizes{4, 64, 8192, 1048576};

struct ProbeRun {
  ProcessResult process;
  TraceData trace;
  std::map<std::pair<std::string, std::int64_t>, int> error_class;  // rank 0's report
};

class MpirunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "colltune-mpirun-XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // mpirun -np 4 [rules file] -x LD_PRELOAD=tracer -x COLLTUNE_TRACE_DIR=... probe ...
  ProbeRun run(const std::optional<fs::path>& rules, const std::string& collectives,
               const std::vector<std::int64_t>& sizes, const std::string& program = PROBE_PATH,
               std::vector<std::string> program_args = {}) {
    static int counter = 0;
    fs::path trace_dir = dir_ / ("trace" + std::to_string(counter++));
    fs::create_directories(trace_dir);
    std::vector<std::string> argv{MPIEXEC_PATH, "-np", std::to_string(kRanks), "--oversubscribe"};
    if (rules) {
      argv.insert(argv.end(), {"--mca", "coll_tuned_use_dynamic_rules", "1", "--mca",
                               "coll_tuned_dynamic_rules_filename", rules->string()});
    }
    argv.insert(argv.end(), {"-x", std::string("LD_PRELOAD=") + TRACER_PATH, "-x",
                             "COLLTUNE_TRACE_DIR=" + trace_dir.string(), program});
    if (program_args.empty()) {
      program_args = {collectives, std::to_string(kIterations)};
      for (auto s : sizes) program_args.push_back(std::to_string(s));
    }
    argv.insert(argv.end(), program_args.begin(), program_args.end());
    std::map<std::string, std::string> env;
    if (geteuid() == 0) {
      env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
      env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
    }
    ProbeRun r;
    r.process = run_process(argv, env, 60);
    r.trace = read_trace_dir(trace_dir);
    std::istringstream lines(r.process.out);
    std::string line;
    while (std::getline(lines, line)) {
      char coll[64];
      long long size = 0;
      int rc = 0;
      if (std::sscanf(line.c_str(), "coll=%63s size=%lld rc=%d", coll, &size, &rc) == 3)
        r.error_class[{coll, size}] = rc;
    }
    return r;
  }

  fs::path dir_;
};

// What the validator says Open MPI does for one (collective, size) at 4 ranks.
struct Prediction {
  ExpectedChoice expected;
  bool fails = false;
};

Prediction predict(const ValidationReport& v, Collective c, std::int64_t size) {
  VerifyOptions options;
  RulesModel empty;
  Prediction p;
  p.expected = expected_choice(v.loads() ? v.read.model : empty, c, kRanks, size, options);
  const AlgorithmInfo* info = AlgorithmTable::builtin_4_1().at(c).find(p.expected.algorithm);
  p.fails = p.expected.call_fails || (info && info->only_two_procs && kRanks != 2);
  return p;
}

std::string probe_collectives(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    auto at = line.find("colltune-probe:");
    if (at != std::string::npos) {
      std::string rest = line.substr(at + 15);
      rest.erase(0, rest.find_first_not_of(' '));
      return rest.substr(0, rest.find_first_of(" \r\n"));
    }
  }
  return "bcast";
}

TEST_F(MpirunTest, CorpusValidatorAgreesWithOpenMpi) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(CORPUS_DIR))
    if (e.path().extension() == ".rules") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 30u);

  int agreed = 0, discriminating = 0;
  double seconds = 0;
  std::map<std::string, int> categories;
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    std::string category = file.filename().string().substr(0, file.filename().string().find('_'));
    ++categories[category];
    ValidationReport v = validate_rules_file(file);
    Collective c = *parse_collective(probe_collectives(file));

    // The file name states what Open MPI does with it; the validator must say the same.
    bool predicted_failure = false;
    bool differs_from_fixed = false;
    for (auto s : kSizes) {
      Prediction p = predict(v, c, s);
      predicted_failure |= p.fails;
      differs_from_fixed |= p.fails || p.expected.algorithm != fixed_decision_4_1(c, kRanks, s);
    }
    if (category == "ok") {
      EXPECT_TRUE(v.loads() && !predicted_failure) << v.to_text();
    } else if (category == "ignored") {
      EXPECT_FALSE(v.loads()) << v.to_text();
    } else {
      ASSERT_EQ(category, "abort");
      EXPECT_TRUE(v.loads() && predicted_failure) << v.to_text();
    }
    if (v.loads()) {
      EXPECT_TRUE(differs_from_fixed) << "the file would not show whether it was applied";
    } else {
      // What the partial content would have done, had Open MPI accepted it.
      ValidationReport as_if = v;
      as_if.read.loaded = true;
      for (auto s : kSizes)
        if (predict(as_if, c, s).expected.algorithm != fixed_decision_4_1(c, kRanks, s))
          differs_from_fixed = true;
    }
    discriminating += differs_from_fixed;

    ProbeRun run_result = run(file, std::string(name(c)), kSizes);
    seconds += run_result.process.seconds;
    ASSERT_FALSE(run_result.process.timed_out);
    bool all = true;
    for (auto s : kSizes) {
      Prediction p = predict(v, c, s);
      auto rc = run_result.error_class.find({std::string(name(c)), s});
      if (p.fails) {
        EXPECT_TRUE(rc != run_result.error_class.end() && rc->second != 0)
            << "size " << s << ": the call should fail\n"
            << run_result.process.out;
        all &= rc != run_result.error_class.end() && rc->second != 0;
        break;  // the probe stops at the first failing call
      }
      ASSERT_TRUE(rc != run_result.error_class.end())
          << "size " << s << " not run\n"
          << run_result.process.out << run_result.process.err;
      EXPECT_EQ(rc->second, 0) << "size " << s;
      VerifyOptions options;
      options.min_calls = kIterations;
      RulesModel empty;
      VerificationReport report =
          verify_trace(v.loads() ? v.read.model : empty, c, kRanks, {s}, run_result.trace, options);
      EXPECT_TRUE(report.all_match()) << v.verdict() << "\n" << report.to_text();
      all &= rc->second == 0 && report.all_match();
    }
    if (!predicted_failure) {
      EXPECT_EQ(run_result.process.exit_code, 0) << run_result.process.err;
    } else {
      EXPECT_NE(run_result.process.exit_code, 0);
    }
    agreed += all;
  }
  std::printf(
      "corpus: %zu files (%d ok, %d ignored, %d abort), validator agreed with Open MPI "
      "4.1.4 on %d; %d files discriminate applied from ignored; mpirun time %.1f s\n",
      files.size(), categories["ok"], categories["ignored"], categories["abort"], agreed,
      discriminating, seconds);
  EXPECT_EQ(agreed, static_cast<int>(files.size()));
}

TEST_F(MpirunTest, MissingRulesFileMeansFixedDecision) {
  ProbeRun r = run(dir_ / "does-not-exist.rules", "bcast", kSizes);
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  VerifyOptions options;
  options.min_calls = kIterations;
  auto report = verify_trace(RulesModel{}, Collective::bcast, kRanks, kSizes, r.trace, options);
  EXPECT_TRUE(report.all_match()) << report.to_text();
}

TEST_F(MpirunTest, FixedDecisionTablesMatchOpenMpiAtFourRanks) {
  // No rules file: every collective runs Open MPI's fixed decision; our transcription of the
  // tables must predict each one (this also exercises the tracer on every collective).
  const std::vector<std::int64_t> sizes{4, 1024, 65536};
  ProbeRun r =
      run(std::nullopt, "bcast,allreduce,reduce,gather,scatter,allgather,alltoall,barrier", sizes);
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  VerifyOptions options;
  options.min_calls = kIterations;
  for (Collective c :
       {Collective::bcast, Collective::allreduce, Collective::reduce, Collective::gather,
        Collective::scatter, Collective::allgather, Collective::alltoall, Collective::barrier}) {
    auto report =
        verify_trace(RulesModel{}, c, kRanks,
                     has_message_size(c) ? sizes : std::vector<std::int64_t>{0}, r.trace, options);
    EXPECT_TRUE(report.all_match()) << report.to_text();
  }
}

TEST_F(MpirunTest, GatherRuleWrittenFromOsuSizesAppliesAtThoseSizes) {
  // Tuned with OSU sizes (per rank): linear_sync at 128 and 256 B, basic_linear at 64 and 512 B.
  // The file's keys are bytes x 4; a file keyed on OSU sizes would pick linear_sync at 32-64 B.
  std::vector<TunedPoint> points{{Collective::gather, kRanks, 64, {1, 0, 0}},
                                 {Collective::gather, kRanks, 128, {3, 1024, 0}},
                                 {Collective::gather, kRanks, 256, {3, 1024, 0}},
                                 {Collective::gather, kRanks, 512, {1, 0, 0}}};
  RulesModel model = build_rules_model(points);
  fs::path file = dir_ / "gather.rules";
  std::ofstream(file) << write_rules(model, RulesFormat::classic_v1);
  const std::vector<std::int64_t> sizes{16, 32, 64, 128, 256, 512, 1024};
  ProbeRun r = run(file, "gather", sizes);
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  VerifyOptions options;
  options.min_calls = kIterations;
  auto report = verify_trace(model, Collective::gather, kRanks, sizes, r.trace, options);
  EXPECT_TRUE(report.all_match()) << report.to_text();
  // The sizes that got the tuned choices are the OSU sizes, not 4x smaller ones.
  auto alg_at = [&](std::int64_t s) {
    for (const auto& row : report.rows)
      if (row.osu_size == s && !row.observed.empty()) return row.observed[0].algorithm;
    return -1;
  };
  EXPECT_EQ(alg_at(64), 1);
  EXPECT_EQ(alg_at(128), 3);
  EXPECT_EQ(alg_at(256), 3);
  EXPECT_EQ(alg_at(512), 1);
  EXPECT_NE(alg_at(32), 3);
  for (const auto& row : report.rows) {
    if (row.osu_size == 128 && !row.observed.empty()) {
      EXPECT_EQ(row.observed[0].segsize, 1024);
    }
  }
}

TEST_F(MpirunTest, BuiltRulesAreVerifiedEndToEnd) {
  // The path the daemon takes: tuning results -> rules file -> run with it -> verify.
  std::vector<TunedPoint> points;
  for (std::int64_t s : {4, 64, 8192, 1048576}) {
    points.push_back({Collective::bcast, kRanks, s,
                      s < 8192 ? TuningConfig{3, 1024, 0} : TuningConfig{2, 65536, 3}});
    points.push_back({Collective::allreduce, kRanks, s,
                      s < 8192 ? TuningConfig{1, 0, 0} : TuningConfig{5, 4096, 0}});
    points.push_back({Collective::reduce, kRanks, s,
                      s < 8192 ? TuningConfig{6, 0, 0} : TuningConfig{2, 8192, 2}});
  }
  RulesModel model = build_rules_model(points);
  fs::path file = dir_ / "built.rules";
  std::ofstream(file) << write_rules(model, RulesFormat::classic_v1);
  ASSERT_TRUE(validate_rules_file(file).loads());
  ProbeRun r = run(file, "bcast,allreduce,reduce", kSizes);
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  VerifyOptions options;
  options.min_calls = kIterations;
  for (Collective c : {Collective::bcast, Collective::allreduce, Collective::reduce}) {
    auto report = verify_trace(model, c, kRanks, kSizes, r.trace, options);
    EXPECT_TRUE(report.all_match()) << report.to_text();
  }
  // Outside the tuned range (2 x 1 MiB and up) the fixed decision is back.
  ProbeRun big = run(file, "bcast", {4 << 20});
  auto report = verify_trace(model, Collective::bcast, kRanks, {4 << 20}, big.trace, options);
  EXPECT_TRUE(report.all_match()) << report.to_text();
  EXPECT_TRUE(report.rows[0].expected.from_fixed_decision);
}

TEST_F(MpirunTest, TracerLibraryIsFoundAndWritesToStderrWithoutDirectory) {
  auto path = tracer_library_path();
  ASSERT_TRUE(path);
  EXPECT_TRUE(fs::exists(*path));
  std::vector<std::string> argv{
      MPIEXEC_PATH, "-np", "2", "--oversubscribe", "-x", "LD_PRELOAD=" + path->string(), PROBE_PATH,
      "bcast",      "2",   "16"};
  std::map<std::string, std::string> env;
  if (geteuid() == 0)
    env = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};
  ProcessResult p = run_process(argv, env, 60);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  TraceData t = parse_trace_text(p.err.substr(p.err.find("# colltune-trace")), "stderr");
  ASSERT_FALSE(t.records.empty()) << p.err;
  EXPECT_EQ(t.records[0].comm_size, 2);
  EXPECT_EQ(t.records[0].bytes, 16);
  EXPECT_EQ(t.records[0].calls, 2);
}

TEST_F(MpirunTest, BundledOsuBenchmarkIsVerifiedToo) {
  fs::path osu = fs::path(COLLTUNE_OSU_BENCH_DIR) / "osu_bcast";
  if (!fs::exists(osu)) GTEST_SKIP() << osu << " not built";
  fs::path file = fs::path(CORPUS_DIR) / "ok_reference_example.rules";
  ValidationReport v = validate_rules_file(file);
  ProbeRun r = run(file, "", {}, osu.string(), {"-m", "4:1048576", "-i", "20", "-x", "5"});
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  VerifyOptions options;
  options.min_calls = 20;
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = 4; s <= 1048576; s *= 2) sizes.push_back(s);
  auto report = verify_trace(v.read.model, Collective::bcast, kRanks, sizes, r.trace, options);
  EXPECT_TRUE(report.all_match()) << report.to_text();
}

}  // namespace
}  // namespace colltune
