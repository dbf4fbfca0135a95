#include "core/fixed_decision.h"

#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

namespace colltune {
namespace {

// One comm-size row of a decision table: applies when P < below (or P == exactly), then the
// first threshold with m < limit gives the algorithm, else `otherwise`.
struct Row {
  int below = 0;    // P < below; 0 = any P (last row)
  int exactly = 0;  // P == exactly (takes precedence over below when set)
  std::vector<std::pair<std::int64_t, int>> thresholds;
  int otherwise = 0;
};

int decide(const std::vector<Row>& rows, int p, std::int64_t m) {
  for (const Row& row : rows) {
    bool applies = row.exactly ? p == row.exactly : (row.below == 0 || p < row.below);
    if (!applies) continue;
    for (const auto& [limit, alg] : row.thresholds)
      if (m < limit) return alg;
    return row.otherwise;
  }
  return 0;
}

Row below(int p, std::vector<std::pair<std::int64_t, int>> t, int otherwise) {
  return Row{p, 0, std::move(t), otherwise};
}
Row exactly(int p, std::vector<std::pair<std::int64_t, int>> t, int otherwise) {
  return Row{0, p, std::move(t), otherwise};
}
Row rest(std::vector<std::pair<std::int64_t, int>> t, int otherwise) {
  return Row{0, 0, std::move(t), otherwise};
}

const std::vector<Row>& bcast() {
  static const std::vector<Row> rows{
      below(4,
            {{32, 3},
             {256, 5},
             {512, 3},
             {1024, 7},
             {32768, 1},
             {131072, 5},
             {262144, 2},
             {524288, 1},
             {1048576, 6}},
            5),
      below(8, {{64, 5}, {128, 6}, {2048, 5}, {8192, 6}, {1048576, 1}}, 2),
      below(16, {{8, 7}, {64, 5}, {4096, 7}, {16384, 5}, {32768, 6}}, 1),
      below(32, {{4096, 7}, {1048576, 6}}, 8),
      below(64, {{2048, 6}}, 7),
      below(128, {}, 7),
      below(256, {{2, 6}, {16384, 5}, {32768, 1}, {65536, 5}}, 7),
      below(1024, {{16384, 7}, {32768, 4}}, 7),
      below(2048, {{524288, 7}}, 8),
      below(4096, {{262144, 7}}, 8),
      rest({{8192, 7}, {16384, 5}, {262144, 7}}, 8)};
  return rows;
}

const std::vector<Row>& allreduce_commutative() {
  static const std::vector<Row> rows{
      below(4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}}, 6),
      below(8, {{16, 4}, {8192, 3}}, 6),
      below(16, {{8192, 3}}, 6),
      below(32, {{64, 5}, {4096, 3}}, 6),
      below(64, {{128, 5}}, 6),
      below(128, {{262144, 3}}, 6),
      below(256, {{131072, 2}, {262144, 3}}, 6),
      below(512, {{4096, 2}}, 6),
      below(2048, {{2048, 2}, {16384, 3}}, 6),
      below(4096, {{2048, 2}, {4096, 5}, {16384, 3}}, 6),
      rest({{2048, 2}, {16384, 5}, {32768, 3}}, 6)};
  return rows;
}

const std::vector<Row>& allreduce_noncommutative() {
  static const std::vector<Row> rows{below(4, {{131072, 3}}, 1),
                                     below(8, {}, 3),
                                     below(16, {{1048576, 3}}, 2),
                                     below(128, {}, 3),
                                     below(256, {{131072, 2}, {524288, 3}}, 2),
                                     below(512, {{4096, 2}, {524288, 3}}, 2),
                                     rest({{2048, 2}}, 3)};
  return rows;
}

const std::vector<Row>& reduce_commutative() {
  static const std::vector<Row> rows{
      below(4, {{8, 7}, {16, 4}, {32, 3}, {262144, 1}, {524288, 3}, {1048576, 2}}, 3),
      below(8, {{4096, 4}, {65536, 2}, {262144, 5}, {524288, 1}, {1048576, 5}}, 1),
      below(16, {{8192, 4}}, 5),
      below(32, {{4096, 4}}, 5),
      below(256, {}, 5),
      below(512, {{8192, 5}, {16384, 6}}, 5),
      below(2048, {}, 5),
      below(4096, {{512, 5}, {1024, 6}, {8192, 5}, {16384, 6}}, 5),
      rest({{16, 5}, {32, 6}, {1024, 5}, {2048, 6}, {8192, 5}, {16384, 6}}, 5)};
  return rows;
}

const std::vector<Row>& reduce_noncommutative() {
  static const std::vector<Row> rows{below(4, {{8, 6}}, 1),
                                     below(8, {}, 1),
                                     below(16, {{1024, 6}, {8192, 1}, {16384, 6}, {262144, 1}}, 6),
                                     below(128, {}, 6),
                                     below(256, {{512, 6}, {1024, 1}}, 6),
                                     rest({}, 6)};
  return rows;
}

const std::vector<Row>& gather() {
  static const std::vector<Row> rows{
      below(4, {{2, 3}, {4, 1}, {32768, 2}, {65536, 1}, {131072, 2}}, 3),
      below(8, {{1024, 2}, {8192, 1}, {32768, 2}, {262144, 1}}, 3), below(256, {}, 2),
      below(512, {{2048, 2}, {8192, 1}}, 2), rest({}, 2)};
  return rows;
}

const std::vector<Row>& scatter() {
  static const std::vector<Row> rows{
      below(4, {{2, 3}, {131072, 1}, {262144, 3}}, 1),
      below(8, {{2048, 2}, {4096, 1}, {8192, 2}, {32768, 1}, {1048576, 3}}, 1),
      below(16, {{16384, 2}, {1048576, 3}}, 1),
      below(32, {{16384, 2}, {32768, 1}}, 3),
      below(64, {{512, 2}, {8192, 3}, {16384, 2}}, 3),
      rest({{512, 2}}, 3)};
  return rows;
}

const std::vector<Row>& allgather() {
  static const std::vector<Row> rows{
      exactly(2, {}, 6),
      below(32, {}, 3),
      below(64, {{1024, 3}, {65536, 5}}, 4),
      below(128, {{512, 3}, {65536, 5}}, 4),
      below(256, {{512, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4),
      below(512, {{32, 3}, {128, 2}, {1024, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4),
      below(1024, {{64, 3}, {256, 2}, {2048, 3}}, 5),
      below(2048, {{4, 3}, {8, 2}, {16, 3}, {32, 2}, {256, 3}, {512, 2}, {4096, 3}}, 5),
      below(4096, {{32, 2}, {128, 3}, {512, 2}, {4096, 3}}, 5),
      rest({{2, 3}, {8, 2}, {16, 3}, {512, 2}, {4096, 3}}, 5)};
  return rows;
}

const std::vector<Row>& alltoall() {
  static const std::vector<Row> rows{
      exactly(2,
              {{2, 2},
               {4, 5},
               {16, 2},
               {64, 5},
               {256, 2},
               {4096, 5},
               {32768, 2},
               {262144, 4},
               {1048576, 5}},
              2),
      below(8, {{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}}, 1),
      below(16, {{262144, 4}}, 1),
      below(32, {{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}}, 4),
      below(64, {{512, 3}, {524288, 1}}, 4),
      below(128, {{1024, 3}, {2048, 1}, {4096, 4}, {262144, 1}}, 2),
      below(256, {{1024, 3}, {2048, 4}, {262144, 1}}, 2),
      below(512, {{1024, 3}, {8192, 4}, {32768, 1}}, 2),
      below(1024, {{512, 3}, {8192, 4}, {16384, 1}, {131072, 4}, {262144, 1}}, 2),
      below(2048, {{512, 3}, {1024, 4}, {2048, 1}, {16384, 4}, {262144, 1}}, 4),
      below(4096, {{1024, 3}, {4096, 4}, {8192, 1}, {131072, 4}}, 1),
      rest({{2048, 3}, {8192, 4}, {16384, 1}, {32768, 4}, {65536, 1}}, 4)};
  return rows;
}

const std::vector<Row>& barrier() {
  static const std::vector<Row> rows{below(4, {}, 3),    below(8, {}, 1),   below(64, {}, 3),
                                     below(256, {}, 4),  below(512, {}, 6), below(1024, {}, 4),
                                     below(4096, {}, 6), rest({}, 4)};
  return rows;
}

const std::vector<Row>& reduce_scatter() {
  static const std::vector<Row> rows{below(4, {{65536, 3}, {131072, 4}}, 3),
                                     below(8, {{8, 1}, {262144, 2}}, 3),
                                     below(32, {{262144, 2}}, 3),
                                     below(64, {{64, 1}, {2048, 2}, {524288, 4}}, 3),
                                     below(128, {{256, 1}, {512, 2}, {2048, 4}, {4096, 2}}, 4),
                                     below(256, {{256, 1}, {512, 2}}, 4),
                                     below(512, {{256, 1}, {1024, 2}}, 4),
                                     below(1024, {{512, 1}, {2048, 2}, {8192, 4}, {16384, 2}}, 4),
                                     below(2048, {{512, 1}, {4096, 2}, {16384, 4}, {32768, 2}}, 4),
                                     below(4096, {{512, 1}, {4096, 2}}, 4),
                                     rest({{1024, 1}, {8192, 2}}, 4)};
  return rows;
}

const std::vector<Row>& allgatherv() {
  static const std::vector<Row> rows{
      exactly(2, {{2048, 3}, {4096, 5}, {8192, 3}}, 5),
      below(8, {{256, 1}, {4096, 4}, {8192, 3}, {16384, 4}, {262144, 2}}, 4),
      below(16, {{1024, 1}}, 2),
      below(32, {{128, 1}, {262144, 2}}, 3),
      below(64, {{256, 1}, {8192, 2}}, 3),
      below(128, {{256, 1}, {4096, 2}}, 3),
      below(256, {{1024, 2}, {65536, 4}}, 3),
      below(512, {{1024, 2}}, 3),
      below(1024, {{512, 2}, {1024, 1}, {4096, 2}, {1048576, 4}}, 3),
      rest({{4096, 2}}, 4)};
  return rows;
}

const std::vector<Row>& alltoallv() {
  static const std::vector<Row> rows{below(4, {}, 2),   below(64, {}, 1),   below(128, {}, 2),
                                     below(256, {}, 1), below(1024, {}, 2), rest({}, 1)};
  return rows;
}

}  // namespace

std::optional<int> fixed_decision_4_1(Collective c, int p, std::int64_t m, bool commutative) {
  switch (c) {
    case Collective::bcast:
      return decide(bcast(), p, m);
    case Collective::allreduce:
      return decide(commutative ? allreduce_commutative() : allreduce_noncommutative(), p, m);
    case Collective::reduce:
      return decide(commutative ? reduce_commutative() : reduce_noncommutative(), p, m);
    case Collective::gather:
      return decide(gather(), p, m);
    case Collective::scatter:
      return decide(scatter(), p, m);
    case Collective::allgather:
      return decide(allgather(), p, m);
    case Collective::alltoall:
      return decide(alltoall(), p, m);
    case Collective::barrier:
      return decide(barrier(), p, 0);
    case Collective::reduce_scatter:
      if (!commutative) return 1;
      return decide(reduce_scatter(), p, m);
    case Collective::allgatherv:
      return decide(allgatherv(), p, m);
    case Collective::alltoallv:
      return decide(alltoallv(), p, 0);
    case Collective::reduce_scatter_block:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace colltune
