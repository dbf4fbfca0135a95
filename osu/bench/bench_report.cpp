#include "osu/bench/bench_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

namespace colltune::osu_bench {
namespace {

// OMB's print widths (FIELD_WIDTH, FLOAT_PRECISION, and the literals in print_preamble and
// print_stats). FIELD_WIDTH is 18 in the bytes real OMB 5.6.2 and 5.7 print ("# Size" + 7
// spaces + "Avg Latency(us)" = 28 characters; -f lines are 76), not the 20 of some sources.
constexpr int kFieldWidth = 18;
constexpr int kSizeWidth = 10;
constexpr int kBarrierAvgWidth = 17;
constexpr int kIterationsWidth = 12;
constexpr int kPrecision = 2;

struct Titles {
  Collective collective;
  std::string_view title;
  std::string_view header;  // "# " title " v" version "\n" as one literal (see the version macro)
};

#define COLLTUNE_OSU_TITLE(name)   \
  "OSU MPI " name " Latency Test", \
      "# OSU MPI " name " Latency Test v" COLLTUNE_OSU_BENCH_VERSION "\n"

constexpr std::array<Titles, 9> kTitles{{
    {Collective::bcast, COLLTUNE_OSU_TITLE("Broadcast")},
    {Collective::allreduce, COLLTUNE_OSU_TITLE("Allreduce")},
    {Collective::reduce, COLLTUNE_OSU_TITLE("Reduce")},
    {Collective::gather, COLLTUNE_OSU_TITLE("Gather")},
    {Collective::scatter, COLLTUNE_OSU_TITLE("Scatter")},
    {Collective::allgather, COLLTUNE_OSU_TITLE("Allgather")},
    {Collective::alltoall, COLLTUNE_OSU_TITLE("All-to-All Personalized Exchange")},
    {Collective::barrier, COLLTUNE_OSU_TITLE("Barrier")},
    {Collective::reduce_scatter, COLLTUNE_OSU_TITLE("Reduce_scatter")},
}};

#undef COLLTUNE_OSU_TITLE

const Titles& titles(Collective c) {
  for (const auto& entry : kTitles)
    if (entry.collective == c) return entry;
  return kTitles[0];
}

// printf into a string. The buffer fits any of our formats, even three %.2f of DBL_MAX.
template <typename... Args>
std::string format(const char* fmt, Args... args) {
  char buffer[2048];
  const int length = std::snprintf(buffer, sizeof buffer, fmt, args...);
  return std::string(buffer, static_cast<std::size_t>(std::max(length, 0)));
}

}  // namespace

std::string_view benchmark_title(Collective c) { return titles(c).title; }

std::string_view header_line(Collective c) { return titles(c).header; }

std::string preamble(const BenchOptions& options) {
  std::string out = "\n";
  out += header_line(options.collective);
  if (options.type)
    out += format("# Datatype: %s.\n", std::string(mpi_type_name(*options.type)).c_str());
  if (has_message_size(options.collective)) {
    out += format("%-*s", kSizeWidth, "# Size");
    out += format("%*s", kFieldWidth, "Avg Latency(us)");
  } else {
    out += "# Avg Latency(us)";
  }
  if (options.full) {
    out += format("%*s", kFieldWidth, "Min Latency(us)");
    out += format("%*s", kFieldWidth, "Max Latency(us)");
    out += format("%*s", kIterationsWidth, "Iterations");
  }
  if (options.validate) out += format("%*s", kFieldWidth, "Validation");
  out += "\n";
  return out;
}

std::string data_line(const BenchOptions& options, std::int64_t size, double avg_us, double min_us,
                      double max_us, std::int64_t iterations,
                      std::optional<bool> validation_passed) {
  std::string out;
  if (has_message_size(options.collective)) {
    out += format("%-*d", kSizeWidth, static_cast<int>(size));
    out += format("%*.*f", kFieldWidth, kPrecision, avg_us);
  } else {
    out += format("%*.*f", kBarrierAvgWidth, kPrecision, avg_us);
  }
  if (options.full) {
    out += format("%*.*f%*.*f%*lu", kFieldWidth, kPrecision, min_us, kFieldWidth, kPrecision,
                  max_us, kIterationsWidth, static_cast<unsigned long>(iterations));
  }
  if (validation_passed) out += format("%*s", kFieldWidth, *validation_passed ? "Pass" : "Fail");
  out += "\n";
  return out;
}

std::string validation_error_line(const BenchOptions& options, std::int64_t size) {
  return format("DATA VALIDATION ERROR: %s exited with status %d on message size %d.\n",
                options.benchmark_name.c_str(), EXIT_FAILURE, static_cast<int>(size));
}

std::string help_text(const BenchOptions& options) {
  std::string out;
  out += format("Usage: %s [options]\n", options.benchmark_name.c_str());
  out += "Options:\n";
  if (has_message_size(options.collective)) {
    out +=
        "  -m, --message-size          [MIN:]MAX  set the minimum and/or the maximum message "
        "size to MIN and/or MAX\n"
        "                              bytes respectively. Examples:\n"
        "                              -m 128      // min = default, max = 128\n"
        "                              -m 2:128    // min = 2, max = 128\n"
        "                              -m 2:       // min = 2, max = default\n";
    out +=
        "  -M, --mem-limit SIZE        set per process maximum memory consumption to SIZE "
        "bytes\n";
    out += format("                              (default %lld)\n",
                  static_cast<long long>(kMaxMemLimit));
  }
  out +=
      "  -i, --iterations ITER       set iterations per message size to ITER (default 1000 for "
      "small\n"
      "                              messages, 100 for large messages)\n"
      "  -x, --warmup ITER           set number of warmup iterations to skip before timing "
      "(default 100\n"
      "                              for small messages, 10 for large messages)\n"
      "  -f, --full                  print full format listing (MIN/MAX latency and "
      "ITERATIONS\n"
      "                              displayed in addition to AVERAGE latency)\n";
  if (options.collective != Collective::barrier) {
    out +=
        "  -T, --type TYPE             element type: mpi_char, mpi_int or mpi_float (default "
        "mpi_char;\n"
        "                              reductions: mpi_float with MPI_SUM, as OMB 5.x)\n"
        "  -c, --validation            check the data of one extra call per message size\n";
  }
  out +=
      "  -h, --help                  print this help\n"
      "  -v, --version               print version info\n"
      "\n";
  return out;
}

std::string bad_usage_text(const BadUsage& bad_usage) {
  if (bad_usage.argument)
    return bad_usage.message + " [-" + bad_usage.option + " " + *bad_usage.argument + "]\n\n";
  return bad_usage.message + " [-" + bad_usage.option + "]\n\n";
}

std::string mem_limit_raised_text() {
  return format("Requested memory limit too low, using [%lld] instead.\n",
                static_cast<long long>(kMinMemLimit));
}

}  // namespace colltune::osu_bench
