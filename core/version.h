// The colltune release (the project's version in CMakeLists.txt), for --version, the JSON
// report, and the daemon's build-info metric.
#pragma once

#include <string_view>

namespace colltune {

inline constexpr std::string_view kColltuneVersion = COLLTUNE_VERSION;

}  // namespace colltune
