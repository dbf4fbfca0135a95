// Runs benchmarks with mpirun on this machine: one OSU process set per (configuration, repeat),
// configuration forced through MCA parameters, in a shuffled order, each with a timeout.
#pragma once

#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runner/backend.h"
#include "runner/osu_probe.h"

namespace colltune {

struct LocalBackendOptions {
  // OMB install or build folder holding osu_<collective>; empty = the bundled benchmark.
  std::filesystem::path osu_dir;
  std::string mpirun = "mpirun";
  std::string ompi_info = "ompi_info";
  std::vector<std::string> mpirun_extra_args;  // e.g. {"--bind-to", "core"}
  int cores = 0;  // 0 = detect; ranks above this oversubscribe (and yield when idle)
  // Campaigns asking for more than cores x this many ranks are refused at creation: an
  // oversubscribed machine measures its scheduler, not the collective (and 10,000 ranks on a
  // laptop only exhaust it).
  int max_ranks_per_core = 8;
  // Where each run's Open MPI scratch goes (runner/ompi_scratch.h): a directory of the run's own
  // under each, removed after the run however it ended. Empty = where Open MPI would put them:
  // the folders this process's OMPI_MCA_orte_tmpdir_base / OMPI_MCA_btl_vader_backing_directory
  // name, else the system temp folder and /dev/shm. A request's extra_env naming them wins. The
  // folders of dead processes under these are swept when the backend is made; under a
  // request's own, before its first run.
  std::filesystem::path ompi_temp_base;
  std::filesystem::path ompi_shm_base;
};

class LocalBackend : public Backend {
 public:
  explicit LocalBackend(LocalBackendOptions options);

  std::string name() const override { return "local"; }
  BackendInfo describe() override;
  void run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) override;
  double launch_overhead_s() const override { return 0.4; }
  std::string ompi_info_parsable() override;
  bool runs_real_open_mpi() const override { return true; }
  std::string preflight(const BenchmarkRequest& request) override;
  std::string admit(const BenchmarkRequest& request) override;

  // The bundled benchmark's folder (osu_bcast, ...): install_layout::osu_bench_dir().
  static std::filesystem::path bundled_osu_dir();

 private:
  std::string ompi_version();
  // Sweeps the orphans under (temp, shm) the first time a run uses these bases.
  void sweep_once(const std::filesystem::path& temp, const std::filesystem::path& shm);
  // Why the local backend cannot benchmark `collective` (no osu_<collective> under osu_dir);
  // empty when it can.
  std::string missing_benchmark(Collective collective) const;
  // True the first time it is asked for (collective, comm_size).
  bool first_warning(Collective collective, int comm_size);

  LocalBackendOptions options_;
  std::mutex swept_mutex_;
  std::set<std::pair<std::filesystem::path, std::filesystem::path>> swept_;  // bases swept
  // (collective, ranks) whose oversubscription admit() has warned of: a campaign is admitted
  // when it is created and again before it runs, and says it once.
  std::mutex warned_mutex_;
  std::set<std::pair<Collective, int>> warned_;
  OsuProbe osu_probe_;
  std::optional<std::string> ompi_version_;
  std::string host_;
};

// Turns one finished benchmark process into a result: outcome, error and rows. Shared by the
// backends that run real OSU binaries.
struct ProcessResult;
void classify_osu_run(const ProcessResult& process, RunResult& result);

}  // namespace colltune
