#include "rules/rules_model.h"

#include <algorithm>
#include <climits>
#include <limits>

namespace colltune {

const CollectiveRules* RulesModel::find(int collective_id) const {
  const CollectiveRules* found = nullptr;
  for (const auto& c : collectives)
    if (c.collective_id == collective_id) found = &c;
  return found;
}

namespace {

constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();

// 4.1.x scan (coll_tuned_dynamic_rules.c): start with the first entry, advance while the next
// entry's bound is <= value.
template <typename Bound>
std::size_t scan_with_break(std::size_t count, Bound bound, std::int64_t value) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (bound(i) > value) break;
    best = i;
  }
  return best;
}

std::optional<RuleMatch> lookup_4_1(const CollectiveRules& rules, int comm_size, std::int64_t key) {
  if (rules.blocks.empty()) return std::nullopt;
  RuleMatch match;
  match.block_index = scan_with_break(
      rules.blocks.size(), [&](std::size_t i) { return std::int64_t{rules.blocks[i].comm_size}; },
      comm_size);
  const CommSizeBlock& block = rules.blocks[match.block_index];
  if (block.rules.empty()) return match;
  std::size_t r = scan_with_break(
      block.rules.size(), [&](std::size_t i) { return block.rules[i].msg_size; }, key);
  match.rule_index = r;
  match.rule = block.rules[r];
  return match;
}

std::optional<RuleMatch> lookup_main(const CollectiveRules& rules, int comm_size,
                                     std::int64_t key) {
  // Ranges exactly as ompi_coll_tuned_read_rules_config_file_classic builds them (int / size_t
  // arithmetic reproduced with 64-bit values).
  std::int64_t previous_max = -1;
  for (std::size_t i = 0; i < rules.blocks.size(); ++i) {
    const CommSizeBlock& block = rules.blocks[i];
    std::int64_t min = i == 0 ? 0 : previous_max + 1;
    std::int64_t max = i + 1 == rules.blocks.size() ? INT_MAX : std::int64_t{block.comm_size} - 1;
    previous_max = max;
    if (comm_size < min || comm_size > max) continue;
    RuleMatch match;
    match.block_index = i;
    for (std::size_t k = 0; k < block.rules.size(); ++k) {
      std::int64_t lo = block.rules[k].msg_size;
      // msg_size_max = next.min - 1 in size_t: a next minimum of 0 wraps to "infinite".
      std::int64_t hi = kOpen;
      if (k + 1 < block.rules.size() && block.rules[k + 1].msg_size > 0)
        hi = block.rules[k + 1].msg_size - 1;
      if (key >= lo && key <= hi) {
        match.rule_index = k;
        match.rule = block.rules[k];
        break;
      }
    }
    return match;
  }
  return std::nullopt;
}

}  // namespace

std::optional<RuleMatch> lookup_rule(const RulesModel& model, int collective_id, int comm_size,
                                     std::int64_t key, LookupSemantics semantics) {
  const CollectiveRules* rules = model.find(collective_id);
  if (rules == nullptr) return std::nullopt;
  return semantics == LookupSemantics::ompi_4_1 ? lookup_4_1(*rules, comm_size, key)
                                                : lookup_main(*rules, comm_size, key);
}

TuningConfig configured_choice(const RulesModel& model, Collective c, int comm_size,
                               std::int64_t osu_size, LookupSemantics semantics) {
  auto match = lookup_rule(model, ompi_id(c), comm_size,
                           rules_key_for_osu_size(c, osu_size, comm_size), semantics);
  if (!match) return TuningConfig::default_decision();
  return match->rule.config();
}

namespace {

// Entry i >= 1 is selected for v iff entries 0..i are all <= v and entry i+1 is > v:
// [max(bound 0..i), bound(i+1)). Entry 0 is also selected when bound(0) > v (the scan breaks
// at once): [0, max(bound 0, bound 1)).
template <typename Bound>
SizeRange scan_range(std::size_t count, Bound bound, std::size_t index) {
  SizeRange range;
  std::int64_t running_max = 0;
  for (std::size_t i = 0; i <= index; ++i) running_max = std::max(running_max, bound(i));
  range.begin = index == 0 ? 0 : running_max;
  range.end = index + 1 < count ? bound(index + 1) : kOpen;
  if (index == 0) range.end = std::max(range.end, bound(0));
  if (range.end < range.begin) range.end = range.begin;
  return range;
}

// Every entry's range in one pass (the running maximum carried along): linear, where calling
// scan_range for each index is quadratic.
template <typename Bound>
std::vector<SizeRange> scan_ranges(std::size_t count, Bound bound) {
  std::vector<SizeRange> ranges(count);
  std::int64_t running_max = 0;
  for (std::size_t index = 0; index < count; ++index) {
    running_max = std::max(running_max, bound(index));
    SizeRange& range = ranges[index];
    range.begin = index == 0 ? 0 : running_max;
    range.end = index + 1 < count ? bound(index + 1) : kOpen;
    if (index == 0) range.end = std::max(range.end, bound(0));
    if (range.end < range.begin) range.end = range.begin;
  }
  return ranges;
}

}  // namespace

std::vector<SizeRange> block_comm_ranges(const CollectiveRules& rules) {
  return scan_ranges(rules.blocks.size(),
                     [&](std::size_t i) { return std::int64_t{rules.blocks[i].comm_size}; });
}

std::vector<SizeRange> rule_key_ranges(const CommSizeBlock& block) {
  return scan_ranges(block.rules.size(), [&](std::size_t i) { return block.rules[i].msg_size; });
}

SizeRange block_comm_range(const CollectiveRules& rules, std::size_t index) {
  return scan_range(
      rules.blocks.size(), [&](std::size_t i) { return std::int64_t{rules.blocks[i].comm_size}; },
      index);
}

SizeRange rule_key_range(const CommSizeBlock& block, std::size_t index) {
  return scan_range(
      block.rules.size(), [&](std::size_t i) { return block.rules[i].msg_size; }, index);
}

bool is_canonical(const RulesModel& model) {
  for (const auto& coll : model.collectives) {
    for (std::size_t b = 0; b < coll.blocks.size(); ++b) {
      const auto& block = coll.blocks[b];
      if (b > 0 && block.comm_size <= coll.blocks[b - 1].comm_size) return false;
      if (!block.rules.empty() && block.rules.front().msg_size != 0) return false;
      for (std::size_t r = 1; r < block.rules.size(); ++r)
        if (block.rules[r].msg_size <= block.rules[r - 1].msg_size) return false;
    }
  }
  return true;
}

}  // namespace colltune
