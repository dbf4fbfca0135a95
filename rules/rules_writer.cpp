#include "rules/rules_writer.h"

#include <algorithm>
#include <climits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "rules/rules_reader.h"

namespace colltune {

RulesFormat rules_format_for(const OmpiVersion& v) {
  switch (rules_dialect_for(v)) {
    case RulesDialect::ompi_main:
      return RulesFormat::json;
    case RulesDialect::ompi_v2:
      return RulesFormat::classic_v2;
    case RulesDialect::ompi_4_1:
      break;
  }
  return RulesFormat::classic_v1;
}

std::string_view to_string(RulesFormat format) {
  switch (format) {
    case RulesFormat::classic_v1:
      return "classic";
    case RulesFormat::classic_v2:
      return "v2";
    case RulesFormat::json:
      return "json";
  }
  return "?";
}

std::optional<RulesFormat> parse_rules_format(std::string_view text) {
  if (text == "classic" || text == "v1" || text == "classic_v1") return RulesFormat::classic_v1;
  if (text == "v2" || text == "classic_v2") return RulesFormat::classic_v2;
  if (text == "json") return RulesFormat::json;
  return std::nullopt;
}

std::string human_bytes(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes == std::numeric_limits<std::int64_t>::max()) return "inf";
  int unit = 0;
  std::int64_t value = bytes;
  while (value != 0 && value % 1024 == 0 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  return std::to_string(value) + " " + kUnits[unit];
}

namespace {

void check_values(const RulesModel& model, RulesFormat format) {
  for (const auto& coll : model.collectives) {
    if (coll.collective_id < 0 || coll.collective_id >= kOmpiCollCount)
      throw std::invalid_argument("collective id " + std::to_string(coll.collective_id) +
                                  " is not in 0..21");
    for (const auto& block : coll.blocks) {
      if (block.comm_size < 0) throw std::invalid_argument("negative communicator size");
      for (const auto& r : block.rules) {
        if (r.msg_size < 0 || r.algorithm < 0 || r.fanout < 0 || r.segsize < 0 ||
            r.max_requests < 0)
          throw std::invalid_argument("negative value in a rule of collective id " +
                                      std::to_string(coll.collective_id) +
                                      " (Open MPI rejects the whole file)");
        if (format == RulesFormat::classic_v1 && r.max_requests != 0)
          throw std::invalid_argument(
              "max_requests cannot be written in the classic format read by Open MPI before "
              "4.1.8 / 5.0.7; use rule-file-version-2 or JSON");
      }
    }
  }
}

std::string collective_label(int id) {
  if (auto c = collective_from_ompi_id(id)) return std::string(name(*c));
  std::string_view json_name = ompi_json_collective_name(id);
  return json_name.empty() ? "id " + std::to_string(id) : std::string(json_name);
}

std::string comm_range_text(const CollectiveRules& coll, std::size_t b, SizeRange range) {
  if (range.empty()) return "never used (hidden by an earlier, larger communicator size)";
  std::int64_t begin = std::max<std::int64_t>(range.begin, 2);
  std::string text = "communicators of " + std::to_string(begin);
  if (range.end == std::numeric_limits<std::int64_t>::max())
    text += " ranks and more";
  else if (range.end - 1 == begin)
    text += " ranks";
  else
    text += "-" + std::to_string(range.end - 1) + " ranks";
  if (b == 0 && coll.blocks[0].comm_size > 2)
    text += " (4.1.x floor: this block's size is " + std::to_string(coll.blocks[0].comm_size) + ")";
  return text;
}

std::string rule_text(const AlgorithmTable& table, int coll_id, const CommSizeBlock& block,
                      std::size_t r, SizeRange range) {
  const MessageRule& rule = block.rules[r];
  std::string text;
  if (range.empty())
    text = "never used: ";
  else if (range.end == std::numeric_limits<std::int64_t>::max())
    text = human_bytes(range.begin) + " and up: ";
  else
    text = human_bytes(range.begin) + " to " + human_bytes(range.end) + ": ";
  if (rule.algorithm == 0) return text + "Open MPI default (fixed decision)";
  auto coll = collective_from_ompi_id(coll_id);
  text += coll ? table.algorithm_name(*coll, rule.algorithm)
               : "algorithm " + std::to_string(rule.algorithm);
  if (rule.segsize) text += ", segments of " + human_bytes(rule.segsize);
  if (rule.fanout) text += ", fan-out " + std::to_string(rule.fanout);
  if (rule.max_requests) text += ", max requests " + std::to_string(rule.max_requests);
  return text;
}

// "<value>" padded to a comment column, then "# comment".
void emit(std::string& out, const std::string& values, const std::string& comment, bool annotate) {
  out += values;
  if (annotate && !comment.empty()) {
    std::size_t column = 24;
    out += std::string(values.size() < column ? column - values.size() : 1, ' ');
    out += "# " + comment;
  }
  out += '\n';
}

std::string single_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

std::string write_classic(const RulesModel& model, RulesFormat format,
                          const RulesWriteOptions& options, const AlgorithmTable& table) {
  const bool v2 = format == RulesFormat::classic_v2;
  const bool annotate = options.annotate;
  std::string out;
  // The header must be the very first bytes: fscanf matches it literally at the start.
  if (v2) out += "rule-file-version-2\n";
  out += v2 ? "# Open MPI coll_tuned dynamic rules (rule-file-version-2, Open MPI >= 4.1.8 / "
              ">= 5.0.7)\n"
            : "# Open MPI coll_tuned dynamic rules (classic format, Open MPI 4.1.x / 5.0.x)\n";
  for (const auto& line : options.comment_lines) out += "# " + single_line(line) + "\n";
  if (annotate) {
    out +=
        "# Rule columns: message size, algorithm (0 = Open MPI default), fan-in/out, segment "
        "size";
    out += v2 ? ", max requests\n" : "\n";
    out +=
        "# Message sizes are Open MPI's lookup key: bytes per rank x ranks for allgather, "
        "alltoall, gather, scatter.\n";
  }
  emit(out, std::to_string(model.collectives.size()), "number of collectives", annotate);
  for (const auto& coll : model.collectives) {
    emit(out, std::to_string(coll.collective_id), collective_label(coll.collective_id), annotate);
    emit(out, std::to_string(coll.blocks.size()), "number of communicator sizes", annotate);
    const std::vector<SizeRange> comm_ranges = block_comm_ranges(coll);
    for (std::size_t b = 0; b < coll.blocks.size(); ++b) {
      const auto& block = coll.blocks[b];
      emit(out, std::to_string(block.comm_size), comm_range_text(coll, b, comm_ranges[b]),
           annotate);
      emit(out, std::to_string(block.rules.size()), "number of message-size rules", annotate);
      const std::vector<SizeRange> key_ranges = rule_key_ranges(block);
      for (std::size_t r = 0; r < block.rules.size(); ++r) {
        const auto& rule = block.rules[r];
        std::string values = std::to_string(rule.msg_size) + " " + std::to_string(rule.algorithm) +
                             " " + std::to_string(rule.fanout) + " " + std::to_string(rule.segsize);
        if (v2) values += " " + std::to_string(rule.max_requests);
        emit(out, values, rule_text(table, coll.collective_id, block, r, key_ranges[r]), annotate);
      }
    }
  }
  return out;
}

std::string write_json(const RulesModel& model) {
  using ordered = nlohmann::ordered_json;
  ordered collectives = ordered::object();
  std::set<int> seen;
  for (const auto& coll : model.collectives) {
    std::string coll_name(ompi_json_collective_name(coll.collective_id));
    if (!seen.insert(coll.collective_id).second)
      throw std::invalid_argument("collective " + coll_name +
                                  " appears twice; JSON cannot express the override");
    ordered comm_rules = ordered::array();
    for (std::size_t b = 0; b < coll.blocks.size(); ++b) {
      const auto& block = coll.blocks[b];
      if (b > 0 && block.comm_size <= coll.blocks[b - 1].comm_size)
        throw std::invalid_argument("communicator sizes of " + coll_name +
                                    " are not strictly ascending");
      ordered comm_rule = ordered::object();
      // 4.1.x uses the first block for every smaller communicator too (floor); tuned never
      // runs below 2 ranks, so starting at min(size, 2) keeps the meaning.
      comm_rule["comm_size_min"] = b == 0 ? std::min(block.comm_size, 2) : block.comm_size;
      if (b + 1 < coll.blocks.size()) comm_rule["comm_size_max"] = coll.blocks[b + 1].comm_size - 1;
      ordered rules = ordered::array();
      for (std::size_t r = 0; r < block.rules.size(); ++r) {
        const auto& rule = block.rules[r];
        if (r == 0 && rule.msg_size != 0)
          throw std::invalid_argument("a block of " + coll_name + " does not start at size 0");
        if (r > 0 && rule.msg_size <= block.rules[r - 1].msg_size)
          throw std::invalid_argument("message sizes of " + coll_name +
                                      " are not strictly ascending");
        ordered j = ordered::object();
        j["msg_size_min"] = rule.msg_size;
        if (r + 1 < block.rules.size()) j["msg_size_max"] = block.rules[r + 1].msg_size - 1;
        j["alg"] = rule.algorithm;
        j["faninout"] = rule.fanout;
        j["seg_size"] = rule.segsize;
        j["reqs"] = rule.max_requests;
        rules.push_back(std::move(j));
      }
      comm_rule["rules"] = std::move(rules);
      comm_rules.push_back(std::move(comm_rule));
    }
    collectives[coll_name] = std::move(comm_rules);
  }
  ordered root = ordered::object();
  root["rule_file_version"] = 3;
  root["module"] = "tuned";
  root["collectives"] = std::move(collectives);
  return root.dump(2) + "\n";
}

}  // namespace

std::string write_rules(const RulesModel& model, RulesFormat format,
                        const RulesWriteOptions& options) {
  check_values(model, format);
  const AlgorithmTable& table =
      options.algorithms ? *options.algorithms : AlgorithmTable::builtin_4_1();
  if (format == RulesFormat::json) return write_json(model);
  return write_classic(model, format, options, table);
}

}  // namespace colltune
