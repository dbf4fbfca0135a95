// Command line of colltune-osu-bench, the bundled OSU Micro-Benchmarks-compatible collective
// latency benchmark (see docs/reference/osu-benchmarks.md §1-§4).
//
// The command line is OMB 5.6.2's for blocking collectives (-m, -i, -x, -f, -M, -h, -v) plus
// OMB 7.x's -T TYPE and OMB 6.x's -c (validation). The collective comes from the program name
// (`osu_bcast ...`, through the links the build creates) or from the first argument
// (`colltune-osu-bench bcast ...`). Parsing is pure (no MPI, no output): main() prints what
// the result says on rank 0 after MPI_Init, as OMB does.
//
// Deliberate differences from OMB 5.6.2, all on invalid input only: numbers are parsed strictly
// ("-m foo", "-i 10x" are errors, where OMB's atoi/atoll silently read 0 or 10), "-m MIN:MAX"
// with MIN > MAX or a size above INT_MAX is an error, and "-M foo" is an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective.h"

namespace colltune::osu_bench {

// The version printed in the header. Keeps OMB 5.6.2's output format, and says it is not OMB.
// A macro so header literals can be built by string-literal concatenation: the binary then
// holds "... Latency Test v5.6.2-colltune", which detect_omb_major_version() reads as 5.
#define COLLTUNE_OSU_BENCH_VERSION "5.6.2-colltune"

// OMB's defaults (osu_util.h of 5.x-7.x).
inline constexpr std::int64_t kMinMessageSize = 1;               // MIN_MESSAGE_SIZE
inline constexpr std::int64_t kMaxMessageSizeColl = 1 << 20;     // MAX_MSG_SIZE_COLL
inline constexpr std::int64_t kLargeMessageSize = 8192;          // LARGE_MESSAGE_SIZE
inline constexpr int kIterationsSmall = 1000;                    // COLL_LOOP_SMALL
inline constexpr int kIterationsLarge = 100;                     // COLL_LOOP_LARGE
inline constexpr int kWarmupSmall = 100;                         // COLL_SKIP_SMALL
inline constexpr int kWarmupLarge = 10;                          // COLL_SKIP_LARGE
inline constexpr std::int64_t kMaxMemLimit = 512 * 1024 * 1024;  // MAX_MEM_LIMIT
inline constexpr std::int64_t kMinMemLimit = 1 * 1024 * 1024;    // MAX_MEM_LOWER_LIMIT

// The collectives this benchmark runs (OMB's blocking collective latency tests that colltune
// tunes), in a fixed order used for listings.
const std::vector<Collective>& supported_collectives();
bool is_supported(Collective c);

// -T: element type of the buffers (OMB 7.x). Without -T: MPI_CHAR, except MPI_FLOAT for the
// reductions (OMB 5.x-6.x behaviour).
enum class ElementType { mpi_char, mpi_int, mpi_float };
std::string_view mpi_type_name(ElementType t);  // "MPI_CHAR", ...
int type_size(ElementType t);                   // bytes per element

struct BenchOptions {
  Collective collective = Collective::bcast;
  std::string benchmark_name;  // "osu_bcast": used in help and validation messages
  std::int64_t min_size = kMinMessageSize;
  std::int64_t max_size = kMaxMessageSizeColl;
  int iterations_small = kIterationsSmall;  // -i sets both
  int iterations_large = kIterationsLarge;
  int warmup_small = kWarmupSmall;  // -x sets both
  int warmup_large = kWarmupLarge;
  bool full = false;  // -f
  std::int64_t mem_limit = kMaxMemLimit;
  bool mem_limit_raised = false;    // -M below kMinMemLimit was raised to it (OMB warns)
  std::optional<ElementType> type;  // -T
  bool validate = false;            // -c
};

// The element type a run uses (explicit -T or the collective's OMB 5.x default).
ElementType effective_type(const BenchOptions& options);

// OMB's bad-usage report: "<message> [-<opt> <optarg>]" or "<message> [-<opt>]".
struct BadUsage {
  std::string message;  // e.g. "Invalid Message Size"
  std::string option;   // "m" for -m, "-message-size" for --message-size
  std::optional<std::string> argument;
};

enum class CommandKind {
  run,            // options are valid: run the benchmark
  help,           // -h: OMB help on stdout, exit success
  version,        // -v: header line on stdout, exit success
  bad_usage,      // OMB bad usage: message on stderr, help on stdout, exit failure
  program_help,   // `colltune-osu-bench -h`: list of collectives on stdout, exit success
  program_error,  // no or unknown collective: `error` and the program usage on stderr, failure
};

struct ParsedCommand {
  CommandKind kind = CommandKind::run;
  BenchOptions options;  // valid for run/help/version/bad_usage (collective known)
  BadUsage bad_usage;    // for bad_usage
  std::string error;     // for program_error
};

// Parses argv (argv[0] included). Never throws on bad input.
ParsedCommand parse_command_line(const std::vector<std::string>& argv);

// `colltune-osu-bench` usage: how to name a collective, and which ones exist.
std::string program_usage();

// One message size of a sweep.
struct SizeStep {
  std::int64_t bytes = 0;  // printed in the Size column
  std::int64_t count = 0;  // elements passed to MPI
  bool large = false;      // use iterations_large/warmup_large (sticky from here on, as OMB)
};

// The sizes OMB would run for these options up to `max_size` bytes:
// - reductions without -T (OMB 5.x): MPI_FLOAT elements, count from max(1, min/4) doubling
//   while count*4 <= max; printed size count*4; "large" when count > 8192 (OMB 5.x compares the
//   element count with LARGE_MESSAGE_SIZE, so 16 and 32 KiB still use the small-size counts);
// - otherwise: bytes from min doubling while <= max; sizes below the element size are skipped
//   (OMB 7.x); count = bytes / element size; "large" when bytes > 8192.
// Empty for barrier.
std::vector<SizeStep> message_sizes(const BenchOptions& options, std::int64_t max_size);

// OMB 5.x osu_reduce_scatter's recvcounts for `count` elements over `comm_size` ranks: the
// first `count` ranks get 1 when count < comm_size; otherwise count/comm_size each, +1 for the
// ranks below the remainder.
std::vector<int> reduce_scatter_counts(int count, int comm_size);

// OMB 5.x's per-process memory check for `comm_size` ranks: gather, scatter, allgather and
// alltoall hold size*P bytes, so their max size drops to mem_limit/P; the others drop to
// mem_limit. `warning` is set when the max size was reduced (OMB 5.x only warns for the
// latter; we warn for both, on stderr).
struct MemoryCap {
  std::int64_t max_size = 0;
  std::optional<std::string> warning;
};
MemoryCap apply_memory_limit(const BenchOptions& options, int comm_size);

}  // namespace colltune::osu_bench
