// `colltune rules ...` as an admin uses it, on the real Open MPI for verify.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runner/process.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

class RulesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("colltune-rules-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  ProcessResult colltune(std::vector<std::string> args, double timeout = 120) {
    args.insert(args.begin(), COLLTUNE_BINARY);
    return run_process(args, {.timeout_s = timeout});
  }

  fs::path dir_;
};

// bcast at 4 ranks: binomial with 1 KiB segments from 8 bytes on (the fixed decision runs
// bintree/binomial unsegmented there, so a wrong file is visible in the trace).
constexpr const char* kGood = "1\n7\n1\n4\n2\n0 0 0 0\n8 6 0 1024\n";
constexpr const char* kFirstRuleAtEight = "1\n7\n1\n4\n1\n8 6 0 1024\n";

TEST_F(RulesCliTest, ValidateExitCodesTellLoadsFromIgnored) {
  auto good = colltune({"rules", "validate", write("good.conf", kGood), "--ompi", "4.1.4"});
  EXPECT_EQ(good.exit_code, 0) << good.stdout_text;
  EXPECT_NE(good.stdout_text.find("would load"), std::string::npos);
  auto bad = colltune({"rules", "validate", write("bad.conf", kFirstRuleAtEight), "--ompi", "4.1.4"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.stdout_text.find("silently ignore"), std::string::npos) << bad.stdout_text;
  EXPECT_NE(bad.stdout_text.find("line 6"), std::string::npos) << bad.stdout_text;
  // A header line makes 4.1.4 ignore the file; 4.1.8 reads it.
  const auto v2 = write("v2.conf", std::string("rule-file-version-2\n") + kGood);
  EXPECT_EQ(colltune({"rules", "validate", v2, "--ompi", "4.1.4"}).exit_code, 2);
  EXPECT_EQ(colltune({"rules", "validate", v2, "--ompi", "4.1.8"}).exit_code, 0);
}

TEST_F(RulesCliTest, DeployKeepsHistoryAndRollbackRestores) {
  const auto target = (dir_ / "etc" / "rules.conf").string();
  fs::create_directories(dir_ / "etc");
  const auto first = write("first.conf", kGood);
  const auto second = write("second.conf", "1\n7\n1\n4\n1\n0 1 0 0\n");
  auto d1 = colltune({"rules", "deploy", first, "--to", target, "--ompi", "4.1.4"});
  ASSERT_EQ(d1.exit_code, 0) << d1.stderr_text;
  EXPECT_NE(d1.stdout_text.find("coll_tuned_dynamic_rules_filename = " + target), std::string::npos);
  ASSERT_EQ(colltune({"rules", "deploy", second, "--to", target, "--ompi", "4.1.4"}).exit_code, 0);
  auto read = [&] {
    std::ifstream in(target);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(), "1\n7\n1\n4\n1\n0 1 0 0\n");
  ASSERT_EQ(colltune({"rules", "rollback", "--to", target}).exit_code, 0);
  EXPECT_EQ(read(), kGood);
  // An ignored file is refused.
  auto refused = colltune({"rules", "deploy", write("bad.conf", kFirstRuleAtEight), "--to", target,
                           "--ompi", "4.1.4"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(read(), kGood);
}

TEST_F(RulesCliTest, VerifyProvesAGoodFileAndCatchesAnIgnoredOne) {
  auto good = colltune({"rules", "verify", write("good.conf", kGood), "--np", "4", "--sizes",
                        "4:64", "--collectives", "bcast", "--ompi", "4.1.4"},
                       180);
  EXPECT_EQ(good.exit_code, 0) << good.stdout_text << good.stderr_text;
  EXPECT_NE(good.stdout_text.find("bcast_intra_binomial seg=1024"), std::string::npos)
      << good.stdout_text;
  auto bad = colltune({"rules", "verify", write("bad.conf", kFirstRuleAtEight), "--np", "4",
                       "--sizes", "8:64", "--collectives", "bcast", "--ompi", "4.1.4"},
                      180);
  EXPECT_EQ(bad.exit_code, 3) << bad.stdout_text << bad.stderr_text;
  EXPECT_NE(bad.stdout_text.find("NOT applied"), std::string::npos) << bad.stdout_text;
  EXPECT_EQ(bad.stdout_text.find("seg=1024 x"), std::string::npos) << bad.stdout_text;
}

}  // namespace
}  // namespace colltune
