// A seeded random generator whose sequences are the same on every platform and standard
// library (std::uniform_int_distribution and std::shuffle are not), so that a strategy's
// suggestions are reproducible from its seed and restorable from its state.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace colltune {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  std::uint64_t next() { return engine_(); }
  // Uniform integer in [0, n) (n > 0), without modulo bias.
  std::uint64_t below(std::uint64_t n);
  // Uniform double in [0, 1).
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

inline std::uint64_t Rng::below(std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x;
  do x = engine_();
  while (x >= limit);
  return x % n;
}

}  // namespace colltune
