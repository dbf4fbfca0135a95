// Open MPI's scratch files of a run the local backend kills (runner/ompi_scratch.h): its session
// directory and its ranks' shared-memory segments go to directories of the run's own, and none
// of them is left once run() returns, however the run ended. Real mpirun and the bundled
// benchmark.
#include "runner/ompi_scratch.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "runner/local_backend.h"
#include "tests/support/temp_dir.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// Every file under `dir`, as paths relative to it.
std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!it->is_directory(ec)) out.push_back(fs::relative(it->path(), dir, ec).string());
  return out;
}

bool any_named(const std::vector<std::string>& files, const std::string& part) {
  for (const auto& f : files)
    if (f.find(part) != std::string::npos) return true;
  return false;
}

std::string listing(const fs::path& dir) {
  std::string out;
  for (const auto& f : files_under(dir)) out += "\n  " + f;
  return out;
}

struct Results : RunSink {
  std::vector<RunResult> results;
  void on_result(const RunResult& r) override { results.push_back(r); }
};

BenchmarkRequest long_bcast(const std::string& tag) {
  BenchmarkRequest request;
  request.tag = tag;
  request.collective = Collective::bcast;
  request.comm_size = 2;
  request.min_size = 4;
  request.max_size = 1 << 20;
  request.iterations = 100000;  // minutes: the run is cancelled long before it ends
  request.warmup = 10;
  request.configs = {TuningConfig{}};
  return request;
}

// The shared-memory base: /dev/shm, as in production, where the machine has it.
fs::path shm_base() {
  std::error_code ec;
  return fs::is_directory(OmpiScratch::default_shm_base(), ec) ? OmpiScratch::default_shm_base()
                                                               : fs::temp_directory_path();
}

// mpirun's pid, from its session directory's name (ompi.<host>.<uid>/pid.<pid>); 0 if none yet.
int mpirun_pid(const fs::path& temp) {
  for (const auto& f : files_under(temp)) {
    const auto at = f.find("/pid.");
    if (at == std::string::npos) continue;
    const auto end = f.find('/', at + 5);
    return std::stoi(f.substr(at + 5, end == std::string::npos ? end : end - at - 5));
  }
  return 0;
}

// The bundled benchmark on the local backend, with Open MPI's scratch under two folders of the
// test's own, removed with it.
struct ScratchedBackend {
  static LocalBackendOptions options_on(const TempDir& temp, const TempDir& shm) {
    LocalBackendOptions options;
    options.osu_dir = COLLTUNE_OSU_BENCH_DIR;
    options.ompi_temp_base = temp.path();
    options.ompi_shm_base = shm.path();
    return options;
  }
  TempDir temp{"colltune-scratch-temp"};
  TempDir shm{"colltune-scratch-shm", shm_base()};
  LocalBackend backend{options_on(temp, shm)};
};

enum class Ending { cancelled, mpirun_killed };

// Runs a long benchmark; once Open MPI's files are there (the session's contact file and the
// ranks' segments: so the test knows the run used its own directories), ends it mid-benchmark
// as `ending` says, and checks that none of those files is left once run() returned.
void expect_nothing_left_after(Ending ending) {
  ScratchedBackend local;
  const TempDir& temp = local.temp;
  const TempDir& shm = local.shm;

  CancelFlag cancel;
  std::atomic<bool> saw_session{false}, saw_segments{false}, done{false};
  std::thread watcher([&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (!done && std::chrono::steady_clock::now() < until) {
      saw_session = saw_session || any_named(files_under(temp.path()), "contact.txt");
      saw_segments = saw_segments || any_named(files_under(shm.path()), "vader_segment");
      if (saw_session && saw_segments) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // well inside the benchmark
    const int pid = mpirun_pid(temp.path());
    if (ending == Ending::mpirun_killed && pid > 0)
      ::kill(pid, SIGKILL);  // as the OOM killer or an admin's kill -9 would
    else
      cancel.cancel();
  });
  Results sink;
  local.backend.run(long_bcast("scratch"), sink, cancel);
  done = true;
  watcher.join();

  EXPECT_TRUE(saw_session) << "no session directory under the run's own temp folder";
  EXPECT_TRUE(saw_segments) << "no shared-memory segment under the run's own directory";
  ASSERT_EQ(sink.results.size(), 1u);
  EXPECT_EQ(sink.results[0].outcome,
            ending == Ending::cancelled ? RunOutcome::cancelled : RunOutcome::failed)
      << sink.results[0].error;
  EXPECT_TRUE(fs::is_empty(temp.path())) << "left in the temp folder:" << listing(temp.path());
  EXPECT_TRUE(fs::is_empty(shm.path())) << "left in shared memory:" << listing(shm.path());
}

// Before: a SIGKILLed mpirun removed nothing; each such run left its session directory in the
// temp folder (50 KB-8 MB) and its ranks' segments (4 MB a rank) in /dev/shm, which is memory.
TEST(OmpiScratch, ARunWhoseMpirunIsKilledLeavesNoneOfOpenMpisFiles) {
  expect_nothing_left_after(Ending::mpirun_killed);
}

TEST(OmpiScratch, ARunCancelledMidBenchmarkLeavesNoneOfOpenMpisFiles) {
  expect_nothing_left_after(Ending::cancelled);
}

TEST(OmpiScratch, ARunThatEndsByItselfLeavesNothingEither) {
  ScratchedBackend local;
  BenchmarkRequest request = long_bcast("scratch-ok");
  request.max_size = 64;
  request.iterations = 10;
  Results sink;
  CancelFlag cancel;
  local.backend.run(request, sink, cancel);
  ASSERT_EQ(sink.results.size(), 1u);
  EXPECT_EQ(sink.results[0].outcome, RunOutcome::ok) << sink.results[0].error;
  EXPECT_TRUE(fs::is_empty(local.temp.path())) << listing(local.temp.path());
  EXPECT_TRUE(fs::is_empty(local.shm.path())) << listing(local.shm.path());
}

// The pid of a child that has exited and been reaped: it names no process now. -1 on failure.
pid_t a_dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  return child > 0 && ::waitpid(child, &status, 0) == child ? child : -1;
}

// A daemon killed mid-run leaves its runs' scratch: the next backend made removes the folders
// whose owner process is gone, and only those.
TEST(OmpiScratch, TheFoldersOfADeadProcessAreSweptAndNoOthers) {
  const TempDir temp("colltune-scratch-temp");
  const TempDir shm("colltune-scratch-shm", shm_base());
  const pid_t child = a_dead_pid();
  ASSERT_GT(child, 0);
  const fs::path dead = temp.path() / "colltune-ompi-dead01";
  fs::create_directories(dead / "ompi.host.0" / "pid.1");
  std::ofstream(dead / "owner") << child << " 12345\n";
  std::ofstream(dead / "ompi.host.0" / "pid.1" / "contact.txt") << "x";
  fs::create_directories(shm.path() / "colltune-ompi-dead01");
  std::ofstream(shm.path() / "colltune-ompi-dead01" / "vader_segment.host.0.1.0") << "x";
  const fs::path foreign = temp.path() / "colltune-ompi-noowner";  // not ours to judge
  fs::create_directories(foreign);
  const fs::path other = temp.path() / "something-else";
  fs::create_directories(other);
  {
    const OmpiScratch live(temp.path(), shm.path());  // this process's: alive
    ASSERT_FALSE(live.session_base().empty());
    EXPECT_EQ(live.shm_dir().filename(), live.session_base().filename());

    EXPECT_EQ(OmpiScratch::sweep_orphans(temp.path(), shm.path()), 1);
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_FALSE(fs::exists(shm.path() / "colltune-ompi-dead01"));
    EXPECT_TRUE(fs::exists(live.session_base()));
    EXPECT_TRUE(fs::exists(live.shm_dir()));
    EXPECT_TRUE(fs::exists(foreign));
    EXPECT_TRUE(fs::exists(other));
  }
  // A backend made on these bases sweeps the same way (the live one is gone by now too).
  fs::create_directories(dead);
  std::ofstream(dead / "owner") << child << " 12345\n";
  const LocalBackend backend(ScratchedBackend::options_on(temp, shm));
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(foreign));
}

// An admin who moved Open MPI's scratch (OMPI_MCA_orte_tmpdir_base in the daemon's environment,
// e.g. off a small /tmp) keeps it there: each run's own folder goes under the named one.
TEST(OmpiScratch, TheFoldersAnAdminNamesInTheEnvironmentAreTheBases) {
  const TempDir named("colltune-scratch-admin");
  struct Restore {
    ~Restore() {
      ::unsetenv("OMPI_MCA_orte_tmpdir_base");
      ::unsetenv("OMPI_MCA_btl_vader_backing_directory");
    }
  } restore;
  ::unsetenv("OMPI_MCA_orte_tmpdir_base");
  ::unsetenv("OMPI_MCA_btl_vader_backing_directory");
  EXPECT_EQ(OmpiScratch::default_temp_base(), fs::temp_directory_path());
  EXPECT_EQ(OmpiScratch::default_shm_base(), fs::path("/dev/shm"));

  ::setenv("OMPI_MCA_orte_tmpdir_base", named.path().c_str(), 1);
  ::setenv("OMPI_MCA_btl_vader_backing_directory", (named.path() / "shm").c_str(), 1);
  EXPECT_EQ(OmpiScratch::default_temp_base(), named.path());
  EXPECT_EQ(OmpiScratch::default_shm_base(), named.path() / "shm");

  ::setenv("OMPI_MCA_orte_tmpdir_base", "relative/dir", 1);  // not a place Open MPI would use
  EXPECT_EQ(OmpiScratch::default_temp_base(), fs::temp_directory_path());

  // A launch's own environment wins over the backend's base.
  const std::map<std::string, std::string> env{{"PRTE_MCA_prte_tmpdir_base", "/var/scratch"}};
  EXPECT_EQ(OmpiScratch::temp_base_in(env, "/tmp"), fs::path("/var/scratch"));
  EXPECT_EQ(OmpiScratch::temp_base_in({}, "/tmp"), fs::path("/tmp"));
  EXPECT_EQ(OmpiScratch::shm_base_in(env, "/dev/shm"), fs::path("/dev/shm"));
}

// A request whose environment names Open MPI's session folder: the run's own folder is made
// there (Open MPI really uses it), not in the backend's base, and is gone after the run.
TEST(OmpiScratch, ARunsFolderGoesUnderTheTmpdirItsRequestNames) {
  ScratchedBackend local;
  const TempDir named("colltune-scratch-named");
  BenchmarkRequest request = long_bcast("scratch-named");
  request.extra_env["OMPI_MCA_orte_tmpdir_base"] = named.path().string();
  CancelFlag cancel;
  std::atomic<bool> saw_session{false}, done{false};
  bool base_was_empty = true;
  std::thread watcher([&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (!done && !saw_session && std::chrono::steady_clock::now() < until) {
      for (const auto& f : files_under(named.path()))
        if (f.rfind("colltune-ompi-", 0) == 0 && f.find("contact.txt") != std::string::npos)
          saw_session = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    base_was_empty = files_under(local.temp.path()).empty();
    cancel.cancel();
  });
  Results sink;
  local.backend.run(request, sink, cancel);
  done = true;
  watcher.join();
  EXPECT_TRUE(saw_session) << "no session under the named folder:" << listing(named.path());
  EXPECT_TRUE(base_was_empty) << "the backend's base was used:" << listing(local.temp.path());
  ASSERT_EQ(sink.results.size(), 1u);
  EXPECT_EQ(sink.results[0].outcome, RunOutcome::cancelled) << sink.results[0].error;
  EXPECT_TRUE(fs::is_empty(named.path())) << "left:" << listing(named.path());
}

// A daemon killed mid-run on a base its request named (extra_env) left its folders there, where
// the backend's own sweep at start-up does not look: the first run on that base sweeps it, with
// the same rule (only folders whose owner process is gone).
TEST(OmpiScratch, ABaseARequestNamesIsSweptBeforeItsFirstRun) {
  ScratchedBackend local;
  const TempDir named("colltune-scratch-named");
  const pid_t child = a_dead_pid();
  ASSERT_GT(child, 0);
  const fs::path dead = named.path() / "colltune-ompi-dead02";
  fs::create_directories(dead / "ompi.host.0");
  std::ofstream(dead / "owner") << child << " 12345\n";
  const fs::path foreign = named.path() / "colltune-ompi-noowner";  // not ours to judge
  fs::create_directories(foreign);

  BenchmarkRequest request = long_bcast("scratch-named-sweep");
  request.max_size = 4;
  request.iterations = 10;  // a short run that ends by itself
  request.extra_env["OMPI_MCA_orte_tmpdir_base"] = named.path().string();
  CancelFlag cancel;
  Results sink;
  local.backend.run(request, sink, cancel);
  ASSERT_EQ(sink.results.size(), 1u);
  EXPECT_EQ(sink.results[0].outcome, RunOutcome::ok) << sink.results[0].error;
  EXPECT_FALSE(fs::exists(dead)) << "left:" << listing(named.path());
  EXPECT_TRUE(fs::exists(foreign));
  fs::remove_all(foreign);
  EXPECT_TRUE(fs::is_empty(named.path())) << "left:" << listing(named.path());
}

// A base the run cannot write to: the run still runs, on Open MPI's defaults.
TEST(OmpiScratch, AnUnwritableBaseFallsBackToOpenMpisDefault) {
  const OmpiScratch scratch("/nonexistent/colltune", "/nonexistent/shm");
  EXPECT_TRUE(scratch.session_base().empty());
  EXPECT_TRUE(scratch.shm_dir().empty());
  EXPECT_TRUE(scratch.environment().empty());
}

}  // namespace
}  // namespace colltune
