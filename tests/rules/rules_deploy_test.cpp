#include "rules/rules_deploy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace colltune {
namespace {

namespace fs = std::filesystem;

class RulesDeployTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "colltune-deploy-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    target_ = dir_ / "tuned.rules";
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  DeployProvenance provenance(const std::string& campaign) {
    DeployProvenance p;
    p.campaign = campaign;
    p.ompi_version = "4.1.4";
    p.fingerprint = "abc123";
    p.source = "test";
    return p;
  }

  fs::path dir_, target_;
};

TEST_F(RulesDeployTest, DeployKeepsNumberedHistoryWithProvenance) {
  DeployResult first = deploy_rules("1 7 1 2 1 0 1 0 0\n", target_, provenance("c1"));
  EXPECT_EQ(first.version, 1);
  EXPECT_EQ(first.previous, 0);
  EXPECT_EQ(slurp(target_), "1 7 1 2 1 0 1 0 0\n");
  struct stat st;
  ASSERT_EQ(::stat(target_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // readable by every rank's user

  DeployResult second = deploy_rules("1 7 1 2 1 0 6 0 0\n", target_, provenance("c2"));
  EXPECT_EQ(second.version, 2);
  EXPECT_EQ(second.previous, 1);

  auto history = deploy_history(target_);
  ASSERT_EQ(history.size(), 3u);
  EXPECT_TRUE(history[0].absent);  // nothing was there before the first deploy
  EXPECT_EQ(history[1].provenance.campaign, "c1");
  EXPECT_EQ(history[2].provenance.fingerprint, "abc123");
  EXPECT_GT(history[2].provenance.time, 1.6e9);
  EXPECT_EQ(slurp(history[1].rules_path), "1 7 1 2 1 0 1 0 0\n");
  EXPECT_TRUE(fs::exists(history_dir(target_) / "0002.conf"));
  EXPECT_TRUE(fs::exists(history_dir(target_) / "0002.json"));
  EXPECT_EQ(active_version(target_), 2);
  // No temporary files left behind.
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST_F(RulesDeployTest, RollbackWalksBackOneDeployPerCall) {
  deploy_rules("A\n", target_, provenance("a"));
  deploy_rules("B\n", target_, provenance("b"));
  deploy_rules("C\n", target_, provenance("c"));
  EXPECT_EQ(rollback_rules(target_).version, 2);
  EXPECT_EQ(slurp(target_), "B\n");
  EXPECT_EQ(rollback_rules(target_).version, 1);
  EXPECT_EQ(slurp(target_), "A\n");
  // Back to the state before colltune: the file did not exist.
  EXPECT_EQ(rollback_rules(target_).version, 0);
  EXPECT_FALSE(fs::exists(target_));
  EXPECT_THROW(rollback_rules(target_), DeployError);
  // A deploy after rollbacks starts from the restored state.
  DeployResult d = deploy_rules("D\n", target_, provenance("d"));
  EXPECT_EQ(d.version, 4);
  EXPECT_EQ(d.previous, 0);
  EXPECT_EQ(rollback_rules(target_).version, 0);
}

TEST_F(RulesDeployTest, PreexistingFileIsKeptForRollback) {
  {
    std::ofstream out(target_);
    out << "site rules\n";
  }
  deploy_rules("new\n", target_, provenance("x"));
  EXPECT_EQ(slurp(target_), "new\n");
  rollback_rules(target_);
  EXPECT_EQ(slurp(target_), "site rules\n");
}

TEST_F(RulesDeployTest, DeployFromAFile) {
  fs::path source = dir_ / "written.rules";
  {
    std::ofstream out(source);
    out << "1 7 1 2 1 0 3 0 0\n";
  }
  EXPECT_EQ(deploy_rules_file(source, target_, provenance("f")).version, 1);
  EXPECT_EQ(slurp(target_), "1 7 1 2 1 0 3 0 0\n");
  EXPECT_THROW(deploy_rules_file(dir_ / "missing", target_, provenance("f")), DeployError);
}

TEST_F(RulesDeployTest, Errors) {
  EXPECT_THROW(rollback_rules(target_), DeployError);  // no history
  EXPECT_THROW(deploy_rules("x", dir_ / "missing-dir" / "r.rules", provenance("x")), DeployError);
  EXPECT_THROW(deploy_rules("x", dir_, provenance("x")), DeployError);
}

TEST(RulesMcaSnippet, NamesBothParametersWithAnAbsolutePath) {
  std::string s = mca_params_snippet("/etc/openmpi/colltune.rules");
  EXPECT_NE(s.find("coll_tuned_use_dynamic_rules = 1\n"), std::string::npos);
  EXPECT_NE(s.find("coll_tuned_dynamic_rules_filename = /etc/openmpi/colltune.rules\n"),
            std::string::npos);
  std::string relative = mca_params_snippet("x/../r.rules");
  EXPECT_NE(relative.find("= " + (fs::current_path() / "r.rules").string()), std::string::npos)
      << relative;
  EXPECT_THROW(mca_params_snippet("/tmp/a#b"), std::invalid_argument);
  auto warnings = mca_params_warnings();
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("--mca"), std::string::npos);
  EXPECT_NE(warnings[0].find("override"), std::string::npos);
}

}  // namespace
}  // namespace colltune
