// What a Slurm job costs per benchmark configuration: the same N configurations run (a) as ONE
// batch job, (b) as N jobs of one configuration each, and (c) locally with mpirun, interleaved
// round by round so that drift hits all three alike. Needs a running cluster (slurm/dev-cluster
// start) and the bundled benchmark. Prints a Markdown table (medians over rounds).
//
//   slurm_overhead_bench [--configs 8] [--rounds 3] [--launcher srun|mpirun] [--osu-dir DIR]
//                        [--max-size 1048576] [--iterations 100]
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "core/stats.h"
#include "runner/local_backend.h"
#include "runner/slurm_backend.h"

namespace {

using namespace colltune;

class CountingSink : public RunSink {
 public:
  void on_job_submitted(const std::string&, const std::string&) override { ++jobs; }
  void on_result(const RunResult& r) override {
    ++results;
    if (r.outcome != RunOutcome::ok) {
      ++failures;
      std::cerr << "run failed: " << to_string(r.config) << ": " << r.error << "\n";
    }
  }
  int jobs = 0, results = 0, failures = 0;
};

double seconds_of(const std::function<void()>& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int configs = 8;
  int rounds = 3;
  std::string launcher = "srun";
  std::string osu_dir;
  std::int64_t max_size = 1 << 20;
  int iterations = 100;
  CLI::App app{"Slurm allocation overhead per configuration: one batch job vs one job each"};
  app.add_option("--configs", configs, "configurations per batch")->check(CLI::Range(1, 64));
  app.add_option("--rounds", rounds, "rounds (medians are reported)")->check(CLI::Range(1, 20));
  app.add_option("--launcher", launcher, "srun or mpirun")
      ->check(CLI::IsMember({"srun", "mpirun"}));
  app.add_option("--osu-dir", osu_dir, "OSU benchmark folder (default: the bundled one)");
  app.add_option("--max-size", max_size, "largest message (bytes)")->check(CLI::Range(4, 1 << 26));
  app.add_option("--iterations", iterations, "OSU -i")->check(CLI::Range(1, 100000));
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);

  SlurmBackendOptions options;
  options.osu_dir = osu_dir;
  options.launcher = *parse_slurm_launcher(launcher);
  options.poll_initial_s = 0.05;
  options.poll_max_s = 0.25;
  options.job_root = "/tmp/colltune-slurm-overhead";
  SlurmBackend slurm(options);
  std::string detail;
  if (!slurm.controller_up(&detail)) {
    std::cerr << "no Slurm controller answers (" << detail << "); run slurm/dev-cluster start\n";
    return 2;
  }
  LocalBackend local({.osu_dir = osu_dir});

  BenchmarkRequest request;
  request.tag = "overhead";
  request.collective = Collective::bcast;
  request.comm_size = 4;
  request.min_size = 4;
  request.max_size = max_size;
  request.iterations = iterations;
  request.warmup = 10;
  const std::vector<TuningConfig> pool = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0},    {6, 0, 0},
                                          {7, 0, 0}, {5, 0, 0}, {2, 8192, 4}, {6, 65536, 0}};
  for (int i = 0; i < configs; ++i) request.configs.push_back(pool[i % pool.size()]);

  CancelFlag cancel;
  int failures = 0;
  auto run_batch = [&](Backend& backend, const BenchmarkRequest& r) {
    CountingSink sink;
    backend.run(r, sink, cancel);
    failures += sink.failures;
    return sink.jobs;
  };
  // Warm-up: the first job after a controller start waits for the first scheduler pass.
  {
    auto one = request;
    one.configs.resize(1);
    run_batch(slurm, one);
  }

  std::vector<double> batch_s, per_config_s, local_s;
  for (int round = 0; round < rounds; ++round) {
    batch_s.push_back(seconds_of([&] { run_batch(slurm, request); }));
    per_config_s.push_back(seconds_of([&] {
      for (int i = 0; i < configs; ++i) {
        auto one = request;
        one.tag = "overhead-" + std::to_string(i);
        one.configs = {request.configs[i]};
        run_batch(slurm, one);
      }
    }));
    local_s.push_back(seconds_of([&] { run_batch(local, request); }));
    std::fprintf(stderr, "round %d: batch %.2f s, one job each %.2f s, local %.2f s\n", round + 1,
                 batch_s.back(), per_config_s.back(), local_s.back());
  }

  const double n = configs;
  const double b = median(batch_s), p = median(per_config_s), l = median(local_s);
  std::printf(
      "osu_bcast np=4 -m 4:%lld -i %d -x 10, %d configurations, launcher %s, %d rounds "
      "(medians)\n\n",
      static_cast<long long>(max_size), iterations, configs, launcher.c_str(), rounds);
  std::printf("| mode | wall s | s per configuration | overhead vs local per configuration |\n");
  std::printf("|---|---|---|---|\n");
  std::printf("| local mpirun (no Slurm) | %.2f | %.2f | - |\n", l, l / n);
  std::printf("| one Slurm job for the batch | %.2f | %.2f | %+.2f s |\n", b, b / n, (b - l) / n);
  std::printf("| one Slurm job per configuration | %.2f | %.2f | %+.2f s |\n", p, p / n,
              (p - l) / n);
  std::printf("\nbatching saves %.2f s per configuration (%.1fx less wall time)\n", (p - b) / n,
              p / b);
  if (failures) std::printf("\nWARNING: %d runs failed\n", failures);
  return failures ? 1 : 0;
}
