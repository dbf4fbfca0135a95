// Human-readable view of a RulesModel (`colltune rules show`): per collective, the communicator
// sizes each block serves and the message-size ranges of each rule, with algorithm names, under
// Open MPI 4.1.x lookup semantics (JSON files read for main are converted to the same meaning).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/algorithm_table.h"
#include "rules/rules_model.h"

namespace colltune {

// One rule as an administrator reads it. Ranges are half-open [begin, end); end = INT64_MAX
// when open. per_rank_* are the OSU-style per-rank sizes at the block's smallest communicator
// for collectives whose key is bytes x P (gather, scatter, allgather, alltoall), else equal to
// the key range.
struct ShowRow {
  int collective_id = 0;
  std::string collective;  // "bcast", "reducescatter", "id 5"
  std::int64_t comm_begin = 0, comm_end = 0;
  std::int64_t key_begin = 0, key_end = 0;
  std::int64_t per_rank_begin = 0, per_rank_end = 0;
  bool key_is_per_rank_times_p = false;
  bool has_rule = false;  // false: the block has no rules (fixed decision)
  int algorithm = 0;
  std::string algorithm_name;  // "default" for 0
  int segsize = 0, fanout = 0, max_requests = 0;
  bool reachable = true;  // false: hidden by earlier entries (never used)
};

std::vector<ShowRow> show_rows(const RulesModel& model,
                               const AlgorithmTable& algorithms = AlgorithmTable::builtin_4_1());

// Text table, e.g.
//   bcast (id 7)
//     2-63 ranks: Open MPI default for all sizes
//     64-127 ranks:
//       0 B - 4 KiB        default
//       4 KiB - 64 KiB     binomial (6)    seg 8 KiB
//       >= 64 KiB          chain (2)       seg 64 KiB  fan-out 4
std::string format_rules_table(const RulesModel& model,
                               const AlgorithmTable& algorithms = AlgorithmTable::builtin_4_1());

}  // namespace colltune
