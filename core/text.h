// Small text helpers shared by the parsers of what other programs print (OSU, ompi_info, Slurm
// commands, lscpu, ibv_devinfo, ...). The views they return point into the caller's text: keep
// that text alive while using them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace colltune {

// ASCII white space as the C locale's isspace sees it.
constexpr bool is_blank_char(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

// `s` without leading and trailing white space (a view into the same characters).
constexpr std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank_char(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank_char(s.back())) s.remove_suffix(1);
  return s;
}

// trim(s) as a string of its own.
inline std::string trim_copy(std::string_view s) { return std::string(trim(s)); }

// The parts of `text` between the separators, empty parts included: "a,,b" -> {"a", "", "b"},
// "a," -> {"a", ""}, "" -> {""}.
inline std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, pos - start));
    start = pos + 1;
  }
}

// Every line of `text` without its "\n" or "\r\n", blank lines included; a final line break ends
// the last line rather than starting an empty one: "a\n\nb\n" -> {"a", "", "b"}, "" -> {}.
inline std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

// The lines of `text` that are not blank, each trimmed.
inline std::vector<std::string_view> nonblank_lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (auto line : split(text, '\n'))
    if (line = trim(line); !line.empty()) out.push_back(line);
  return out;
}

}  // namespace colltune
