#include "rules/rules_show.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "rules/rules_reader.h"
#include "rules/rules_writer.h"

namespace colltune {
namespace {

constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();

std::string coll_label(int id) {
  if (auto c = collective_from_ompi_id(id)) return std::string(name(*c));
  std::string_view json_name = ompi_json_collective_name(id);
  return json_name.empty() ? "id " + std::to_string(id) : std::string(json_name);
}

bool key_times_p(int id) {
  auto c = collective_from_ompi_id(id);
  return c && rules_key_for_osu_size(*c, 1, 2) == 2;
}

std::string bytes_range(std::int64_t begin, std::int64_t end) {
  if (end == kOpen) return ">= " + human_bytes(begin);
  if (end <= begin + 1) return human_bytes(begin);  // one measured size: [s, s + 1)
  return human_bytes(begin) + " - " + human_bytes(end);
}

std::string ranks_range(std::int64_t begin, std::int64_t end) {
  if (end == kOpen) return std::to_string(begin) + "+ ranks";
  if (end - 1 == begin) return std::to_string(begin) + " ranks";
  return std::to_string(begin) + "-" + std::to_string(end - 1) + " ranks";
}

}  // namespace

std::vector<ShowRow> show_rows(const RulesModel& model, const AlgorithmTable& algorithms) {
  std::vector<ShowRow> rows;
  for (const auto& coll : model.collectives) {
    if (model.find(coll.collective_id) != &coll) continue;  // replaced by a later entry
    auto coll_enum = collective_from_ompi_id(coll.collective_id);
    const std::vector<SizeRange> comm_ranges = block_comm_ranges(coll);
    for (std::size_t b = 0; b < coll.blocks.size(); ++b) {
      const CommSizeBlock& block = coll.blocks[b];
      SizeRange comm = comm_ranges[b];
      ShowRow base;
      base.collective_id = coll.collective_id;
      base.collective = coll_label(coll.collective_id);
      base.comm_begin = std::max<std::int64_t>(comm.begin, 2);
      base.comm_end = comm.end;
      base.reachable = comm.end > base.comm_begin;
      base.key_is_per_rank_times_p = key_times_p(coll.collective_id);
      if (block.rules.empty()) {
        base.key_end = kOpen;
        base.per_rank_end = kOpen;
        base.algorithm_name = "default";
        rows.push_back(base);
        continue;
      }
      const std::vector<SizeRange> key_ranges = rule_key_ranges(block);
      for (std::size_t r = 0; r < block.rules.size(); ++r) {
        const MessageRule& rule = block.rules[r];
        SizeRange keys = key_ranges[r];
        ShowRow row = base;
        row.has_rule = true;
        row.key_begin = keys.begin;
        row.key_end = keys.end;
        row.reachable = base.reachable && !keys.empty();
        std::int64_t p = std::max<std::int64_t>(base.comm_begin, 1);
        row.per_rank_begin = row.key_is_per_rank_times_p ? keys.begin / p : keys.begin;
        row.per_rank_end =
            row.key_is_per_rank_times_p && keys.end != kOpen ? keys.end / p : keys.end;
        row.algorithm = rule.algorithm;
        row.algorithm_name =
            coll_enum ? algorithms.algorithm_name(*coll_enum, rule.algorithm)
                      : (rule.algorithm ? "alg" + std::to_string(rule.algorithm) : "default");
        row.segsize = rule.segsize;
        row.fanout = rule.fanout;
        row.max_requests = rule.max_requests;
        rows.push_back(row);
      }
    }
  }
  return rows;
}

std::string format_rules_table(const RulesModel& model, const AlgorithmTable& algorithms) {
  std::ostringstream out;
  std::vector<ShowRow> rows = show_rows(model, algorithms);
  if (rows.empty()) return "no rules: every collective uses Open MPI's fixed decision\n";
  std::size_t i = 0;
  while (i < rows.size()) {
    const int id = rows[i].collective_id;
    out << rows[i].collective << " (id " << id << ")";
    if (rows[i].key_is_per_rank_times_p) out << "  [size = bytes per rank x ranks]";
    out << "\n";
    while (i < rows.size() && rows[i].collective_id == id) {
      const std::int64_t comm_begin = rows[i].comm_begin, comm_end = rows[i].comm_end;
      std::size_t j = i;
      while (j < rows.size() && rows[j].collective_id == id && rows[j].comm_begin == comm_begin &&
             rows[j].comm_end == comm_end)
        ++j;
      std::string ranks = ranks_range(comm_begin, comm_end);
      bool all_default = std::all_of(rows.begin() + static_cast<std::ptrdiff_t>(i),
                                     rows.begin() + static_cast<std::ptrdiff_t>(j),
                                     [](const ShowRow& r) { return r.algorithm == 0; });
      if (comm_end <= comm_begin) {
        out << "  (never used: hidden by an earlier communicator size)\n";
      } else if (all_default) {
        out << "  " << ranks << ": Open MPI default for all sizes\n";
      } else {
        out << "  " << ranks << ":\n";
        for (std::size_t k = i; k < j; ++k) {
          const ShowRow& r = rows[k];
          std::string sizes = bytes_range(r.key_begin, r.key_end);
          if (r.key_is_per_rank_times_p)
            sizes += " (" + bytes_range(r.per_rank_begin, r.per_rank_end) + " per rank at " +
                     std::to_string(comm_begin) + ")";
          std::string choice = r.algorithm == 0
                                   ? "default"
                                   : r.algorithm_name + " (" + std::to_string(r.algorithm) + ")";
          std::string knobs;
          if (r.segsize) knobs += "  seg " + human_bytes(r.segsize);
          if (r.fanout) knobs += "  fan-out " + std::to_string(r.fanout);
          if (r.max_requests) knobs += "  max requests " + std::to_string(r.max_requests);
          char line[512];
          std::snprintf(line, sizeof line, "    %-44s %-26s%s%s\n", sizes.c_str(), choice.c_str(),
                        knobs.c_str(), r.reachable ? "" : "  (never used)");
          out << line;
        }
      }
      i = j;
    }
  }
  return out.str();
}

}  // namespace colltune
