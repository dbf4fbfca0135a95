#include "rules/rules_deploy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/file_text.h"

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
  EXPECT_EQ(read_file_text(target_).value_or(""), "1 7 1 2 1 0 1 0 0\n");
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
  EXPECT_EQ(read_file_text(history[1].rules_path).value_or(""), "1 7 1 2 1 0 1 0 0\n");
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
  EXPECT_EQ(read_file_text(target_).value_or(""), "B\n");
  EXPECT_EQ(rollback_rules(target_).version, 1);
  EXPECT_EQ(read_file_text(target_).value_or(""), "A\n");
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
  EXPECT_EQ(read_file_text(target_).value_or(""), "new\n");
  rollback_rules(target_);
  EXPECT_EQ(read_file_text(target_).value_or(""), "site rules\n");
}

TEST_F(RulesDeployTest, DeployFromAFile) {
  fs::path source = dir_ / "written.rules";
  {
    std::ofstream out(source);
    out << "1 7 1 2 1 0 3 0 0\n";
  }
  EXPECT_EQ(deploy_rules_file(source, target_, provenance("f")).version, 1);
  EXPECT_EQ(read_file_text(target_).value_or(""), "1 7 1 2 1 0 3 0 0\n");
  EXPECT_THROW(deploy_rules_file(dir_ / "missing", target_, provenance("f")), DeployError);
}

TEST_F(RulesDeployTest, Errors) {
  EXPECT_THROW(rollback_rules(target_), DeployError);  // no history
  EXPECT_THROW(deploy_rules("x", dir_ / "missing-dir" / "r.rules", provenance("x")), DeployError);
  EXPECT_THROW(deploy_rules("x", dir_, provenance("x")), DeployError);
}

// Issue 20.3: every path the deploy touches is checked the same way, for the CLI and the
// daemon (check_deploy_target); nothing is written through a link or into a special file.
TEST_F(RulesDeployTest, RefusesADeviceAndLeavesItAlone) {
  // A character device stands for /dev/null: `--to /dev/null` replaced the node before.
  fs::path dev = dir_ / "null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod needs root";
  EXPECT_THROW(deploy_rules("x\n", dev, provenance("d")), DeployRefused);
  struct stat st {};
  ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(RulesDeployTest, RefusesASymlinkTarget) {
  fs::path real = dir_ / "elsewhere.conf";
  std::ofstream(real) << "precious\n";
  fs::create_symlink(real, target_);
  EXPECT_THROW(deploy_rules("x\n", target_, provenance("s")), DeployRefused);
  EXPECT_TRUE(fs::is_symlink(target_));
  EXPECT_EQ(read_file_text(real).value_or(""), "precious\n");
  EXPECT_FALSE(fs::exists(history_dir(target_)));
}

TEST_F(RulesDeployTest, RefusesASymlinkedHistoryFolderAndLinksInside) {
  fs::path other = dir_ / "other";
  fs::create_directories(other);
  fs::create_symlink(other, history_dir(target_));
  EXPECT_THROW(deploy_rules("x\n", target_, provenance("h")), DeployRefused);
  EXPECT_TRUE(fs::is_empty(other));
  EXPECT_FALSE(fs::exists(target_));
  fs::remove(history_dir(target_));

  // A history entry replaced by a link to a private file: rollback must not copy it.
  deploy_rules("A\n", target_, provenance("a"));
  deploy_rules("B\n", target_, provenance("b"));
  fs::path secret = dir_ / "secret";
  std::ofstream(secret) << "private\n";
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  fs::path entry = history_dir(target_) / "0001.conf";
  fs::remove(entry);
  fs::create_symlink(secret, entry);
  EXPECT_THROW(rollback_rules(target_), DeployRefused);
  EXPECT_EQ(read_file_text(target_).value_or(""), "B\n");
  EXPECT_THROW(deploy_rules("C\n", target_, provenance("c")), DeployRefused);
  EXPECT_EQ(read_file_text(target_).value_or(""), "B\n");
}

TEST_F(RulesDeployTest, AFifoNeverHangsTheCommand) {
  ASSERT_EQ(::mkfifo(target_.c_str(), 0644), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(deploy_rules("x\n", target_, provenance("f")), DeployRefused);
  fs::path source = dir_ / "source.fifo";
  ASSERT_EQ(::mkfifo(source.c_str(), 0644), 0);
  EXPECT_THROW(deploy_rules_file(source, dir_ / "t2.rules", provenance("f")), DeployRefused);
  // A FIFO planted in the history (e.g. as "active") is refused too, not opened for reading.
  fs::path t3 = dir_ / "t3.rules";
  deploy_rules("A\n", t3, provenance("a"));
  fs::remove(history_dir(t3) / "active");
  ASSERT_EQ(::mkfifo((history_dir(t3) / "active").c_str(), 0644), 0);
  EXPECT_THROW(rollback_rules(t3), DeployRefused);
  EXPECT_THROW(active_version(t3), DeployRefused);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  struct stat st {};
  ASSERT_EQ(::lstat(target_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(RulesDeployTest, KeepsTheLiveFilesPermissions) {
  std::ofstream(target_) << "site\n";
  ASSERT_EQ(::chmod(target_.c_str(), 0600), 0);
  deploy_rules("A\n", target_, provenance("a"));
  struct stat st {};
  ASSERT_EQ(::stat(target_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The backup of the private file is private too.
  ASSERT_EQ(::stat((history_dir(target_) / "0000.conf").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::chmod(target_.c_str(), 0640), 0);
  rollback_rules(target_);
  ASSERT_EQ(::stat(target_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(read_file_text(target_).value_or(""), "site\n");
}

// Issue 20.6: the daemon takes a deploy back when its database record fails.
TEST_F(RulesDeployTest, UndoDeployRestoresThePreviousVersionAndForgetsIt) {
  deploy_rules("A\n", target_, provenance("a"));
  DeployResult b = deploy_rules("B\n", target_, provenance("b"));
  undo_deploy(b);
  EXPECT_EQ(read_file_text(target_).value_or(""), "A\n");
  EXPECT_EQ(active_version(target_), 1);
  EXPECT_FALSE(fs::exists(history_dir(target_) / "0002.conf"));
  EXPECT_EQ(deploy_history(target_).size(), 2u);
  // The first deploy undone: the file is absent again, as it was.
  fs::path t2 = dir_ / "t2.rules";
  undo_deploy(deploy_rules("X\n", t2, provenance("x")));
  EXPECT_FALSE(fs::exists(t2));
  // Not the live version any more: refused.
  DeployResult c = deploy_rules("C\n", target_, provenance("c"));
  deploy_rules("D\n", target_, provenance("d"));
  EXPECT_THROW(undo_deploy(c), DeployError);
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
