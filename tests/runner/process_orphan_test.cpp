// Issue 20 item 11: a launch killed after its timeout leaves no process behind, even ranks that
// ignore SIGTERM and outlive a killed mpirun, and a launch that ends by itself leaves no rank's
// escaped child. Real mpirun; only processes carrying this test's own marker in their
// environment are looked at (other MPI jobs may run on the machine at the same time).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "runner/mpirun_command.h"
#include "runner/ompi_scratch.h"
#include "runner/process.h"

namespace colltune {
namespace {

constexpr const char* kMarkerName = "COLLTUNE_ORPHAN_TEST_MARKER";

// Live processes whose environment holds kMarkerName=marker.
std::vector<int> marked_processes(const std::string& marker) {
  const std::string needle = std::string(kMarkerName) + "=" + marker;
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] == 'Z') continue;
    std::ifstream env(entry.path() / "environ", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\0', start);
      if (end == std::string::npos) end = text.size();
      if (text.compare(start, end - start, needle) == 0) {
        out.push_back(std::stoi(name));
        break;
      }
      start = end + 1;
    }
  }
  return out;
}

// Polls until no marked process is left (zombies waiting for init do not count).
std::vector<int> survivors_after(const std::string& marker, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto left = marked_processes(marker);
  while (!left.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = marked_processes(marker);
  }
  return left;
}

// mpirun -np N PROGRAM, with the marker in the environment of mpirun and every rank, and Open
// MPI's scratch files in `scratch` (these launches are killed: Open MPI removes none of them).
std::vector<std::string> mpirun_argv(int np, const std::vector<std::string>& program,
                                     const std::string& marker, const OmpiScratch& scratch,
                                     ProcessOptions& options) {
  MpirunSettings settings;
  settings.np = np;
  settings.oversubscribe = true;
  settings.yield_when_idle = true;
  settings.allow_run_as_root = ::geteuid() == 0;
  auto launch = mpirun_launch(settings, {}, {{kMarkerName, marker}}, program);
  options.env = launch.env;
  for (const auto& [name, value] : scratch.environment()) options.env[name] = value;
  return launch.argv;
}

std::string new_marker() {
  return std::to_string(std::random_device{}()) + "-" + std::to_string(::getpid());
}

// A rank that ignores SIGTERM and sleeps; prints "ready" once the handler is set.
const char* kIgnoreTerm =
    "import signal, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "time.sleep(600)\n";

TEST(ProcessOrphans, RanksIgnoringSigtermDoNotOutliveAKilledMpirun) {
  // mpirun forwards SIGTERM (ignored) and would SIGKILL its ranks after a while; the launch's
  // grace is shorter, so mpirun itself is SIGKILLed first and its ranks are orphaned. Before:
  // only mpirun's process group was signalled and 4 ranks ran on for 10 minutes.
  const std::string marker = new_marker();
  const OmpiScratch scratch(OmpiScratch::default_temp_base(), OmpiScratch::default_shm_base());
  ProcessOptions options;
  options.timeout_s = 4;
  options.kill_grace_s = 0.2;
  const auto result = run_process(
      mpirun_argv(4, {"python3", "-c", kIgnoreTerm}, marker, scratch, options), options);
  EXPECT_TRUE(result.timed_out);
  EXPECT_NE(result.stdout_text.find("ready"), std::string::npos)
      << "ranks never started: " << result.stderr_text;
  const auto left = survivors_after(marker, 5.0);
  for (int pid : left) ::kill(pid, SIGKILL);  // do not leave them to the next test
  EXPECT_TRUE(left.empty()) << left.size() << " process(es) of the killed launch still run";
  EXPECT_EQ(result.survivors, 0);
}

TEST(ProcessOrphans, ChildrenEscapingToTheirOwnProcessGroupAreKilledWithTheLaunch) {
  // Each rank starts a helper in a process group of its own that ignores SIGTERM; mpirun knows
  // nothing of it. On timeout the whole session is killed, helpers included.
  const std::string marker = new_marker();
  const OmpiScratch scratch(OmpiScratch::default_temp_base(), OmpiScratch::default_shm_base());
  const std::string script =
      "import os, signal, time\n"
      "if os.fork() == 0:\n"
      "    os.setpgid(0, 0)\n"
      "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
      "    time.sleep(600)\n"
      "    os._exit(0)\n"
      "print('ready', flush=True)\n"
      "time.sleep(600)\n";
  ProcessOptions options;
  options.timeout_s = 4;
  options.kill_grace_s = 1.0;
  const auto result =
      run_process(mpirun_argv(2, {"python3", "-c", script}, marker, scratch, options), options);
  EXPECT_TRUE(result.timed_out);
  const auto left = survivors_after(marker, 5.0);
  for (int pid : left) ::kill(pid, SIGKILL);
  EXPECT_TRUE(left.empty()) << left.size() << " process(es) of the killed launch still run";
}

TEST(ProcessOrphans, LeftoversOfALaunchThatEndedByItselfAreKilledWhenAsked) {
  const std::string marker = new_marker();
  const OmpiScratch scratch(OmpiScratch::default_temp_base(), OmpiScratch::default_shm_base());
  const std::string script =
      "import os, signal, time\n"
      "if os.fork() == 0:\n"
      "    os.setpgid(0, 0)\n"
      "    fd = os.open(os.devnull, os.O_RDWR)\n"
      "    for n in (0, 1, 2): os.dup2(fd, n)\n"
      "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
      "    time.sleep(600)\n"
      "    os._exit(0)\n"
      "print('done', flush=True)\n";
  ProcessOptions options;
  options.timeout_s = 60;
  options.kill_grace_s = 0.5;
  options.kill_leftovers = true;
  const auto result =
      run_process(mpirun_argv(2, {"python3", "-c", script}, marker, scratch, options), options);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 0) << result.stderr_text;
  EXPECT_EQ(result.leftovers_killed, 2);
  const auto left = survivors_after(marker, 5.0);
  for (int pid : left) ::kill(pid, SIGKILL);
  EXPECT_TRUE(left.empty());
}

}  // namespace
}  // namespace colltune
