// Small text helpers shared by the parsers of what other programs print.
#pragma once

#include <string_view>

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

}  // namespace colltune
