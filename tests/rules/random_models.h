// Seeded random RulesModels for property tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "core/algorithm_table.h"
#include "core/rng.h"
#include "rules/rules_model.h"

namespace colltune::testing {

struct RandomModelShape {
  bool canonical = true;  // strictly ascending sizes, first message rule 0, first comm <= 2
  bool with_max_requests = false;
  bool allow_duplicates = false;  // the same collective id twice
  int max_collectives = 4;
  int max_blocks = 4;
  int max_rules = 6;
  // When set, algorithm ids stay within this table for the collectives it has (main's JSON
  // reader disables rules with ids the release does not have).
  const AlgorithmTable* algorithms = nullptr;
};

inline std::int64_t pick_size(Rng& rng) {
  // Mostly powers of two (what colltune writes), sometimes arbitrary values.
  if (rng.below(4) == 0) return static_cast<std::int64_t>(rng.below(5'000'000));
  return std::int64_t{1} << rng.below(31);
}

inline RulesModel random_model(Rng& rng, const RandomModelShape& shape) {
  RulesModel model;
  int ncoll = static_cast<int>(rng.below(static_cast<std::uint64_t>(shape.max_collectives) + 1));
  std::set<int> used;
  for (int c = 0; c < ncoll; ++c) {
    int id = static_cast<int>(rng.below(22));
    if (!shape.allow_duplicates) {
      if (used.count(id)) continue;
      used.insert(id);
    }
    CollectiveRules coll{id, {}};
    int nblocks = static_cast<int>(rng.below(static_cast<std::uint64_t>(shape.max_blocks) + 1));
    std::vector<int> comm_sizes;
    for (int b = 0; b < nblocks; ++b) {
      // Canonical: the first block at 0..2 ranks, the others above.
      if (shape.canonical)
        comm_sizes.push_back(b == 0 ? static_cast<int>(rng.below(3))
                                    : 3 + static_cast<int>(rng.below(4093)));
      else
        comm_sizes.push_back(static_cast<int>(rng.below(4096)));
    }
    if (shape.canonical) {
      std::sort(comm_sizes.begin(), comm_sizes.end());
      comm_sizes.erase(std::unique(comm_sizes.begin(), comm_sizes.end()), comm_sizes.end());
    }
    for (int cs : comm_sizes) {
      CommSizeBlock block{cs, {}};
      int nrules = static_cast<int>(rng.below(static_cast<std::uint64_t>(shape.max_rules) + 1));
      std::vector<std::int64_t> sizes;
      for (int r = 0; r < nrules; ++r) sizes.push_back(pick_size(rng));
      if (shape.canonical) {
        std::sort(sizes.begin(), sizes.end());
        sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
      }
      if (!sizes.empty()) sizes[0] = 0;  // Open MPI rejects anything else
      if (shape.canonical) sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
      for (std::int64_t s : sizes) {
        MessageRule rule;
        rule.msg_size = s;
        rule.algorithm = static_cast<int>(rng.below(10));
        if (shape.algorithms)
          if (auto coll_enum = collective_from_ompi_id(id))
            if (const auto* algs = shape.algorithms->find(*coll_enum))
              rule.algorithm =
                  static_cast<int>(rng.below(static_cast<std::uint64_t>(algs->algorithm_count)));
        rule.fanout = rng.below(3) == 0 ? static_cast<int>(rng.below(33)) : 0;
        rule.segsize = rng.below(3) == 0 ? static_cast<int>(std::int64_t{1} << rng.below(21)) : 0;
        if (shape.with_max_requests && rng.below(2) == 0)
          rule.max_requests = static_cast<int>(rng.below(65));
        block.rules.push_back(rule);
      }
      coll.blocks.push_back(std::move(block));
    }
    model.collectives.push_back(std::move(coll));
  }
  return model;
}

}  // namespace colltune::testing
