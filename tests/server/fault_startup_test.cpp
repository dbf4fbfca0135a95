// The fault suite, part 5: `colltune serve` started where its database or rules directory
// cannot be used: the database's directory removed or read-only, an existing store on a
// read-only file system, a rules_dir that cannot be created. Expected: the daemon does not
// start half-working; it exits at once with an error that names the path and the reason.
// The read-only cases need root (mount) and are skipped with the reason otherwise.
#include "runner/process.h"
#include "tests/server/fault_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct StartAttempt {
  bool started = false;
  std::string log;
};

StartAttempt try_start(const TempDir& dir, const json& config) {
  write_json_file(dir / "start.json", config);
  DaemonProcess daemon(COLLTUNE_BINARY, dir / "start.json", dir / "start.log");
  StartAttempt a;
  try {
    daemon.start(std::chrono::seconds(20));
    a.started = true;
    a.log = daemon.log();
    daemon.stop(SIGTERM);
  } catch (const std::exception& e) {
    a.log = e.what();
  }
  return a;
}

// The last line of the log (the error the admin sees).
std::string last_line(const std::string& log) {
  std::string text = log;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

void expect_refused(const StartAttempt& a, const std::string& path, const std::string& reason,
                    const std::string& injected) {
  EXPECT_FALSE(a.started) << "the daemon started anyway:\n" << a.log;
  EXPECT_NE(a.log.find(path), std::string::npos) << "the error does not name " << path << ":\n"
                                                 << a.log;
  EXPECT_NE(a.log.find(reason), std::string::npos) << "the error does not say '" << reason << "':\n"
                                                   << a.log;
  report_fault(injected, "1 start",
               "daemon exits at once with an error naming the path and the reason",
               a.started ? "STARTED" : "exited: \"" + last_line(a.log) + "\"");
}

json config_with(const TempDir& dir, const std::string& database,
                 const std::string& rules_dir = "") {
  json c = sim_daemon_config(dir, "unused", nullptr);
  c["database"] = database;
  if (!rules_dir.empty()) c["rules_dir"] = rules_dir;
  return c;
}

TEST(FaultStartup, DatabaseDirectoryRemoved) {
  TempDir dir;
  const std::string db_dir = dir / "state";
  fs::create_directories(db_dir);
  fs::remove_all(db_dir);
  const std::string db = db_dir + "/colltune.db";
  expect_refused(try_start(dir, config_with(dir, db)), db,
                 "directory " + db_dir + " does not exist",
                 "database directory removed before start");
}

TEST(FaultStartup, DatabaseDirectoryReadOnly) {
  TempDir dir;
  const std::string db_dir = dir / "state";
  if (auto why = mount_tmpfs(db_dir, "1m", /*read_only=*/true); !why.empty()) GTEST_SKIP() << why;
  MountGuard guard(db_dir);
  const std::string db = db_dir + "/colltune.db";
  expect_refused(try_start(dir, config_with(dir, db)), db, "is not writable: Read-only file system",
                 "database directory read-only (empty ro tmpfs) at start");
}

TEST(FaultStartup, ExistingStoreOnAReadOnlyFileSystem) {
  TempDir dir;
  const std::string db_dir = dir / "state";
  fs::create_directories(db_dir);
  const std::string db = db_dir + "/colltune.db";
  {
    // A store with a finished campaign; the daemon stopped cleanly (WAL checkpointed).
    json config = config_with(dir, db);
    const auto id = run_campaign_to_end(dir, "first", config, fault_campaign_spec(3, "random", 4));
    ASSERT_GT(id, 0);
  }
  if (auto why = make_read_only(db_dir); !why.empty()) GTEST_SKIP() << why;
  MountGuard guard(db_dir);
  expect_refused(try_start(dir, config_with(dir, db)), db, "is not writable: Read-only file system",
                 "existing database, its directory made read-only before start");
}

TEST(FaultStartup, RulesDirCannotBeCreated) {
  TempDir dir;
  const std::string parent = dir / "etc";
  if (auto why = mount_tmpfs(parent, "1m", /*read_only=*/true); !why.empty()) GTEST_SKIP() << why;
  MountGuard guard(parent);
  const std::string rules_dir = parent + "/colltune-rules";
  expect_refused(try_start(dir, config_with(dir, dir / "colltune.db", rules_dir)), rules_dir,
                 "Read-only file system",
                 "rules_dir cannot be created (parent read-only) at start");
}

// Issue 20.2: one owner per database. A second daemon on the database of a running one
// (which resumed the same campaign before, and broke it) is refused at once, naming the
// holder's pid; a `tune --resume` on it too. After the first stops, the second starts.
TEST(FaultStartup, SecondDaemonOnTheSameDatabaseIsRefused) {
  TempDir dir;
  const std::string db = dir / "shared.db";
  write_json_file(dir / "first.json", config_with(dir, db));
  DaemonProcess first(COLLTUNE_BINARY, dir / "first.json", dir / "first.log");
  first.start();
  const auto attempt = try_start(dir, config_with(dir, db));
  expect_refused(attempt, db, "is in use by process " + std::to_string(first.pid()),
                 "a second `colltune serve` on the database of a running daemon");
  EXPECT_NE(attempt.log.find("colltune serve"), std::string::npos) << attempt.log;
  const auto tune =
      run_process({COLLTUNE_BINARY, "tune", "--backend", "sim", "--db", db, "--resume", "1"},
                  {.timeout_s = 60});
  EXPECT_NE(tune.exit_code, 0);
  EXPECT_NE(tune.stderr_text.find("in use by process " + std::to_string(first.pid())),
            std::string::npos)
      << tune.stderr_text;
  first.stop(SIGTERM);
  const auto again = try_start(dir, config_with(dir, db));
  EXPECT_TRUE(again.started) << again.log;
}

// Issue 20.8: a 0-byte database file became an empty store; a store with damaged pages
// started and then answered 500 on reads. Both are refused at start with the reason.
TEST(FaultStartup, EmptyDatabaseFileIsRefused) {
  TempDir dir;
  const std::string db = dir / "empty.db";
  std::ofstream(db).flush();
  expect_refused(try_start(dir, config_with(dir, db)), db, "is an empty file (0 bytes)",
                 "database path is an existing 0-byte file");
  EXPECT_EQ(fs::file_size(db), 0u);
}

TEST(FaultStartup, DamagedDatabaseIsRefused) {
  TempDir dir;
  const std::string db = dir / "damaged.db";
  {
    json config = config_with(dir, db);
    const auto id = run_campaign_to_end(dir, "first", config, fault_campaign_spec(3, "random", 4));
    ASSERT_GT(id, 0);
  }
  ASSERT_FALSE(fs::exists(db + "-wal") && fs::file_size(db + "-wal") > 0)
      << "the daemon left its log unmerged";
  // Garbage over the third page (a table b-tree page: page 1 is the schema).
  const auto size = fs::file_size(db);
  ASSERT_GT(size, 4u * 4096);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2 * 4096);
    const std::string garbage(4096, '\xA5');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  expect_refused(try_start(dir, config_with(dir, db)), db, "quick_check",
                 "database with a damaged page (4 KiB of garbage over page 3)");
}

}  // namespace
}  // namespace colltune::testing
