// Internal to the rules readers (rules/rules_reader*.cpp): the shared lexing helpers and the
// two readers that read_rules_text (rules/rules_reader.cpp) chooses between.
#pragma once

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/algorithm_table.h"
#include "rules/rules_reader.h"

namespace colltune::rules_reader_detail {

constexpr int kCollCount = 22;  // COLLCOUNT, identical in 4.1.x, 5.0.x and main

// 1-based line of `offset` in `text`.
inline int line_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

// Line of the last non-blank character (where "the file ends before ..." points).
inline int last_content_line(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return line_of(text, end == 0 ? 0 : end - 1);
}

// ompi_coll_tuned_read_rules_config_file (4.1.4 / 4.1.8 / 5.0.7 / main classic): the classic
// text format (rules/rules_reader_classic.cpp).
void read_classic(std::string_view text, RulesDialect dialect, RulesReadResult& out);

// main / 6.0: ompi_coll_tuned_read_rules_json (rules/rules_reader_json.cpp). A document Open MPI
// refuses throws JsonError.
struct JsonError {
  std::string message;
};
void read_json(const nlohmann::ordered_json& root, const AlgorithmTable& algorithms,
               RulesReadResult& out);

// Removes commas that directly precede '}' or ']' (outside strings): main's bundled json
// parser accepts them (its own documentation example has one); nlohmann does not.
std::string without_trailing_commas(std::string_view text);

}  // namespace colltune::rules_reader_detail
