#include "core/ompi_version.h"

#include <cctype>
#include <climits>

namespace colltune {

std::string OmpiVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<OmpiVersion> parse_ompi_version(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    if (i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1])) && text[i - 1] != 'v')
      continue;
    int parts[3] = {0, 0, 0};
    int count = 0;
    std::size_t j = i;
    while (count < 3 && j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      int value = 0;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
        const int digit = text[j++] - '0';
        // Saturate: a digit run longer than any version number must not overflow (fuzzing).
        value = value > (INT_MAX - digit) / 10 ? INT_MAX : value * 10 + digit;
      }
      parts[count++] = value;
      if (j < text.size() && text[j] == '.' && count < 3)
        ++j;
      else
        break;
    }
    if (count >= 2) return OmpiVersion{parts[0], parts[1], parts[2]};
  }
  return std::nullopt;
}

}  // namespace colltune
