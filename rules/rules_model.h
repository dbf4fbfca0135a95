// The content of a coll_tuned dynamic rules file, independent of its on-disk format:
// collective -> communicator-size blocks -> message-size rules (docs/reference/open-mpi-rules.md
// §1.2-§1.3), and the lookups Open MPI performs on it.
//
// Meaning of the model (Open MPI 4.1.x / 5.0.x semantics, which every writer preserves):
// - A collective's blocks are scanned in order; the block used for a communicator of P ranks is
//   the last one before the first block whose comm_size exceeds P. If even the first block's
//   comm_size exceeds P, the first block is used anyway (a floor, not a bound).
// - Within a block, rules are scanned the same way on the message-size key (§1.5; for
//   gather/scatter/allgather/alltoall the key is per-rank bytes x P, see rules_key_for_osu_size).
// - algorithm 0 means "Open MPI's fixed decision"; a block without rules means the same.
// - When a collective id appears twice, the later entry replaces the earlier one.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/tuning_config.h"

namespace colltune {

struct MessageRule {
  std::int64_t msg_size = 0;  // lower bound of the key range, bytes
  int algorithm = 0;          // 0 = fixed decision
  int fanout = 0;             // FANINOUT column (chain fan-out)
  int segsize = 0;            // SEGSIZE column, bytes
  int max_requests = 0;       // MAXREQ column (rule-file-version-2 / JSON "reqs"); 0 = unset

  TuningConfig config() const { return {algorithm, segsize, fanout}; }
  auto operator<=>(const MessageRule&) const = default;
};

struct CommSizeBlock {
  int comm_size = 0;               // lower bound of the communicator-size range
  std::vector<MessageRule> rules;  // in file order; empty = fixed decision
  bool operator==(const CommSizeBlock&) const = default;
};

struct CollectiveRules {
  int collective_id = 0;  // Open MPI COLLTYPE_T id (0..21); may be one colltune does not model
  std::vector<CommSizeBlock> blocks;  // in file order
  bool operator==(const CollectiveRules&) const = default;
};

struct RulesModel {
  std::vector<CollectiveRules> collectives;  // in file order (duplicates kept as written)

  // The entry Open MPI uses for an id (the last one written); nullptr when absent.
  const CollectiveRules* find(int collective_id) const;
  const CollectiveRules* find(Collective c) const { return find(ompi_id(c)); }
  bool operator==(const RulesModel&) const = default;
};

// Which lookup Open MPI applies to a classic-format file.
enum class LookupSemantics {
  // 4.1.x and 5.0.x: ordered scan with break, first comm block is a floor.
  ompi_4_1,
  // main / 6.0 classic reader: comm block i covers [CS(i-1), CS(i)-1] (first from 0, last to
  // INT_MAX); message rule k covers [MS(k), MS(k+1)-1]; first match wins (§1.3).
  ompi_main_classic,
};

struct RuleMatch {
  std::size_t block_index = 0;
  std::optional<std::size_t> rule_index;  // nullopt: the block has no (matching) rule
  MessageRule rule;                       // algorithm 0 when rule_index is nullopt
};

// The block and rule Open MPI selects for a call; nullopt when the model has no block for the
// collective at this size (fixed decision).
std::optional<RuleMatch> lookup_rule(const RulesModel& model, int collective_id, int comm_size,
                                     std::int64_t key,
                                     LookupSemantics semantics = LookupSemantics::ompi_4_1);

// The configuration Open MPI runs (algorithm 0 = fixed decision) for an OSU-sized call of
// collective `c` on `comm_size` ranks: converts the size to the rules key first.
TuningConfig configured_choice(const RulesModel& model, Collective c, int comm_size,
                               std::int64_t osu_size,
                               LookupSemantics semantics = LookupSemantics::ompi_4_1);

// Half-open range [begin, end) of communicator sizes that block `index` of `rules` serves
// under 4.1.x semantics; end == begin when the block is unreachable (hidden by an earlier,
// larger comm size). The first block's range starts at 0 (floor). end = INT64_MAX when open.
struct SizeRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  bool empty() const { return end <= begin; }
  bool contains(std::int64_t v) const { return v >= begin && v < end; }
};
SizeRange block_comm_range(const CollectiveRules& rules, std::size_t index);
// Same for the key range served by rule `index` of a block.
SizeRange rule_key_range(const CommSizeBlock& block, std::size_t index);
// The ranges of every block / every rule at once, in one linear pass (the single-index
// functions above scan from the start, O(index) each): what every loop over a whole
// collective or block uses, so that a file of 10^6 rules is checked in linear time.
std::vector<SizeRange> block_comm_ranges(const CollectiveRules& rules);
std::vector<SizeRange> rule_key_ranges(const CommSizeBlock& block);

// True when comm sizes of every collective strictly ascend, message sizes strictly ascend and
// every non-empty block starts with message size 0 (what colltune writes).
bool is_canonical(const RulesModel& model);

}  // namespace colltune
