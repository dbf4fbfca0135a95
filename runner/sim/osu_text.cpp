#include "runner/sim/osu_text.h"

#include <cstdio>
#include <stdexcept>

#include "osu/osu_command.h"
#include "runner/osu_probe.h"

namespace colltune::sim {

std::vector<std::int64_t> osu_message_sizes(Collective collective, std::int64_t min_size,
                                            std::int64_t max_size) {
  if (!has_message_size(collective)) return {0};
  std::vector<std::int64_t> sizes;
  if (is_reduction(collective)) {
    std::int64_t count = min_size / 4;
    if (count < 1) count = 1;
    for (; count * 4 <= max_size; count *= 2) sizes.push_back(count * 4);
  } else {
    for (std::int64_t s = min_size < 1 ? 1 : min_size; s <= max_size; s *= 2) sizes.push_back(s);
  }
  return sizes;
}

namespace {

std::string format(const char* fmt, auto... args) {
  char buf[128];
  const int n = std::snprintf(buf, sizeof buf, fmt, args...);
  return std::string(buf, static_cast<std::size_t>(n < 0 ? 0 : n));
}

}  // namespace

std::string format_osu_output(Collective collective, const std::vector<OsuRow>& rows, bool full,
                              std::string_view version) {
  const bool sized = has_message_size(collective);
  std::string out =
      "\n# " + std::string(osu_benchmark_title(collective)) + " v" + std::string(version) + "\n";
  out += sized ? format("%-10s%18s", "# Size", "Avg Latency(us)") : "# Avg Latency(us)";
  if (full) out += format("%18s%18s%12s", "Min Latency(us)", "Max Latency(us)", "Iterations");
  out += "\n";
  for (const OsuRow& row : rows) {
    out += sized ? format("%-10lld%18.2f", static_cast<long long>(row.size), row.avg_us)
                 : format("%17.2f", row.avg_us);
    if (full) {
      if (!row.min_us || !row.max_us || !row.iterations)
        throw std::invalid_argument("full OSU output needs min, max and iterations in every row");
      out += format("%18.2f%18.2f%12lld", *row.min_us, *row.max_us,
                    static_cast<long long>(*row.iterations));
    }
    out += "\n";
  }
  return out;
}

std::vector<std::string> osu_job_argv(const BenchmarkRequest& request,
                                      const std::map<std::string, std::string>& mca) {
  const int ppn =
      request.ppn > 0 ? request.ppn : (request.comm_size + request.nodes - 1) / request.nodes;
  std::vector<std::string> argv = {"mpirun", "-np", std::to_string(request.comm_size), "--map-by",
                                   "ppr:" + std::to_string(ppn) + ":node"};
  for (const auto& [key, value] : mca) {
    argv.push_back("--mca");
    argv.push_back(key);
    argv.push_back(value);
  }
  argv.push_back("osu_" + std::string(name(request.collective)));
  for (auto& a : osu_arguments(osu_options_for(request), 5)) argv.push_back(std::move(a));
  return argv;
}

double osu_run_seconds(const std::vector<OsuRow>& rows, int iterations, int warmup,
                       double launch_overhead_s) {
  double seconds = launch_overhead_s;
  for (const OsuRow& row : rows) seconds += (iterations + warmup) * row.avg_us * 1e-6;
  return seconds;
}

std::string mpi_abort_banner(Collective collective, std::string_view error_class,
                             std::string_view error_text, std::string_view host) {
  std::string coll(name(collective));
  if (!coll.empty()) coll[0] = static_cast<char>(coll[0] - 'a' + 'A');
  const std::string prefix = "[" + std::string(host) + ":00000] *** ";
  return prefix + "An error occurred in MPI_" + coll + "\n" + prefix +
         "reported by process [1,0]\n" + prefix + "on communicator MPI_COMM_WORLD\n" + prefix +
         std::string(error_class) + ": " + std::string(error_text) + "\n" + prefix +
         "MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n" + prefix +
         "   and potentially your MPI job)\n";
}

}  // namespace colltune::sim
