// A Backend decorator that injects the failures real clusters produce, to test that campaigns
// survive them: jobs that fail to start, runs that hang past the time limit, crashes in the
// middle of the output, garbled output, and slow nodes.
//
// Each ok result of the wrapped backend is, with the configured probabilities (checked in this
// order; the first that hits applies):
//   failure  -> the run fails at launch: exit 1, mpirun's error on stderr, no rows (failed);
//   hang     -> the run prints some sizes then hangs and is killed at run_timeout_s (timeout,
//               early sizes kept, provenance end = start + run_timeout_s);
//   crash    -> a rank dies with SIGSEGV while a line is half printed (failed, exit 139, early
//               sizes kept);
//   garble   -> a data line is corrupted (parse_error, sizes before it kept);
//   slow     -> the run landed on a slow node: every latency x slow_factor (still ok).
// Altered runs are re-rendered as OSU output and re-classified by the same parser path as real
// runs. Decisions come from (seed, tag, config_index, repeat), so they do not depend on the
// order results arrive in. Results that are not ok pass through unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runner/backend.h"

namespace colltune {

struct FaultInjectionOptions {
  std::uint64_t seed = 1;
  double failure_rate = 0;
  double hang_rate = 0;
  double crash_rate = 0;
  double garble_rate = 0;
  double slow_node_rate = 0;
  double slow_factor = 3.0;
  // After an injected crash, the remaining runs of the same batch fail too (a batch job that
  // died), reported as failed without rows.
  bool crash_aborts_batch = false;
};

class FaultInjectingBackend : public Backend {
 public:
  // Throws std::invalid_argument for rates outside [0, 1], slow_factor < 1 or no backend.
  FaultInjectingBackend(std::shared_ptr<Backend> inner, FaultInjectionOptions options);

  std::string name() const override { return inner_->name(); }
  BackendInfo describe() override;
  void run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) override;
  std::string preflight(const BenchmarkRequest& request) override {
    return inner_->preflight(request);
  }
  std::string admit(const BenchmarkRequest& request) override { return inner_->admit(request); }
  std::string ompi_info_parsable() override { return inner_->ompi_info_parsable(); }
  double launch_overhead_s() const override { return inner_->launch_overhead_s(); }
  bool runs_real_open_mpi() const override { return inner_->runs_real_open_mpi(); }

  const FaultInjectionOptions& options() const { return options_; }

 private:
  std::shared_ptr<Backend> inner_;
  FaultInjectionOptions options_;
};

}  // namespace colltune
