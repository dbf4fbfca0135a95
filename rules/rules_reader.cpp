#include "rules/rules_reader.h"

#include <array>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/file_text.h"
#include "rules/rules_reader_internal.h"
#include "rules/version_tables.h"

namespace colltune {

RulesDialect rules_dialect_for(const OmpiVersion& v) {
  if (v.major >= 6) return RulesDialect::ompi_main;
  if (v.major == 5)
    return v >= OmpiVersion{5, 0, 7} ? RulesDialect::ompi_v2 : RulesDialect::ompi_4_1;
  if (v.major == 4 && v.minor >= 1 && v >= OmpiVersion{4, 1, 8}) return RulesDialect::ompi_v2;
  return RulesDialect::ompi_4_1;
}

std::string_view to_string(RulesDialect dialect) {
  switch (dialect) {
    case RulesDialect::ompi_4_1:
      return "4.1";
    case RulesDialect::ompi_v2:
      return "v2";
    case RulesDialect::ompi_main:
      return "main";
  }
  return "?";
}

std::optional<RulesDialect> parse_rules_dialect(std::string_view text) {
  if (text == "4.1" || text == "classic" || text == "v1") return RulesDialect::ompi_4_1;
  if (text == "v2" || text == "4.1.8" || text == "5.0.7") return RulesDialect::ompi_v2;
  if (text == "main" || text == "6.0" || text == "json") return RulesDialect::ompi_main;
  if (auto v = parse_ompi_version(text)) return rules_dialect_for(*v);
  return std::nullopt;
}

namespace {

using rules_reader_detail::JsonError;
using rules_reader_detail::kCollCount;

constexpr std::array<std::string_view, kCollCount> kJsonNames{"allgather",
                                                              "allgatherv",
                                                              "allreduce",
                                                              "alltoall",
                                                              "alltoallv",
                                                              "alltoallw",
                                                              "barrier",
                                                              "bcast",
                                                              "exscan",
                                                              "gather",
                                                              "gatherv",
                                                              "reduce",
                                                              "reducescatter",
                                                              "reducescatterblock",
                                                              "scan",
                                                              "scatter",
                                                              "scatterv",
                                                              "neighbor_allgather",
                                                              "neighbor_allgatherv",
                                                              "neighbor_alltoall",
                                                              "neighbor_alltoallv",
                                                              "neighbor_alltoallw"};

}  // namespace

std::string_view ompi_json_collective_name(int collective_id) {
  if (collective_id < 0 || collective_id >= kCollCount) return {};
  return kJsonNames[static_cast<std::size_t>(collective_id)];
}

std::optional<int> ompi_collective_id_from_json_name(std::string_view json_name) {
  for (int i = 0; i < kCollCount; ++i)
    if (kJsonNames[static_cast<std::size_t>(i)] == json_name) return i;
  return std::nullopt;
}

RulesReadResult read_rules_text(std::string_view text, RulesDialect dialect,
                                const AlgorithmTable* algorithms) {
  RulesReadResult out;
  out.dialect = dialect;
  if (dialect == RulesDialect::ompi_main) {
    // main tries JSON first and falls back to the classic reader when the file is not JSON.
    nlohmann::ordered_json root = nlohmann::ordered_json::parse(
        rules_reader_detail::without_trailing_commas(text), nullptr, /*allow_exceptions=*/false);
    if (!root.is_discarded()) {
      try {
        rules_reader_detail::read_json(root, algorithms ? *algorithms : algorithm_table_main(),
                                       out);
      } catch (const JsonError& e) {
        out = RulesReadResult{};
        out.dialect = dialect;
        out.json = true;
        out.loaded = false;
        out.reason = "valid JSON, but " + e.message;
        out.line = 0;
      } catch (const nlohmann::json::exception& e) {
        out = RulesReadResult{};
        out.dialect = dialect;
        out.json = true;
        out.reason = std::string("valid JSON, but unreadable as rules: ") + e.what();
      }
      return out;
    }
  }
  rules_reader_detail::read_classic(text, dialect, out);
  return out;
}

RulesReadResult read_rules_file(const std::filesystem::path& path, RulesDialect dialect,
                                const AlgorithmTable* algorithms) {
  const auto text = read_file_text(path);
  if (!text) {
    RulesReadResult out;
    out.dialect = dialect;
    out.reason = "the file " + path.string() + " cannot be opened";
    return out;
  }
  return read_rules_text(*text, dialect, algorithms);
}

RulesModel parse_rules(std::string_view text, RulesDialect dialect) {
  RulesReadResult r = read_rules_text(text, dialect);
  if (!r.loaded) {
    std::string where = r.line > 0 ? " (line " + std::to_string(r.line) + ")" : "";
    throw std::invalid_argument("Open MPI would ignore this rules file: " + r.reason + where);
  }
  return std::move(r.model);
}

}  // namespace colltune
