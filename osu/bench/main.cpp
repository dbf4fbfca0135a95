// colltune-osu-bench: OSU Micro-Benchmarks-compatible collective latency benchmark.
//
// Runs like OMB 5.6.2's osu_<collective> (options, timing method, workloads, output bytes) so
// colltune's runner can use it where no real OMB is installed. Timing, as OMB: per message size,
// warm-up calls are excluded; each call is timed alone with MPI_Wtime (t0; collective; t1) and
// followed by an untimed MPI_Barrier (barrier itself: no extra barrier); each rank's latency is
// the mean over the timed calls in µs; rank 0 prints the MPI_Reduce MIN, MAX and SUM/P of those.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "osu/bench/bench_options.h"
#include "osu/bench/bench_report.h"
#include "osu/bench/workload.h"

namespace colltune::osu_bench {
namespace {

void write(std::FILE* stream, std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stream);
  std::fflush(stream);  // a crash later still leaves every earlier line in the output
}

// Per-rank mean latency in µs of `iterations` timed calls after `warmup` untimed ones.
double mean_latency_us(Workload& workload, int iterations, int warmup, bool barrier_between) {
  double timer = 0.0;
  for (int i = 0; i < iterations + warmup; ++i) {
    const double t_start = MPI_Wtime();
    workload.run();
    const double t_stop = MPI_Wtime();
    if (i >= warmup) timer += t_stop - t_start;
    if (barrier_between) MPI_Barrier(MPI_COMM_WORLD);
  }
  return timer * 1e6 / iterations;
}

struct Latency {
  double avg = 0, min = 0, max = 0;  // meaningful on rank 0
};

Latency reduce_to_root(double latency, int comm_size) {
  Latency out;
  double sum = 0;
  MPI_Reduce(&latency, &out.min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&latency, &out.max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&latency, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  out.avg = sum / comm_size;
  return out;
}

// One untimed call with rank-dependent data; true when every rank got what it should.
bool validate(Workload& workload) {
  workload.fill_for_validation();
  MPI_Barrier(MPI_COMM_WORLD);
  workload.run();
  int local_ok = workload.check_validation() ? 1 : 0;
  int all_ok = 0;
  MPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all_ok == 1;
}

// Runs the benchmark; returns the process exit status.
int run(const BenchOptions& options, int rank, int comm_size) {
  if (options.mem_limit_raised && rank == 0) write(stderr, mem_limit_raised_text());
  const MemoryCap cap = apply_memory_limit(options, comm_size);
  if (cap.warning && rank == 0) write(stderr, *cap.warning);
  const std::vector<SizeStep> steps = message_sizes(options, cap.max_size);
  const std::int64_t max_count = steps.empty() ? 0 : steps.back().count;

  std::unique_ptr<Workload> workload;
  try {
    workload = make_workload(options, MPI_COMM_WORLD, max_count);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "Could Not Allocate Memory [rank %d]\n", rank);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
  }

  if (rank == 0) write(stdout, preamble(options));

  if (options.collective == Collective::barrier) {
    // OMB's osu_barrier always uses the large-message counts (default 100 timed, 10 warm-up).
    const double latency = mean_latency_us(*workload, options.iterations_large,
                                           options.warmup_large, /*barrier_between=*/false);
    MPI_Barrier(MPI_COMM_WORLD);
    const Latency stats = reduce_to_root(latency, comm_size);
    if (rank == 0)
      write(stdout,
            data_line(options, 0, stats.avg, stats.min, stats.max, options.iterations_large));
    return EXIT_SUCCESS;
  }

  int iterations = options.iterations_small;
  int warmup = options.warmup_small;
  for (const SizeStep& step : steps) {
    if (step.large) {  // sticky, as in OMB's loop
      iterations = options.iterations_large;
      warmup = options.warmup_large;
    }
    workload->set_count(step.count);
    MPI_Barrier(MPI_COMM_WORLD);
    const double latency = mean_latency_us(*workload, iterations, warmup, true);
    const Latency stats = reduce_to_root(latency, comm_size);
    std::optional<bool> passed;
    if (options.validate) passed = validate(*workload);
    if (rank == 0)
      write(stdout,
            data_line(options, step.bytes, stats.avg, stats.min, stats.max, iterations, passed));
    if (passed == false) {
      if (rank == 0) write(stdout, validation_error_line(options, step.bytes));
      return EXIT_FAILURE;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  return EXIT_SUCCESS;
}

// Everything but a benchmark run: what to print, where, and the exit status.
int report(const ParsedCommand& command, int rank) {
  const bool printer = rank == 0;
  switch (command.kind) {
    case CommandKind::program_help:
      if (printer) write(stdout, program_usage());
      return EXIT_SUCCESS;
    case CommandKind::program_error:
      if (printer) write(stderr, "colltune-osu-bench: " + command.error + "\n" + program_usage());
      return EXIT_FAILURE;
    case CommandKind::help:
      if (printer) write(stdout, help_text(command.options));
      return EXIT_SUCCESS;
    case CommandKind::version:
      if (printer) write(stdout, header_line(command.options.collective));
      return EXIT_SUCCESS;
    case CommandKind::bad_usage:
      if (printer) {
        write(stderr, bad_usage_text(command.bad_usage));
        write(stdout, help_text(command.options));
      }
      return EXIT_FAILURE;
    case CommandKind::run:
      break;
  }
  return EXIT_SUCCESS;
}

}  // namespace
}  // namespace colltune::osu_bench

int main(int argc, char** argv) {
  using namespace colltune::osu_bench;
  // Options are parsed before MPI_Init and reported after it on rank 0 only, as OMB does.
  const ParsedCommand command = parse_command_line(std::vector<std::string>(argv, argv + argc));
  MPI_Init(&argc, &argv);
  int rank = 0;
  int comm_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &comm_size);

  int status = EXIT_SUCCESS;
  if (command.kind != CommandKind::run) {
    status = report(command, rank);
  } else if (comm_size < 2) {
    if (rank == 0) write(stderr, kTooFewProcesses);
    status = EXIT_FAILURE;
  } else {
    status = run(command.options, rank, comm_size);
  }
  MPI_Finalize();
  return status;
}
