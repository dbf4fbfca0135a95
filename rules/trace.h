// Output of the colltune tracer (rules/tracer/colltune_tracer.c): which Open MPI coll/base
// algorithm functions really ran, per rank, and how the tracer's function names map to
// coll_tuned algorithm ids (Open MPI 4.1.x).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective.h"

namespace colltune {

struct TraceRecord {
  std::string function;    // e.g. "bcast_intra_binomial" (no "ompi_coll_base_" prefix)
  int rank = -1;           // MPI_COMM_WORLD rank of the process that wrote it
  int comm_size = -1;      // size of the communicator of the call
  std::int64_t bytes = 0;  // per-rank message bytes (type size x count; see the tracer)
  int dtsize = 0;          // datatype size
  std::optional<std::int64_t> segsize;       // argument value; nullopt when not an argument
  std::optional<std::int64_t> fanout;        // chain count (bcast/reduce chain), radix (knomial)
  std::optional<std::int64_t> max_requests;  // reduce, alltoall linear_sync, scatter linear_nb
  int depth = 0;  // 0 = called by the coll framework, >0 = inside another algorithm
  std::int64_t calls = 0;
  std::string source;  // file it came from
};

struct TraceData {
  std::vector<TraceRecord> records;
  std::vector<std::string> files;  // files read
  int dropped = 0;                 // records the tracer could not keep (table full)
};

class TraceParseError : public std::runtime_error {
 public:
  TraceParseError(const std::string& source, int line, const std::string& message)
      : std::runtime_error(source + ":" + std::to_string(line) + ": " + message),
        source_name(source),
        line_number(line) {}
  std::string source_name;
  int line_number;
};

// Parses one trace file's text; throws TraceParseError for a malformed line.
TraceData parse_trace_text(std::string_view text, const std::string& source_name = "trace");
// Reads every "trace.*" file (not "*.tmp") in `dir`, in name order. Throws on unreadable or
// malformed files; an empty or missing directory gives empty data.
TraceData read_trace_dir(const std::filesystem::path& dir);

// The coll_tuned algorithm a traced function implements (Open MPI 4.1.x ids), e.g.
// "bcast_intra_binomial" -> {bcast, 6}, "allreduce_intra_redscat_allgather" -> {allreduce, 6}.
// Accepts names with or without the "ompi_coll_base_" prefix. nullopt for functions that are
// not tuned algorithms of a collective colltune models (exscan, scan, generic helpers).
struct TracedAlgorithm {
  Collective collective;
  int algorithm;
};
std::optional<TracedAlgorithm> algorithm_for_function(std::string_view function);

// The base function name for (collective, algorithm id); empty when unknown.
std::string_view function_for_algorithm(Collective collective, int algorithm);

}  // namespace colltune
