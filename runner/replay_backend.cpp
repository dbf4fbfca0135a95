#include "runner/replay_backend.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "core/algorithm_table.h"
#include "core/file_text.h"
#include "core/rng.h"
#include "core/text.h"
#include "runner/local_backend.h"
#include "runner/mca.h"
#include "runner/process.h"
#include "runner/sim/noise.h"
#include "runner/sim/osu_text.h"
#include "runner/sim/virtual_runs.h"

namespace colltune {

namespace {

// Splits one CSV record (RFC 4180 quoting; no newlines inside fields).
std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else {
      field += ch;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

template <typename T>
std::optional<T> parse_number(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// Extra MCA parameters other than the ones every run already has.
bool extra_mca_changes_runs(const BenchmarkRequest& request) {
  const auto base = base_mca();
  for (const auto& [key, value] : request.extra_mca) {
    const auto same = base.find(key);
    if (same == base.end() || same->second != value) return true;
  }
  return false;
}

}  // namespace

TuningConfig ReplayDataset::canonical(Collective collective, const TuningConfig& config) {
  TuningConfig c = config;
  if (c.algorithm == 0) return TuningConfig::default_decision();
  if (const auto* algs = AlgorithmTable::builtin_4_1().find(collective)) {
    if (const auto* info = algs->find(c.algorithm)) {
      if (!info->uses_segsize) c.segsize = 0;
      if (!info->uses_fanout) c.fanout = 0;
    }
  }
  return c;
}

ReplayDataset ReplayDataset::load_csv(const std::filesystem::path& path, const Filter& where) {
  const auto text = read_file_text(path);
  if (!text) throw std::invalid_argument("cannot open replay landscape " + path.string());
  return parse_csv(*text, where, path.string());
}

ReplayDataset ReplayDataset::parse_csv(std::string_view text, const Filter& where,
                                       std::string source) {
  ReplayDataset d;
  d.source_ = std::move(source);
  std::istringstream in{std::string(text)};
  std::string line;
  int line_number = 0;
  auto fail = [&](const std::string& what) -> void {
    throw std::invalid_argument(d.source_ + ":" + std::to_string(line_number) + ": " + what);
  };
  // Header.
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++line_number;
    if (!trim_copy(line).empty()) {
      for (auto& h : split_csv_line(line)) header.push_back(trim_copy(h));
      break;
    }
  }
  if (header.empty()) fail("no header row");
  auto column = [&](std::initializer_list<const char*> names) -> int {
    for (const char* n : names)
      for (std::size_t i = 0; i < header.size(); ++i)
        if (header[i] == n) return static_cast<int>(i);
    return -1;
  };
  const int c_coll = column({"collective", "coll"});
  const int c_size = column({"comm_size", "nranks", "np", "ranks"});
  const int c_alg = column({"algorithm", "alg_id", "alg"});
  const int c_seg = column({"segsize", "segment_size"});
  const int c_fan = column({"fanout", "chain_fanout"});
  const int c_msg = column({"msg_size", "msg_size_bytes", "size"});
  const int c_lat = column({"latency_us", "avg_latency_us", "avg_us"});
  const int c_nodes = column({"nodes", "nnodes"});
  const int c_min = column({"min_latency_us", "min_us"});
  const int c_max = column({"max_latency_us", "max_us"});
  const int c_iter = column({"iterations"});
  std::string missing;
  if (c_coll < 0) missing += " collective";
  if (c_size < 0) missing += " comm_size";
  if (c_alg < 0) missing += " algorithm";
  if (c_msg < 0) missing += " msg_size";
  if (c_lat < 0) missing += " latency_us";
  if (!missing.empty()) fail("missing column(s):" + missing);
  d.has_nodes_ = c_nodes >= 0;
  std::vector<std::pair<int, std::string>> filters;
  for (const auto& [col, value] : where) {
    int i = -1;
    for (std::size_t k = 0; k < header.size(); ++k)
      if (header[k] == col) i = static_cast<int>(k);
    if (i < 0) fail("filter column \"" + col + "\" is not in the header");
    filters.emplace_back(i, value);
  }

  while (std::getline(in, line)) {
    ++line_number;
    if (trim_copy(line).empty()) continue;
    auto fields = split_csv_line(line);
    for (auto& f : fields) f = trim_copy(f);
    if (fields.size() < header.size()) fail("row has fewer fields than the header");
    bool keep = true;
    for (const auto& [i, value] : filters)
      if (fields[i] != value) keep = false;
    if (!keep) continue;
    auto integer = [&](int col, const char* what, bool optional) -> std::int64_t {
      if (col < 0 || (optional && fields[col].empty())) return 0;
      const auto v = parse_number<std::int64_t>(fields[col]);
      if (!v || *v < 0) fail(std::string("bad ") + what + " \"" + fields[col] + "\"");
      return *v;
    };
    Key key{};
    const std::string& coll_text = fields[c_coll];
    std::optional<Collective> coll = parse_collective(coll_text);
    if (!coll) {
      if (const auto id = parse_number<int>(coll_text)) coll = collective_from_ompi_id(*id);
    }
    if (!coll) fail("unknown collective \"" + coll_text + "\"");
    key.collective = static_cast<int>(*coll);
    key.comm_size = static_cast<int>(integer(c_size, "comm_size", false));
    key.nodes = c_nodes >= 0 ? static_cast<int>(integer(c_nodes, "nodes", true)) : -1;
    TuningConfig config;
    config.algorithm = static_cast<int>(integer(c_alg, "algorithm", false));
    config.segsize = static_cast<int>(integer(c_seg, "segsize", true));
    config.fanout = static_cast<int>(integer(c_fan, "fanout", true));
    config = canonical(*coll, config);
    key.algorithm = config.algorithm;
    key.segsize = config.segsize;
    key.fanout = config.fanout;
    key.msg_size = has_message_size(*coll) ? integer(c_msg, "msg_size", false) : 0;
    ReplayValue value;
    const auto avg = parse_number<double>(fields[c_lat]);
    if (!avg || !std::isfinite(*avg) || *avg < 0) fail("bad latency_us \"" + fields[c_lat] + "\"");
    value.avg_us = *avg;
    auto optional_double = [&](int col) -> std::optional<double> {
      if (col < 0 || fields[col].empty()) return std::nullopt;
      const auto v = parse_number<double>(fields[col]);
      if (!v || !std::isfinite(*v) || *v < 0) fail("bad number \"" + fields[col] + "\"");
      return v;
    };
    value.min_us = optional_double(c_min);
    value.max_us = optional_double(c_max);
    if (c_iter >= 0 && !fields[c_iter].empty())
      value.iterations = integer(c_iter, "iterations", true);
    d.cells_[key].push_back(value);
    ++d.rows_;
  }
  return d;
}

const std::vector<ReplayValue>* ReplayDataset::find(Collective collective, int comm_size, int nodes,
                                                    const TuningConfig& config,
                                                    std::int64_t msg_size) const {
  const TuningConfig c = canonical(collective, config);
  const Key key{static_cast<int>(collective),
                comm_size,
                has_nodes_ ? nodes : -1,
                c.algorithm,
                c.segsize,
                c.fanout,
                has_message_size(collective) ? msg_size : 0};
  const auto it = cells_.find(key);
  return it == cells_.end() ? nullptr : &it->second;
}

std::vector<ReplayDataset::Cell> ReplayDataset::cells() const {
  std::vector<Cell> out;
  out.reserve(cells_.size());
  for (const auto& [key, values] : cells_)
    out.push_back({static_cast<Collective>(key.collective), key.comm_size, key.nodes,
                   TuningConfig{key.algorithm, key.segsize, key.fanout}, key.msg_size, &values});
  return out;
}

std::set<std::pair<int, int>> ReplayDataset::placements(Collective collective) const {
  std::set<std::pair<int, int>> out;
  for (const auto& [key, values] : cells_)
    if (key.collective == static_cast<int>(collective)) out.emplace(key.comm_size, key.nodes);
  return out;
}

std::set<TuningConfig> ReplayDataset::configs(Collective collective, int comm_size) const {
  std::set<TuningConfig> out;
  for (const auto& [key, values] : cells_)
    if (key.collective == static_cast<int>(collective) && key.comm_size == comm_size)
      out.insert({key.algorithm, key.segsize, key.fanout});
  return out;
}

ReplayBackend::ReplayBackend(ReplayDataset dataset, ReplayBackendOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  if (options_.launch_overhead_s < 0)
    throw std::invalid_argument("replay launch overhead must be >= 0");
}

BackendInfo ReplayBackend::describe() {
  BackendInfo info;
  info.backend = "replay";
  info.host = "replay:" + std::filesystem::path(dataset_.source()).filename().string();
  info.ompi_version = options_.ompi_version;
  info.benchmark = "recorded OSU landscape " + dataset_.source();
  info.extra = {{"source", dataset_.source()},
                {"rows", dataset_.rows()},
                {"seed", options_.seed},
                {"launch_overhead_s", options_.launch_overhead_s},
                {"virtual_clock", options_.virtual_clock},
                {"cost_model",
                 "launch_overhead_s + sum over sizes of (iterations + warmup) x recorded latency"}};
  return info;
}

void ReplayBackend::run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) {
  validate_request(request);
  const auto sizes = sim::osu_message_sizes(request.collective, request.min_size, request.max_size);
  sim::VirtualBatchInfo info;
  info.backend = "replay";
  info.host = "replay:" + std::filesystem::path(dataset_.source()).filename().string();
  info.ompi_version = options_.ompi_version;
  info.osu_version = options_.osu_version;
  info.launch_overhead_s = options_.launch_overhead_s;
  info.virtual_clock = options_.virtual_clock;
  const std::string refuse =
      extra_mca_changes_runs(request)
          ? "a recorded landscape has no runs with these extra MCA parameters"
          : "";
  sim::run_virtual_batch(
      request, sink, cancel, info, clock_, refuse, [&](std::size_t index, int repeat) {
        const TuningConfig& config = request.configs[index];
        const TuningConfig recorded = ReplayDataset::canonical(request.collective, config);
        const std::uint64_t draw_seed = sim::mix_seed(
            sim::mix_seed(sim::mix_seed(sim::mix_seed(options_.seed, request.tag),
                                        static_cast<std::uint64_t>(recorded.algorithm)),
                          static_cast<std::uint64_t>(recorded.segsize)),
            static_cast<std::uint64_t>(recorded.fanout));
        sim::VirtualAnswer a;
        std::vector<std::int64_t> missing;
        for (std::int64_t size : sizes) {
          const auto* values =
              dataset_.find(request.collective, request.comm_size, request.nodes, config, size);
          if (!values || values->empty()) {
            missing.push_back(size);
            continue;
          }
          // The same permutation for every size with the same number of repeats, so a run
          // reads one recorded run when the recording is complete.
          std::vector<std::size_t> perm(values->size());
          for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
          Rng rng(sim::mix_seed(draw_seed, static_cast<std::uint64_t>(values->size())));
          rng.shuffle(perm);
          const ReplayValue& v = (*values)[perm[static_cast<std::size_t>(repeat) % perm.size()]];
          OsuRow row;
          row.size = size;
          row.avg_us = v.avg_us;
          row.min_us = v.min_us;
          row.max_us = v.max_us;
          row.iterations = v.iterations;
          if (!row.min_us || !row.max_us || !row.iterations) a.full = false;
          a.rows.push_back(row);
        }
        if (!missing.empty()) {
          a.outcome = RunOutcome::unavailable;
          std::string sizes_text;
          for (std::size_t i = 0; i < missing.size() && i < 6; ++i)
            sizes_text += (i ? ", " : "") + std::to_string(missing[i]);
          if (missing.size() > 6) sizes_text += ", ...";
          a.error = "not recorded: " + std::string(colltune::name(request.collective)) +
                    " P=" + std::to_string(request.comm_size) +
                    (dataset_.has_nodes() ? " nodes=" + std::to_string(request.nodes) : "") + " " +
                    to_string(config) + " at size(s) " + sizes_text;
          if (a.rows.empty()) {
            const auto known = dataset_.configs(request.collective, request.comm_size);
            a.error += known.empty() ? " (no recording at this comm size)"
                                     : " (" + std::to_string(known.size()) +
                                           " configurations recorded at this comm size)";
          }
          return a;  // the sizes that were recorded are real measurements: kept in the result
        }
        if (!a.full)
          for (auto& row : a.rows) {
            row.min_us.reset();
            row.max_us.reset();
            row.iterations.reset();
          }
        return a;
      });
}

}  // namespace colltune
