#include "runner/fault_injection.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/rng.h"
#include "osu/osu_command.h"
#include "runner/local_backend.h"
#include "runner/process.h"
#include "runner/sim/noise.h"
#include "runner/sim/osu_text.h"

namespace colltune {

namespace {

enum class Fault { none, failure, hang, crash, garble, slow };

std::string_view fault_name(Fault f) {
  switch (f) {
    case Fault::none:
      return "none";
    case Fault::failure:
      return "failure";
    case Fault::hang:
      return "hang";
    case Fault::crash:
      return "crash";
    case Fault::garble:
      return "garble";
    case Fault::slow:
      return "slow node";
  }
  return "?";
}

// "OSU MPI Broadcast Latency Test v5.6.2" -> "5.6.2".
std::string version_of(const std::string& benchmark) {
  const auto v = benchmark.rfind(" v");
  return v == std::string::npos ? "5.6.2" : benchmark.substr(v + 2);
}

bool rows_are_full(const std::vector<OsuRow>& rows) {
  for (const auto& r : rows)
    if (!r.min_us || !r.max_us || !r.iterations) return false;
  return true;
}

class FaultSink : public RunSink {
 public:
  FaultSink(RunSink& downstream, const FaultInjectionOptions& options,
            const BenchmarkRequest& request)
      : downstream_(downstream), options_(options), request_(request) {}

  void on_job_submitted(const std::string& tag, const std::string& job_id) override {
    downstream_.on_job_submitted(tag, job_id);
  }
  void on_job_resubmitted(const std::string& tag, const std::string& ended_job_id,
                          const std::string& why) override {
    downstream_.on_job_resubmitted(tag, ended_job_id, why);
  }

  void on_result(const RunResult& original) override {
    RunResult result = original;
    if (batch_aborted_) {
      result.outcome = RunOutcome::failed;
      result.error = "batch aborted: an earlier run of the batch crashed (injected)";
      result.rows.clear();
      downstream_.on_result(result);
      return;
    }
    if (result.outcome != RunOutcome::ok) {
      downstream_.on_result(result);
      return;
    }
    Rng rng(sim::mix_seed(sim::mix_seed(sim::mix_seed(options_.seed, result.tag),
                                        static_cast<std::uint64_t>(result.config_index)),
                          static_cast<std::uint64_t>(result.repeat)));
    Fault fault = Fault::none;
    // One draw per kind, always in the same order, so changing one rate does not reshuffle
    // which runs get the others.
    const double u_failure = rng.uniform(), u_hang = rng.uniform(), u_crash = rng.uniform(),
                 u_garble = rng.uniform(), u_slow = rng.uniform();
    const double u_where = rng.uniform(), u_what = rng.uniform();
    if (u_failure < options_.failure_rate) {
      fault = Fault::failure;
    } else if (u_hang < options_.hang_rate) {
      fault = Fault::hang;
    } else if (u_crash < options_.crash_rate) {
      fault = Fault::crash;
    } else if (u_garble < options_.garble_rate) {
      fault = Fault::garble;
    } else if (u_slow < options_.slow_node_rate) {
      fault = Fault::slow;
    }
    if (fault == Fault::none) {
      downstream_.on_result(result);
      return;
    }
    inject(result, fault, u_where, u_what);
    if (fault == Fault::crash && options_.crash_aborts_batch) batch_aborted_ = true;
    downstream_.on_result(result);
  }

 private:
  void inject(RunResult& result, Fault fault, double u_where, double u_what) {
    const Collective coll = request_.collective;
    const std::string version = version_of(result.provenance.benchmark);
    std::vector<OsuRow> rows = result.rows;
    const bool full = rows_are_full(rows);
    // The row the fault strikes at (the sizes before it were printed).
    const std::size_t at =
        rows.empty() ? 0 : static_cast<std::size_t>(u_where * static_cast<double>(rows.size()));
    const std::string note = "colltune fault injection: " + std::string(fault_name(fault)) + "\n";
    ProcessResult process;
    process.elapsed_s = result.provenance.end_time - result.provenance.start_time;
    process.exit_code = 0;
    switch (fault) {
      case Fault::failure:
        process.exit_code = 1;
        process.stderr_text =
            note +
            "--------------------------------------------------------------------------\n"
            "ORTE was unable to reliably start one or more daemons.\n"
            "--------------------------------------------------------------------------\n";
        break;
      case Fault::hang:
        rows.resize(at);
        process.stdout_text = sim::format_osu_output(coll, rows, full, version);
        process.exit_code = -1;
        process.signal = 9;
        process.timed_out = true;
        process.elapsed_s = request_.run_timeout_s;
        process.stderr_text = note;
        break;
      case Fault::crash: {
        const std::size_t cut = rows.empty() ? 0 : std::min(at, rows.size() - 1);
        std::vector<OsuRow> before(rows.begin(), rows.begin() + static_cast<long>(cut));
        std::string text = sim::format_osu_output(coll, before, full, version);
        if (!rows.empty()) {
          // Half of the next line, without its newline: the process died while printing.
          const std::string line = sim::format_osu_output(coll, {rows[cut]}, full, version);
          const std::string last = line.substr(line.rfind('\n', line.size() - 2) + 1);
          text += last.substr(0, std::max<std::size_t>(1, last.size() / 2));
        }
        process.stdout_text = text;
        process.exit_code = -1;
        process.signal = 11;
        process.stderr_text =
            note +
            "--------------------------------------------------------------------------\n"
            "mpirun noticed that process rank 1 with PID 0 on node sim exited on signal 11 "
            "(Segmentation fault).\n"
            "--------------------------------------------------------------------------\n";
        break;
      }
      case Fault::garble: {
        std::string text = sim::format_osu_output(coll, rows, full, version);
        // Corrupt the data line of the struck row: its digits turn into binary noise.
        std::size_t pos = 0;
        const std::size_t header_lines = 3;  // blank, title, column header
        const std::size_t target = header_lines + (rows.empty() ? 0 : at);
        for (std::size_t line = 0; line < target && pos != std::string::npos; ++line)
          pos = text.find('\n', pos) + 1;
        const std::size_t end = text.find('\n', pos);
        if (pos != std::string::npos && end != std::string::npos && end > pos) {
          // No digit, '.', '#' or blank: the line must not read as a number or a comment.
          static constexpr char kNoise[] = "@!?%&*~^$\x7f";
          for (std::size_t i = pos; i < end; ++i)
            if (text[i] >= '0' && text[i] <= '9')
              text[i] = kNoise[(i + static_cast<std::size_t>(u_what * 97)) % (sizeof kNoise - 1)];
        } else {
          text += "@!?%&*~^ garbled\n";
        }
        process.stdout_text = text;
        process.stderr_text = note;
        break;
      }
      case Fault::slow:
        for (auto& row : rows) {
          row.avg_us *= options_.slow_factor;
          if (row.min_us) *row.min_us *= options_.slow_factor;
          if (row.max_us) *row.max_us *= options_.slow_factor;
        }
        process.stdout_text = sim::format_osu_output(coll, rows, full, version);
        process.stderr_text = note;
        break;
      case Fault::none:
        break;
    }
    const std::string previous_stderr = result.provenance.stderr_excerpt;
    classify_osu_run(process, result);
    if (fault == Fault::hang)
      result.provenance.end_time = result.provenance.start_time + request_.run_timeout_s;
    result.provenance.stderr_excerpt =
        result.provenance.stderr_excerpt + (previous_stderr.empty() ? "" : "\n" + previous_stderr);
  }

  RunSink& downstream_;
  const FaultInjectionOptions& options_;
  const BenchmarkRequest& request_;
  bool batch_aborted_ = false;
};

void check_rate(double rate, const char* what) {
  if (!(rate >= 0 && rate <= 1))
    throw std::invalid_argument(std::string("fault injection: ") + what + " must be in [0, 1]");
}

}  // namespace

FaultInjectingBackend::FaultInjectingBackend(std::shared_ptr<Backend> inner,
                                             FaultInjectionOptions options)
    : inner_(std::move(inner)), options_(options) {
  if (!inner_) throw std::invalid_argument("fault injection needs a backend to wrap");
  check_rate(options_.failure_rate, "failure_rate");
  check_rate(options_.hang_rate, "hang_rate");
  check_rate(options_.crash_rate, "crash_rate");
  check_rate(options_.garble_rate, "garble_rate");
  check_rate(options_.slow_node_rate, "slow_node_rate");
  if (!(options_.slow_factor >= 1)) throw std::invalid_argument("slow_factor must be >= 1");
}

BackendInfo FaultInjectingBackend::describe() {
  BackendInfo info = inner_->describe();
  info.extra["fault_injection"] = {{"seed", options_.seed},
                                   {"failure_rate", options_.failure_rate},
                                   {"hang_rate", options_.hang_rate},
                                   {"crash_rate", options_.crash_rate},
                                   {"garble_rate", options_.garble_rate},
                                   {"slow_node_rate", options_.slow_node_rate},
                                   {"slow_factor", options_.slow_factor},
                                   {"crash_aborts_batch", options_.crash_aborts_batch}};
  return info;
}

void FaultInjectingBackend::run(const BenchmarkRequest& request, RunSink& sink,
                                const CancelFlag& cancel) {
  FaultSink faults(sink, options_, request);
  inner_->run(request, faults, cancel);
}

}  // namespace colltune
