#include "runner/sim/fixed_decision.h"

#include <initializer_list>
#include <utility>

namespace colltune::sim {

namespace {

// One comm-size bucket: "m < threshold -> algorithm" pairs in order, then `otherwise`.
struct Bucket {
  int below_comm_size;  // bucket applies when P < below_comm_size (last bucket: any P)
  std::initializer_list<std::pair<std::int64_t, int>> thresholds;
  int otherwise;
};

int decide(std::initializer_list<Bucket> table, int comm_size, std::int64_t m) {
  const Bucket* chosen = nullptr;
  for (const auto& b : table) {
    chosen = &b;
    if (comm_size < b.below_comm_size) break;
  }
  for (const auto& [threshold, alg] : chosen->thresholds)
    if (m < threshold) return alg;
  return chosen->otherwise;
}

constexpr int kAny = 1 << 30;

}  // namespace

int fixed_bcast_algorithm(int p, std::int64_t m) {
  return decide(
      {
          {4,
           {{32, 3},
            {256, 5},
            {512, 3},
            {1024, 7},
            {32768, 1},
            {131072, 5},
            {262144, 2},
            {524288, 1},
            {1048576, 6}},
           5},
          {8, {{64, 5}, {128, 6}, {2048, 5}, {8192, 6}, {1048576, 1}}, 2},
          {16, {{8, 7}, {64, 5}, {4096, 7}, {16384, 5}, {32768, 6}}, 1},
          {32, {{4096, 7}, {1048576, 6}}, 8},
          {64, {{2048, 6}}, 7},
          {128, {}, 7},
          {256, {{2, 6}, {16384, 5}, {32768, 1}, {65536, 5}}, 7},
          {1024, {{16384, 7}, {32768, 4}}, 7},
          {2048, {{524288, 7}}, 8},
          {4096, {{262144, 7}}, 8},
          {kAny, {{8192, 7}, {16384, 5}, {262144, 7}}, 8},
      },
      p, m);
}

int fixed_allreduce_algorithm(int p, std::int64_t m, bool commutative) {
  if (!commutative) {
    return decide(
        {
            {4, {{131072, 3}}, 1},
            {8, {}, 3},
            {16, {{1048576, 3}}, 2},
            {128, {}, 3},
            {256, {{131072, 2}, {524288, 3}}, 2},
            {512, {{4096, 2}, {524288, 3}}, 2},
            {kAny, {{2048, 2}}, 3},
        },
        p, m);
  }
  return decide(
      {
          {4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}}, 6},
          {8, {{16, 4}, {8192, 3}}, 6},
          {16, {{8192, 3}}, 6},
          {32, {{64, 5}, {4096, 3}}, 6},
          {64, {{128, 5}}, 6},
          {128, {{262144, 3}}, 6},
          {256, {{131072, 2}, {262144, 3}}, 6},
          {512, {{4096, 2}}, 6},
          {2048, {{2048, 2}, {16384, 3}}, 6},
          {4096, {{2048, 2}, {4096, 5}, {16384, 3}}, 6},
          {kAny, {{2048, 2}, {16384, 5}, {32768, 3}}, 6},
      },
      p, m);
}

int fixed_reduce_algorithm(int p, std::int64_t m, bool commutative) {
  if (!commutative) {
    return decide(
        {
            {4, {{8, 6}}, 1},
            {8, {}, 1},
            {16, {{1024, 6}, {8192, 1}, {16384, 6}, {262144, 1}}, 6},
            {128, {}, 6},
            {256, {{512, 6}, {1024, 1}}, 6},
            {kAny, {}, 6},
        },
        p, m);
  }
  return decide(
      {
          {4, {{8, 7}, {16, 4}, {32, 3}, {262144, 1}, {524288, 3}, {1048576, 2}}, 3},
          {8, {{4096, 4}, {65536, 2}, {262144, 5}, {524288, 1}, {1048576, 5}}, 1},
          {16, {{8192, 4}}, 5},
          {32, {{4096, 4}}, 5},
          {256, {}, 5},
          {512, {{8192, 5}, {16384, 6}}, 5},
          {2048, {}, 5},
          {4096, {{512, 5}, {1024, 6}, {8192, 5}, {16384, 6}}, 5},
          {kAny, {{16, 5}, {32, 6}, {1024, 5}, {2048, 6}, {8192, 5}, {16384, 6}}, 5},
      },
      p, m);
}

int fixed_gather_algorithm(int p, std::int64_t block) {
  return decide(
      {
          {4, {{2, 3}, {4, 1}, {32768, 2}, {65536, 1}, {131072, 2}}, 3},
          {8, {{1024, 2}, {8192, 1}, {32768, 2}, {262144, 1}}, 3},
          {256, {}, 2},
          {512, {{2048, 2}, {8192, 1}}, 2},
          {kAny, {}, 2},
      },
      p, block);
}

std::optional<int> fixed_decision(Collective collective, int comm_size, std::int64_t osu_size) {
  switch (collective) {
    case Collective::bcast:
      return fixed_bcast_algorithm(comm_size, osu_size);
    case Collective::reduce:
      return fixed_reduce_algorithm(comm_size, osu_size / 4 * 4);
    case Collective::allreduce:
      return fixed_allreduce_algorithm(comm_size, osu_size / 4 * 4);
    case Collective::gather:
      return fixed_gather_algorithm(comm_size, osu_size);
    default:
      return std::nullopt;
  }
}

}  // namespace colltune::sim
