// Seed mixing: derives independent, order-free random streams (per run, per size, per
// configuration) from one user seed, identically on every platform.
#pragma once

#include <cstdint>
#include <string_view>

namespace colltune {

// Mixes `value` into `seed` (a splitmix64 finaliser over a boost-style combine).
inline std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t value) {
  std::uint64_t z = seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Mixes a text (its FNV-1a hash) into `seed`.
inline std::uint64_t mix_seed(std::uint64_t seed, std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return mix_seed(seed, h);
}

}  // namespace colltune
