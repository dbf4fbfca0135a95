// An Open MPI version number, as `ompi_info --version` prints it ("Open MPI v4.1.4").
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace colltune {

struct OmpiVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;

  auto operator<=>(const OmpiVersion&) const = default;
  std::string to_string() const;
};

// Parses "4.1.4", "v4.1.4", "Open MPI v5.0.7rc1" (suffixes ignored); nullopt when no version.
std::optional<OmpiVersion> parse_ompi_version(std::string_view text);

}  // namespace colltune
