// The fault suite, part 4: the rules directory (where deploys install the file Open MPI reads)
// runs out of space or turns read-only. Expected: the deploy fails with a clear reason, and the
// last good rules file stays deployed, byte for byte, with its deploy history pointing at it;
// once the fault is gone the deploy works and rollback returns to the previous file.
// Needs root (mount); skipped with the reason otherwise.
#include <fcntl.h>

#include "core/file_text.h"
#include "rules/rules_deploy.h"
#include "tests/server/fault_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct TimedDeploy {
  int status = 0;  // 0: no answer
  std::string message;
};

// A daemon with two finished campaigns (two rules versions) and `rules_dir`.
class RulesDirFixture {
 public:
  explicit RulesDirFixture(const std::string& rules_dir) : rules_dir_(rules_dir) {
    write_json_file(dir_ / "d.json", sim_daemon_config(dir_, "d", nullptr, 0, rules_dir));
    daemon_ = std::make_unique<DaemonProcess>(COLLTUNE_BINARY, dir_ / "d.json", dir_ / "d.log");
    url_ = daemon_->start();
    auto client = fault_client(url_);
    for (std::uint64_t seed : {41, 42}) {
      const auto id = create_campaign(url_, fault_campaign_spec(seed, "random", 8));
      auto c = wait_for_state(client, id, {"done", "failed"}, std::chrono::seconds(120));
      EXPECT_EQ(c.value("state", ""), "done") << c.dump();
      auto res = client.Get("/api/v1/rules?campaign_id=" + std::to_string(id));
      const auto items = json::parse(res->body).at("items");
      EXPECT_EQ(items.size(), 1u);
      versions_.push_back(items.at(0).at("id").get<std::int64_t>());
      auto text = client.Get("/api/v1/rules/" + std::to_string(versions_.back()) + "?format=text");
      contents_.push_back(text->body);
    }
  }
  ~RulesDirFixture() {
    if (daemon_) daemon_->stop(SIGTERM);
  }

  TimedDeploy deploy(std::size_t which) {
    auto client = fault_client(url_);
    auto res = client.Post("/api/v1/rules/" + std::to_string(versions_.at(which)) + "/deploy",
                           R"({"force":true})", "application/json");
    return answer(res);
  }
  TimedDeploy rollback() {
    auto client = fault_client(url_);
    return answer(client.Post("/api/v1/rules/rollback", "{}", "application/json"));
  }
  std::string target() const { return (fs::path(rules_dir_) / "colltune-rules.conf").string(); }
  const std::string& content(std::size_t which) const { return contents_.at(which); }
  std::string deployed_to(std::size_t which) {
    auto client = fault_client(url_);
    auto res = client.Get("/api/v1/rules/" + std::to_string(versions_.at(which)));
    return json::parse(res->body).value("deployed_to", "");
  }

 private:
  static TimedDeploy answer(const httplib::Result& res) {
    TimedDeploy d;
    if (!res) return d;
    d.status = res->status;
    try {
      const auto j = json::parse(res->body);
      if (j.contains("error")) d.message = j.at("error").value("message", "");
    } catch (const std::exception&) {
      d.message = res->body;
    }
    return d;
  }

  TempDir dir_;
  std::string rules_dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string url_;
  std::vector<std::int64_t> versions_;
  std::vector<std::string> contents_;
};

// Fills the file system of `dir` with `file` until at most `leave` bytes are free.
void fill(const std::string& dir, const std::string& file, std::size_t leave) {
  fs::remove(file);
  const auto space = fs::space(dir);
  std::size_t to_write = space.available > leave ? space.available - leave : 0;
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  std::vector<char> block(4096, 'x');
  while (to_write > 0) {
    const auto n = ::write(fd, block.data(), std::min(block.size(), to_write));
    if (n <= 0) break;  // ENOSPC: full
    to_write -= static_cast<std::size_t>(n);
  }
  ::close(fd);
}

// The live file holds `content` and the deploy history says the same.
void expect_live(RulesDirFixture& f, std::size_t which, const std::string& when) {
  EXPECT_EQ(read_file_text(f.target()).value_or(""), f.content(which))
      << when << ": the live rules file changed";
  EXPECT_EQ(f.deployed_to(which), f.target()) << when;
}

TEST(FaultRulesDir, DiskFullKeepsTheLastGoodRulesDeployed) {
  TempDir dir;
  const std::string rules_dir = dir / "rules";
  if (auto why = mount_tmpfs(rules_dir, "64k"); !why.empty()) GTEST_SKIP() << why;
  MountGuard guard(rules_dir);
  RulesDirFixture f(rules_dir);
  ASSERT_NE(f.content(0), f.content(1)) << "the two campaigns should give different rules";
  ASSERT_EQ(f.deploy(0).status, 200);
  expect_live(f, 0, "after the first deploy");
  const std::string filler = rules_dir + "/filler";

  // Completely full, then with 1..N pages free: each deploy either works or fails with a clear
  // reason, leaving the good file live.
  int attempts = 0, refused = 0;
  std::string message;
  std::size_t deployed_with = 0;
  const std::size_t max_pages = full_fault_suite() ? 8 : 3;
  for (std::size_t pages = 0; pages <= max_pages; ++pages) {
    fill(rules_dir, filler, pages * 4096);
    const auto d = f.deploy(1);
    ++attempts;
    if (d.status == 200) {
      deployed_with = pages;
      EXPECT_EQ(read_file_text(f.target()).value_or(""), f.content(1));
      break;
    }
    ++refused;
    EXPECT_EQ(d.status, 500);
    EXPECT_NE(d.message.find("No space left on device"), std::string::npos) << d.message;
    if (message.empty()) message = d.message;
    expect_live(f, 0, "after a deploy refused with " + std::to_string(pages) + " free pages");
    EXPECT_EQ(active_version(f.target()), 1) << "the history points at a version never live";
  }
  EXPECT_GE(refused, 1) << "a full disk did not stop the deploy";
  // Space back: deploy, then roll back to the first file.
  fs::remove(filler);
  if (deployed_with == 0 || read_file_text(f.target()).value_or("") != f.content(1)) {
    const auto d = f.deploy(1);
    EXPECT_EQ(d.status, 200) << d.message;
  }
  EXPECT_EQ(read_file_text(f.target()).value_or(""), f.content(1));
  const auto back = f.rollback();
  EXPECT_EQ(back.status, 200) << back.message;
  expect_live(f, 0, "after the rollback");
  report_fault(
      "disk full on rules_dir (64 KiB tmpfs filled, then 0.." + std::to_string(max_pages) +
          " free pages)",
      std::to_string(attempts) + " deploys, " + std::to_string(refused) + " refused",
      "deploy fails with a clear reason; last good rules stay live and intact; deploy "
      "and rollback work once space is back",
      std::to_string(refused) + " refused with HTTP 500 \"" + message +
          "\"; live file unchanged each time; " +
          (deployed_with ? "deployed once " + std::to_string(deployed_with) + " pages were free; "
                         : "") +
          "after freeing space: deploy 200, rollback " + std::to_string(back.status));
}

TEST(FaultRulesDir, ReadOnlyRulesDirKeepsTheLastGoodRules) {
  TempDir dir;
  const std::string rules_dir = dir / "rules";
  fs::create_directories(rules_dir);
  RulesDirFixture f(rules_dir);
  ASSERT_EQ(f.deploy(0).status, 200);
  if (auto why = make_read_only(rules_dir); !why.empty()) GTEST_SKIP() << why;
  MountGuard guard(rules_dir);
  const auto d = f.deploy(1);
  EXPECT_EQ(d.status, 500);
  EXPECT_NE(d.message.find("Read-only file system"), std::string::npos) << d.message;
  expect_live(f, 0, "after a deploy to a read-only directory");
  const auto r = f.rollback();
  EXPECT_GE(r.status, 400);
  EXPECT_NE(r.message.find("Read-only file system"), std::string::npos) << r.message;
  expect_live(f, 0, "after a rollback in a read-only directory");
  guard.release();
  const auto again = f.deploy(1);
  EXPECT_EQ(again.status, 200) << again.message;
  EXPECT_EQ(read_file_text(f.target()).value_or(""), f.content(1));
  report_fault(
      "rules_dir read-only (bind mount remounted ro) after a first deploy", "1 deploy + 1 rollback",
      "both fail with a clear reason; last good rules stay live; deploy works once writable",
      "deploy " + std::to_string(d.status) + " \"" + d.message + "\"; rollback " +
          std::to_string(r.status) + " \"" + r.message + "\"; live file unchanged; " +
          "writable again: deploy " + std::to_string(again.status));
}

}  // namespace
}  // namespace colltune::testing
