#include "slurm/shell_quote.h"

#include <stdexcept>

namespace colltune::slurm {
namespace {

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_name_char(char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; }

}  // namespace

std::string shell_quote(std::string_view value) {
  std::string out;
  out.reserve(value.size() + 2);
  out.push_back('\'');
  for (char c : value) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

bool is_valid_slurm_name(std::string_view name) {
  if (name.empty() || name.front() == '-') return false;
  for (char c : name)
    if (!is_name_char(c)) return false;
  return true;
}

bool is_shell_identifier(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  for (char c : name)
    if (!is_alnum(c) && c != '_') return false;
  return true;
}

bool is_directive_safe_path(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  for (char c : path) {
    if (is_name_char(c)) continue;
    switch (c) {
      case '/':
      case '+':
      case ',':
      case '=':
      case '@':
      case '%':
      case ':':
        continue;
      default:
        return false;
    }
  }
  return true;
}

std::string sanitize_name(std::string_view text, std::size_t max_length) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max_length) break;
    out.push_back(is_name_char(c) ? c : '_');
  }
  return out;
}

void require_valid_slurm_name(std::string_view what, std::string_view name) {
  if (!is_valid_slurm_name(name))
    throw std::invalid_argument(std::string(what) + " '" + std::string(name) +
                                "' is not a valid Slurm name (allowed: letters, digits, _ . -)");
}

}  // namespace colltune::slurm
