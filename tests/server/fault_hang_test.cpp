// The fault suite, part 6: real hangs, not simulated ones. The local backend runs a stand-in
// mpirun (a script: no MPI needed) that every third launch prints one size and then hangs, with
// a child process in its process group. Expected: each hung run is killed at the campaign's
// run_timeout_s together with its children and recorded as a timeout (the size printed before
// the hang kept); the daemon answers requests meanwhile; the campaign continues to done.
#include <fcntl.h>
#include <sys/stat.h>

#include "tests/server/fault_test_support.h"

namespace colltune::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

void write_script(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
}

// A stand-in mpirun writing OSU -f output; launch number n hangs when n % 3 == 0.
std::string fake_mpirun(const std::string& dir) {
  return "#!/bin/bash\n"
         "n=$(( $(cat " +
         dir +
         "/count 2>/dev/null || echo 0) + 1 ))\n"
         "echo $n > " +
         dir +
         "/count\n"
         "echo $$ >> " +
         dir +
         "/pids\n"
         "echo '# OSU MPI Broadcast Latency Test v5.6.2'\n"
         "echo '# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations'\n"
         "if (( n % 3 == 0 )); then\n"
         "  echo '4                       1.50              1.20              1.80         100'\n"
         "  sleep 600 &\n"
         "  echo $! >> " +
         dir +
         "/pids\n"
         "  wait\n"
         "  exit 0\n"
         "fi\n"
         "lat=$(( 1 + n % 5 ))\n"
         "for size in 4 8 16 32 64; do\n"
         "  printf '%-10s%20.2f%20.2f%20.2f%12d\\n' $size $lat.5 $lat.2 $lat.8 100\n"
         "done\n";
}

// Running (a zombie waiting for its reaper counts as gone).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

TEST(FaultHang, RealHangsAreKilledAtTheTimeLimit) {
  TempDir dir;
  const std::string bin = dir / "bin";
  fs::create_directories(bin);
  write_script(bin + "/mpirun", fake_mpirun(bin));
  write_script(bin + "/osu_bcast", "#!/bin/sh\nexit 0\n");
  const json config = {{"listen", "127.0.0.1:0"},
                       {"database", dir / "h.db"},
                       {"backends", {{"local", {{"osu_dir", bin}, {"mpirun", bin + "/mpirun"}}}}},
                       {"tokens", tokens_json()}};
  const int budget = full_fault_suite() ? 12 : 4;
  const json spec = {{"name", "hangs"},
                     {"backend", "local"},
                     {"contexts", {{{"collective", "bcast"}, {"comm_size", 2}}}},
                     {"sizes", "4:64"},
                     {"strategy", "random"},
                     {"budget", budget},
                     {"batch_size", 2},
                     {"final_repeats", 1},
                     {"run_timeout_s", 1},
                     {"verify", false}};
  write_json_file(dir / "h.json", config);
  DaemonProcess daemon(COLLTUNE_BINARY, dir / "h.json", dir / "h.log");
  const std::string url = daemon.start();
  const auto id = create_campaign(url, spec);
  ASSERT_GT(id, 0);
  auto client = fault_client(url);
  // Health answered while runs hang: the slowest answer.
  double slowest = 0;
  json c;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto t0 = std::chrono::steady_clock::now();
    auto res = client.Get("/api/v1/campaigns/" + std::to_string(id));
    slowest = std::max(
        slowest, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    ASSERT_TRUE(res);
    c = json::parse(res->body);
    if ((c.at("state") == "done" || c.at("state") == "failed") && !c.at("active").get<bool>())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  daemon.stop(SIGTERM);
  const auto o = read_campaign_outcome(dir / "h.db", id);
  EXPECT_EQ(o.state, "done") << o.error << "\n" << daemon.log();
  EXPECT_EQ(o.run_count, o.planned_runs);
  EXPECT_EQ(o.duplicate_runs, 0u);
  int timeouts = 0, with_early_size = 0;
  for (const auto& [tag, by_run] : o.runs)
    for (const auto& [key, run] : by_run)
      if (std::get<0>(run) == "timeout") {
        ++timeouts;
        EXPECT_NE(std::get<1>(run).find("run timeout"), std::string::npos) << std::get<1>(run);
        with_early_size += std::get<2>(run).size() == 1;
      }
  EXPECT_GE(timeouts, 1) << outcome_counts_text(o);
  EXPECT_EQ(with_early_size, timeouts) << "the size printed before the hang was not kept";
  // Every process the stand-in started is gone (the hung ones were killed with their group).
  int left = 0;
  std::ifstream pids(bin + "/pids");
  for (pid_t pid; pids >> pid;) left += alive(pid);
  EXPECT_EQ(left, 0) << "processes of hung runs are still alive";
  EXPECT_LT(slowest, 2.0) << "the daemon stopped answering while a run hung";
  report_fault(
      "mpirun hangs for real (every 3rd launch, child in its process group), run_timeout_s 1",
      std::to_string(timeouts) + " hangs of " + std::to_string(o.run_count) + " runs",
      "killed at the limit with its children; recorded as timeout with the early size; "
      "daemon responsive; campaign done",
      std::to_string(timeouts) + " timeouts recorded (early size kept), " + std::to_string(left) +
          " processes left, slowest API answer " + std::to_string(slowest).substr(0, 4) +
          " s, state " + o.state);
}

}  // namespace
}  // namespace colltune::testing
