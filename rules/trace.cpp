#include "rules/trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "core/file_text.h"
#include "core/text.h"

namespace colltune {
namespace {

struct FunctionEntry {
  std::string_view function;
  Collective collective;
  int algorithm;
};

// coll_tuned_<coll>_intra_do_this() dispatch tables of Open MPI 4.1.x. Function names differ
// from the MCA algorithm names (bintree = binary_tree, redscat_allgather = rabenseifner, ...).
constexpr FunctionEntry kFunctions[] = {
    {"allgather_intra_basic_linear", Collective::allgather, 1},
    {"allgather_intra_bruck", Collective::allgather, 2},
    {"allgather_intra_recursivedoubling", Collective::allgather, 3},
    {"allgather_intra_ring", Collective::allgather, 4},
    {"allgather_intra_neighborexchange", Collective::allgather, 5},
    {"allgather_intra_two_procs", Collective::allgather, 6},
    {"allgatherv_intra_basic_default", Collective::allgatherv, 1},
    {"allgatherv_intra_bruck", Collective::allgatherv, 2},
    {"allgatherv_intra_ring", Collective::allgatherv, 3},
    {"allgatherv_intra_neighborexchange", Collective::allgatherv, 4},
    {"allgatherv_intra_two_procs", Collective::allgatherv, 5},
    {"allreduce_intra_basic_linear", Collective::allreduce, 1},
    {"allreduce_intra_nonoverlapping", Collective::allreduce, 2},
    {"allreduce_intra_recursivedoubling", Collective::allreduce, 3},
    {"allreduce_intra_ring", Collective::allreduce, 4},
    {"allreduce_intra_ring_segmented", Collective::allreduce, 5},
    {"allreduce_intra_redscat_allgather", Collective::allreduce, 6},
    {"alltoall_intra_basic_linear", Collective::alltoall, 1},
    {"alltoall_intra_pairwise", Collective::alltoall, 2},
    {"alltoall_intra_bruck", Collective::alltoall, 3},
    {"alltoall_intra_linear_sync", Collective::alltoall, 4},
    {"alltoall_intra_two_procs", Collective::alltoall, 5},
    {"alltoallv_intra_basic_linear", Collective::alltoallv, 1},
    {"alltoallv_intra_pairwise", Collective::alltoallv, 2},
    {"barrier_intra_basic_linear", Collective::barrier, 1},
    {"barrier_intra_doublering", Collective::barrier, 2},
    {"barrier_intra_recursivedoubling", Collective::barrier, 3},
    {"barrier_intra_bruck", Collective::barrier, 4},
    {"barrier_intra_two_procs", Collective::barrier, 5},
    {"barrier_intra_tree", Collective::barrier, 6},
    {"bcast_intra_basic_linear", Collective::bcast, 1},
    {"bcast_intra_chain", Collective::bcast, 2},
    {"bcast_intra_pipeline", Collective::bcast, 3},
    {"bcast_intra_split_bintree", Collective::bcast, 4},
    {"bcast_intra_bintree", Collective::bcast, 5},
    {"bcast_intra_binomial", Collective::bcast, 6},
    {"bcast_intra_knomial", Collective::bcast, 7},
    {"bcast_intra_scatter_allgather", Collective::bcast, 8},
    {"bcast_intra_scatter_allgather_ring", Collective::bcast, 9},
    {"gather_intra_basic_linear", Collective::gather, 1},
    {"gather_intra_binomial", Collective::gather, 2},
    {"gather_intra_linear_sync", Collective::gather, 3},
    {"reduce_intra_basic_linear", Collective::reduce, 1},
    {"reduce_intra_chain", Collective::reduce, 2},
    {"reduce_intra_pipeline", Collective::reduce, 3},
    {"reduce_intra_binary", Collective::reduce, 4},
    {"reduce_intra_binomial", Collective::reduce, 5},
    {"reduce_intra_in_order_binary", Collective::reduce, 6},
    {"reduce_intra_redscat_gather", Collective::reduce, 7},
    {"reduce_scatter_intra_nonoverlapping", Collective::reduce_scatter, 1},
    {"reduce_scatter_intra_basic_recursivehalving", Collective::reduce_scatter, 2},
    {"reduce_scatter_intra_ring", Collective::reduce_scatter, 3},
    {"reduce_scatter_intra_butterfly", Collective::reduce_scatter, 4},
    {"reduce_scatter_block_basic_linear", Collective::reduce_scatter_block, 1},
    {"reduce_scatter_block_intra_recursivedoubling", Collective::reduce_scatter_block, 2},
    {"reduce_scatter_block_intra_recursivehalving", Collective::reduce_scatter_block, 3},
    {"reduce_scatter_block_intra_butterfly", Collective::reduce_scatter_block, 4},
    {"scatter_intra_basic_linear", Collective::scatter, 1},
    {"scatter_intra_binomial", Collective::scatter, 2},
    {"scatter_intra_linear_nb", Collective::scatter, 3},
};

std::optional<std::int64_t> parse_optional_int(std::string_view value, bool* ok) {
  if (value == "-") return std::nullopt;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  *ok = ec == std::errc() && ptr == value.data() + value.size();
  return v;
}

}  // namespace

std::optional<TracedAlgorithm> algorithm_for_function(std::string_view function) {
  constexpr std::string_view kPrefix = "ompi_coll_base_";
  if (function.substr(0, kPrefix.size()) == kPrefix) function.remove_prefix(kPrefix.size());
  if (function.empty()) return std::nullopt;
  for (const auto& entry : kFunctions)
    if (entry.function == function) return TracedAlgorithm{entry.collective, entry.algorithm};
  return std::nullopt;
}

std::string_view function_for_algorithm(Collective collective, int algorithm) {
  for (const auto& entry : kFunctions)
    if (entry.collective == collective && entry.algorithm == algorithm) return entry.function;
  return {};
}

TraceData parse_trace_text(std::string_view text, const std::string& source_name) {
  TraceData data;
  data.files.push_back(source_name);
  int line_number = 0;
  for (const std::string_view line : lines_of(text)) {
    ++line_number;
    if (line.empty()) continue;
    if (line.front() == '#') {
      // "# colltune-trace 1 rank=0 world_size=4 pid=1234 dropped=0"
      auto d = line.find("dropped=");
      if (d != std::string_view::npos) {
        int dropped = 0;
        std::from_chars(line.data() + d + 8, line.data() + line.size(), dropped);
        data.dropped += dropped;
      }
      continue;
    }
    TraceRecord record;
    record.source = source_name;
    bool have_fn = false, have_calls = false, have_bytes = false;
    std::size_t field_pos = 0;
    while (field_pos < line.size()) {
      std::size_t field_end = line.find(' ', field_pos);
      if (field_end == std::string_view::npos) field_end = line.size();
      std::string_view field = line.substr(field_pos, field_end - field_pos);
      field_pos = field_end + 1;
      if (field.empty()) continue;
      auto eq = field.find('=');
      if (eq == std::string_view::npos)
        throw TraceParseError(source_name, line_number,
                              "expected key=value, got '" + std::string(field) + "'");
      std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
      bool ok = true;
      if (key == "fn") {
        record.function = std::string(value);
        have_fn = !value.empty();
        continue;
      }
      auto number = parse_optional_int(value, &ok);
      if (!ok)
        throw TraceParseError(
            source_name, line_number,
            "bad number for " + std::string(key) + ": '" + std::string(value) + "'");
      std::int64_t v = number.value_or(0);
      if (key == "rank")
        record.rank = static_cast<int>(v);
      else if (key == "comm_size")
        record.comm_size = static_cast<int>(v);
      else if (key == "bytes") {
        record.bytes = v;
        have_bytes = number.has_value();
      } else if (key == "dtsize")
        record.dtsize = static_cast<int>(v);
      else if (key == "segsize")
        record.segsize = number;
      else if (key == "fanout")
        record.fanout = number;
      else if (key == "maxreq")
        record.max_requests = number;
      else if (key == "depth")
        record.depth = static_cast<int>(v);
      else if (key == "calls") {
        record.calls = v;
        have_calls = number.has_value();
      }
      // Unknown keys are ignored: newer tracers may add fields.
    }
    if (!have_fn || !have_calls || !have_bytes)
      throw TraceParseError(source_name, line_number, "a record needs fn, bytes and calls");
    data.records.push_back(std::move(record));
  }
  return data;
}

TraceData read_trace_dir(const std::filesystem::path& dir) {
  TraceData all;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return all;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string file_name = entry.path().filename().string();
    if (!entry.is_regular_file() || file_name.rfind("trace.", 0) != 0) continue;
    if (file_name.size() >= 4 && file_name.substr(file_name.size() - 4) == ".tmp") continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    const auto text = read_file_text(path);
    if (!text) throw std::runtime_error("cannot read trace file " + path.string());
    TraceData one = parse_trace_text(*text, path.string());
    all.records.insert(all.records.end(), one.records.begin(), one.records.end());
    all.files.push_back(path.string());
    all.dropped += one.dropped;
  }
  return all;
}

}  // namespace colltune
