// Whole-number settings read from JSON. nlohmann's get<integer>() of a floating-point value such
// as 7e83 converts out of range (undefined behaviour, found by the config fuzzer), so integer
// settings must come through here: an integer in range, else std::invalid_argument naming it.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace colltune {

template <typename Int>
Int whole_number(const nlohmann::json& value, const std::string& what) {
  if (!value.is_number_integer())
    throw std::invalid_argument(what + " must be a whole number, not " + value.dump());
  constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<Int>::max());
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v > max) throw std::invalid_argument(what + " is too large: " + value.dump());
    return static_cast<Int>(v);
  }
  const auto v = value.get<std::int64_t>();
  if (v < static_cast<std::int64_t>(std::numeric_limits<Int>::min()) ||
      (v > 0 && static_cast<std::uint64_t>(v) > max))
    throw std::invalid_argument(what + " is out of range: " + value.dump());
  return static_cast<Int>(v);
}

}  // namespace colltune
