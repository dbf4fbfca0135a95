// Shared by the fault suite (tests/server/fault_*_test.cpp, ctest label "faults"): the real
// `colltune serve` binary on the simulated cluster with fault injection, what a campaign left in
// the store, and one line per injected fault for scripts/fault-suite's table.
//
// COLLTUNE_FAULTS_FULL=1 runs the full suite (more repetitions); without it each test runs its
// short form (the whole label in well under two minutes). COLLTUNE_FAULT_REPORT=FILE appends
// one JSON object per fault test to FILE: {test, injected, count, expected, observed}.
#pragma once

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "campaign/store.h"
#include "core/file_text.h"
#include "tests/server/daemon_test_support.h"

namespace colltune::testing {

inline bool full_fault_suite() {
  const char* v = std::getenv("COLLTUNE_FAULTS_FULL");
  return v && std::string(v) == "1";
}

// One row of the fault table. `observed` says what happened; pass/fail is the test's verdict
// (the script takes it from ctest), so the row is written whatever the outcome.
inline void report_fault(const std::string& injected, const std::string& count,
                         const std::string& expected, const std::string& observed) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = std::string(info->test_suite_name()) + "." + info->name();
  const nlohmann::json row = {{"test", test},         {"injected", injected},
                              {"count", count},       {"expected", expected},
                              {"observed", observed}, {"full", full_fault_suite()}};
  std::printf("[ fault    ] %s\n", row.dump().c_str());
  if (const char* path = std::getenv("COLLTUNE_FAULT_REPORT"); path && *path) {
    std::ofstream out(path, std::ios::app);
    out << row.dump() << "\n";
  }
}

inline httplib::Client fault_client(const std::string& url, int read_timeout_s = 30) {
  auto c = bearer_client(url, kAdminToken, read_timeout_s);
  c.set_connection_timeout(2);  // a daemon that is down answers at once
  return c;
}

// A daemon config on the simulated cluster without noise (deterministic), with `faults`
// (runner/fault_injection.h options; null = none) and a small pace so that runs take wall time.
inline nlohmann::json sim_daemon_config(const TempDir& dir, const std::string& name,
                                        const nlohmann::json& faults, double pace = 0,
                                        const std::string& rules_dir = "") {
  nlohmann::json sim = {{"noise", "none"}};
  if (pace > 0) sim["pace"] = pace;
  if (!faults.is_null()) sim["faults"] = faults;
  nlohmann::json config = {{"listen", "127.0.0.1:0"},
                           {"database", dir / (name + ".db")},
                           {"backends", {{"sim", sim}}},
                           {"tokens", tokens_json()}};
  if (!rules_dir.empty()) config["rules_dir"] = rules_dir;
  return config;
}

// A campaign of two contexts; "random" suggestions do not depend on the results, so the jobs
// (and their runs) are the same whatever faults hit.
inline nlohmann::json fault_campaign_spec(std::uint64_t seed = 11,
                                          const std::string& strategy = "random", int budget = 12) {
  return {{"name", "fault suite"},
          {"backend", "sim"},
          {"contexts",
           {{{"collective", "bcast"}, {"comm_size", 16}},
            {{"collective", "allreduce"}, {"comm_size", 16}}}},
          {"sizes", "4:65536"},
          {"strategy", strategy},
          {"budget", budget},
          {"seed", seed},
          {"batch_size", 4},
          {"final_repeats", 2},
          {"run_timeout_s", 30}};
}

// POST a campaign; returns its id (0 on failure, with a gtest failure).
inline std::int64_t create_campaign(const std::string& url, const nlohmann::json& spec) {
  auto client = fault_client(url);
  auto res = client.Post("/api/v1/campaigns", spec.dump(), "application/json");
  EXPECT_TRUE(res) << "no answer to POST /api/v1/campaigns";
  if (!res) return 0;
  EXPECT_EQ(res->status, 201) << res->body;
  if (res->status != 201) return 0;
  return nlohmann::json::parse(res->body).at("id").get<std::int64_t>();
}

// Everything a campaign left in its store that two runs of it must agree on.
struct CampaignOutcome {
  std::string state;
  std::string error;
  std::vector<std::tuple<std::string, std::string, std::string, nlohmann::json>>
      jobs;  // tag, purpose, state, request
  // tag -> (config_index, repeat) -> (outcome, error, rows (size, avg))
  std::map<
      std::string,
      std::map<std::pair<std::size_t, int>,
               std::tuple<std::string, std::string, std::vector<std::pair<std::int64_t, double>>>>>
      runs;
  std::size_t run_count = 0;
  std::size_t planned_runs = 0;  // sum over jobs of configs x repeats
  std::size_t duplicate_runs = 0;
  std::size_t duplicate_tags = 0;
  std::int64_t measurements = 0;
  std::map<std::string, int> outcomes;  // outcome -> runs
  std::vector<nlohmann::json> results;  // per context: picks
  std::string rules;
  bool rules_deployable = false;
  std::size_t rules_versions = 0;
};

inline CampaignOutcome read_campaign_outcome(const std::string& db, std::int64_t id) {
  Store store(db);
  CampaignOutcome o;
  const auto campaign = store.campaign(id);
  if (!campaign) return o;
  o.state = to_string(campaign->state);
  o.error = campaign->error;
  std::set<std::string> tags;
  for (const auto& job : store.jobs(id)) {
    if (!tags.insert(job.tag).second) ++o.duplicate_tags;
    o.jobs.emplace_back(job.tag, to_string(job.purpose), to_string(job.state), job.request);
    const auto request = job.request.get<BenchmarkRequest>();
    o.planned_runs += request.configs.size() * static_cast<std::size_t>(request.repeats);
    for (const auto& run : store.runs_of_job(job.id)) {
      ++o.run_count;
      ++o.outcomes[std::string(to_string(run.outcome))];
      auto [it, inserted] =
          o.runs[job.tag].try_emplace(std::make_pair(run.config_index, run.repeat));
      if (!inserted) ++o.duplicate_runs;
      std::vector<std::pair<std::int64_t, double>> rows;
      for (const auto& row : run.rows) rows.emplace_back(row.size, row.avg_us);
      it->second = {std::string(to_string(run.outcome)), run.error, rows};
    }
  }
  o.measurements = store.count_measurements(id);
  for (const auto& ctx : store.contexts(id)) o.results.push_back(ctx.result);
  const auto versions = store.rules_versions(id);
  o.rules_versions = versions.size();
  if (!versions.empty()) {
    o.rules = versions.front().content;
    o.rules_deployable = versions.front().validation.value("deployable", false);
  }
  return o;
}

inline std::string outcome_counts_text(const CampaignOutcome& o) {
  std::string text;
  for (const auto& [outcome, n] : o.outcomes)
    text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + outcome;
  return text;
}

// Runs a campaign to its end on a fresh `colltune serve`; returns the campaign id (0 when it
// did not end in time). The daemon is stopped with SIGTERM afterwards.
inline std::int64_t run_campaign_to_end(const TempDir& dir, const std::string& name,
                                        const nlohmann::json& config, const nlohmann::json& spec,
                                        std::chrono::seconds timeout = std::chrono::seconds(120)) {
  write_json_file(dir / (name + ".json"), config);
  DaemonProcess daemon(COLLTUNE_BINARY, dir / (name + ".json"), dir / (name + ".log"));
  const std::string url = daemon.start();
  const auto id = create_campaign(url, spec);
  if (id == 0) return 0;
  auto client = fault_client(url);
  auto c = wait_for_state(client, id, {"done", "failed", "cancelled"}, timeout);
  const std::string state = c.value("state", "");
  EXPECT_TRUE(state == "done" || state == "failed") << c.dump() << "\n" << daemon.log();
  daemon.stop(SIGTERM);
  return id;
}

// ---- Mounts (root only): a small tmpfs, and read-only bind mounts.

// Mounts a tmpfs of `size` ("64k") on `dir` (created). Returns "" or why it cannot.
inline std::string mount_tmpfs(const std::string& dir, const std::string& size,
                               bool read_only = false) {
  std::filesystem::create_directories(dir);
  const std::string options = "size=" + size + ",mode=0755";
  if (::mount("tmpfs", dir.c_str(), "tmpfs", read_only ? MS_RDONLY : 0, options.c_str()) != 0)
    return std::string("mount -t tmpfs failed: ") + std::strerror(errno);
  return "";
}

// Makes `dir` read-only in place (bind mount onto itself, remounted read-only): unlike chmod it
// also stops root. Returns "" or why it cannot.
inline std::string make_read_only(const std::string& dir) {
  if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0)
    return std::string("bind mount failed: ") + std::strerror(errno);
  if (::mount(nullptr, dir.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
    const std::string why = std::string("read-only remount failed: ") + std::strerror(errno);
    ::umount2(dir.c_str(), MNT_DETACH);
    return why;
  }
  return "";
}

// Unmounts `dir` when destroyed (lazily, so that a failing test never leaves a busy mount).
class MountGuard {
 public:
  explicit MountGuard(std::string dir) : dir_(std::move(dir)) {}
  ~MountGuard() { release(); }
  void release() {
    if (!dir_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
    dir_.clear();
  }

 private:
  std::string dir_;
};

}  // namespace colltune::testing
