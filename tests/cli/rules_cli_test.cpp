// `colltune rules ...` as an admin uses it, on the real Open MPI for verify.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "campaign/database_owner.h"
#include "campaign/store.h"
#include "core/file_text.h"
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
  auto bad =
      colltune({"rules", "validate", write("bad.conf", kFirstRuleAtEight), "--ompi", "4.1.4"});
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
  auto d1 = colltune({"rules", "deploy", first, "--to", target, "--ompi", "4.1.4", "--force"});
  ASSERT_EQ(d1.exit_code, 0) << d1.stderr_text;
  EXPECT_NE(d1.stdout_text.find("coll_tuned_dynamic_rules_filename = " + target),
            std::string::npos);
  ASSERT_EQ(
      colltune({"rules", "deploy", second, "--to", target, "--ompi", "4.1.4", "--force"}).exit_code,
      0);
  auto read = [&] { return read_file_text(target).value_or(""); };
  EXPECT_EQ(read(), "1\n7\n1\n4\n1\n0 1 0 0\n");
  ASSERT_EQ(colltune({"rules", "rollback", "--to", target}).exit_code, 0);
  EXPECT_EQ(read(), kGood);
  // An ignored file is refused.
  auto refused = colltune(
      {"rules", "deploy", write("bad.conf", kFirstRuleAtEight), "--to", target, "--ompi", "4.1.4"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(read(), kGood);
  // Unverified (a plain file without --force) is refused with the reason, file untouched.
  refused = colltune({"rules", "deploy", second, "--to", target, "--ompi", "4.1.4"});
  EXPECT_EQ(refused.exit_code, 4);
  EXPECT_NE(refused.stderr_text.find("no verification record"), std::string::npos)
      << refused.stderr_text;
  EXPECT_EQ(read(), kGood);
}

// Issue 20.3: the CLI refuses what the daemon refuses (one shared check): a device, a link as
// target, a linked history folder, a FIFO as target or source (without hanging).
TEST_F(RulesCliTest, DeployAndRollbackRefuseLinksFifosAndDevices) {
  const auto good = write("good.conf", kGood);
  auto deploy_to = [&](const std::string& to, const std::string& file) {
    return colltune({"rules", "deploy", file, "--to", to, "--ompi", "4.1.4", "--force"}, 20);
  };
  if (::geteuid() == 0) {
    const auto dev = (dir_ / "null").string();
    ASSERT_EQ(::mknod(dev.c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0);
    auto r = deploy_to(dev, good);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.stderr_text.find("it is a device"), std::string::npos) << r.stderr_text;
    struct stat st {};
    ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
  const auto real = write("real.conf", "precious\n");
  const auto link = (dir_ / "link.conf").string();
  fs::create_symlink(real, link);
  auto r = deploy_to(link, good);
  EXPECT_NE(r.stderr_text.find("symbolic link"), std::string::npos) << r.stderr_text;
  EXPECT_TRUE(fs::is_symlink(link));
  const auto fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  r = deploy_to(fifo, good);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.stderr_text.find("FIFO"), std::string::npos) << r.stderr_text;
  r = deploy_to((dir_ / "t.conf").string(), fifo);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.stderr_text.find("FIFO"), std::string::npos) << r.stderr_text;
  // A linked history folder is not followed, for deploy or rollback.
  fs::create_directories(dir_ / "elsewhere");
  const auto target = (dir_ / "h.conf").string();
  fs::create_symlink(dir_ / "elsewhere", target + ".history");
  r = deploy_to(target, good);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(fs::is_empty(dir_ / "elsewhere"));
  r = colltune({"rules", "rollback", "--to", target}, 20);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("symbolic link"), std::string::npos) << r.stderr_text;
}

// Issue 17.5: a rules version deploys from its store only when verified on the real Open MPI;
// the answer names the MCA parameter file this Open MPI reads; the store records where it is.
TEST_F(RulesCliTest, DeployGuardUsesTheStoresVerificationRecord) {
  const auto db = (dir_ / "c.db").string();
  std::int64_t verified_id = 0, sim_id = 0;
  {
    Store store(db);
    RulesVersionRecord r;
    r.format = "classic";
    r.content = kGood;
    r.validation = {{"deployable", true}};
    r.verification = {{"verified", true}, {"skipped", false}};
    verified_id = store.add_rules_version(r);
    r.content = std::string(kGood) + "\n";
    r.verification = {{"verified", false},
                      {"skipped", true},
                      {"reason",
                       "verification skipped: the sim backend does not run the real "
                       "Open MPI"}};
    sim_id = store.add_rules_version(r);
  }
  const auto target = (dir_ / "live.conf").string();
  auto refused = colltune({"rules", "deploy", "--db", db, "--rules-id", std::to_string(sim_id),
                           "--to", target, "--ompi", "4.1.4"});
  EXPECT_EQ(refused.exit_code, 4);
  EXPECT_NE(refused.stderr_text.find("sim backend"), std::string::npos) << refused.stderr_text;
  EXPECT_FALSE(fs::exists(target));
  auto ok = colltune({"rules", "deploy", "--db", db, "--rules-id", std::to_string(verified_id),
                      "--to", target, "--ompi", "4.1.4"});
  ASSERT_EQ(ok.exit_code, 0) << ok.stderr_text;
  const auto sysconfdir = run_process({"ompi_info", "--path", "sysconfdir", "--parsable"});
  const auto at = sysconfdir.stdout_text.find("path:sysconfdir:");
  ASSERT_NE(at, std::string::npos);
  const auto dir =
      sysconfdir.stdout_text.substr(at + 16, sysconfdir.stdout_text.find('\n', at) - at - 16);
  EXPECT_NE(ok.stdout_text.find("add to " + dir + "/openmpi-mca-params.conf"), std::string::npos)
      << ok.stdout_text;
  EXPECT_NE(ok.stdout_text.find("coll_tuned_dynamic_rules_filename = " + target),
            std::string::npos);
  {
    Store store(db);
    EXPECT_EQ(store.rules_version(verified_id)->deployed_to, target);
  }
  // Forced, the unverified one goes live and the verified one loses its mark.
  auto forced = colltune({"rules", "deploy", "--db", db, "--rules-id", std::to_string(sim_id),
                          "--to", target, "--ompi", "4.1.4", "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.stderr_text;
  EXPECT_NE(forced.stdout_text.find("FORCED"), std::string::npos);
  {
    Store store(db);
    EXPECT_EQ(store.rules_version(verified_id)->deployed_to, "");
    EXPECT_EQ(store.rules_version(sim_id)->deployed_to, target);
  }
  // Issue 20.2: a database another process owns is refused, naming the holder.
  {
    DatabaseOwner daemon(db, "colltune serve");
    auto busy = colltune({"rules", "deploy", "--db", db, "--rules-id", std::to_string(verified_id),
                          "--to", target, "--ompi", "4.1.4"});
    EXPECT_NE(busy.exit_code, 0);
    EXPECT_NE(busy.stderr_text.find("in use by process " + std::to_string(::getpid())),
              std::string::npos)
        << busy.stderr_text;
  }
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
