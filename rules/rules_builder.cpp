#include "rules/rules_builder.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace colltune {
namespace {

constexpr std::int64_t kNoEnd = std::numeric_limits<std::int64_t>::max();

std::string describe(const TunedPoint& p) {
  return std::string(name(p.collective)) + " at " + std::to_string(p.comm_size) + " ranks, size " +
         std::to_string(p.osu_size) + " (" + to_string(p.winner) + ")";
}

// The winner with the knobs its algorithm ignores cleared.
MessageRule normalized_rule(const TunedPoint& p, const AlgorithmTable& table) {
  MessageRule rule;
  if (p.winner.algorithm == 0) return rule;
  const CollectiveAlgorithms& algs = table.at(p.collective);
  const AlgorithmInfo* info = algs.find(p.winner.algorithm);
  if (info == nullptr)
    throw std::invalid_argument("algorithm " + std::to_string(p.winner.algorithm) +
                                " does not exist for " + std::string(name(p.collective)) +
                                " (valid 0.." + std::to_string(algs.algorithm_count - 1) +
                                "): " + describe(p));
  if (info->only_two_procs && p.comm_size != 2)
    throw std::invalid_argument(info->name + " only works on 2 ranks: " + describe(p));
  rule.algorithm = p.winner.algorithm;
  rule.segsize = info->uses_segsize ? p.winner.segsize : 0;
  rule.fanout = info->uses_fanout ? p.winner.fanout : 0;
  return rule;
}

bool same_choice(const MessageRule& a, const MessageRule& b) {
  return a.algorithm == b.algorithm && a.fanout == b.fanout && a.segsize == b.segsize &&
         a.max_requests == b.max_requests;
}

std::int64_t scaled(std::int64_t value, int factor) {
  if (factor <= 0 || value > kNoEnd / factor) return kNoEnd;
  return value * factor;
}

std::vector<MessageRule> message_rules(Collective coll, int comm_size,
                                       const std::vector<const TunedPoint*>& points,
                                       const RulesBuildOptions& options,
                                       const AlgorithmTable& table) {
  std::map<std::int64_t, MessageRule> by_key;
  for (const TunedPoint* p : points) {
    std::int64_t key = rules_key_for_osu_size(coll, p->osu_size, comm_size);
    MessageRule rule = normalized_rule(*p, table);
    rule.msg_size = key;
    auto [it, inserted] = by_key.emplace(key, rule);
    if (!inserted && !same_choice(it->second, rule)) {
      if (key == 0 && p->osu_size != 0)
        throw std::invalid_argument(std::string(name(coll)) +
                                    " has no message-size key: one winner per communicator "
                                    "size, got several at " +
                                    std::to_string(comm_size) + " ranks");
      throw std::invalid_argument("two results for the same rules key: " + describe(*p));
    }
  }
  std::vector<MessageRule> rules{MessageRule{}};  // size 0 -> fixed decision
  for (auto it = by_key.begin(); it != by_key.end(); ++it) {
    const MessageRule& rule = it->second;
    if (rules.back().msg_size == rule.msg_size)
      rules.back() = rule;
    else
      rules.push_back(rule);
    auto next = std::next(it);
    std::int64_t next_key = next == by_key.end() ? kNoEnd : next->first;
    // The largest measured size covers itself only: above it nothing was measured.
    std::int64_t end = rule.msg_size == 0 ? kNoEnd
                       : next == by_key.end() && options.size_coverage_factor > 0
                           ? rule.msg_size + 1
                           : scaled(rule.msg_size, options.size_coverage_factor);
    if (end < next_key) rules.push_back(MessageRule{end, 0, 0, 0, 0});
  }
  std::vector<MessageRule> merged;
  for (const auto& r : rules)
    if (merged.empty() || !same_choice(merged.back(), r)) merged.push_back(r);
  return merged;
}

CommSizeBlock default_block(int comm_size) { return CommSizeBlock{comm_size, {MessageRule{}}}; }

}  // namespace

RulesModel build_rules_model(const std::vector<TunedPoint>& points,
                             const RulesBuildOptions& options) {
  const AlgorithmTable& table =
      options.algorithms ? *options.algorithms : AlgorithmTable::builtin_4_1();
  std::map<Collective, std::map<int, std::vector<const TunedPoint*>>> grouped;
  for (const auto& p : points) {
    if (p.comm_size < 2)
      throw std::invalid_argument("communicator size below 2 (tuned is not used there): " +
                                  describe(p));
    if (p.osu_size < 0 || p.winner.algorithm < 0 || p.winner.segsize < 0 || p.winner.fanout < 0)
      throw std::invalid_argument("negative value: " + describe(p));
    grouped[p.collective][p.comm_size].push_back(&p);
  }

  RulesModel model;
  for (const auto& [coll, by_comm] : grouped) {
    CollectiveRules rules{ompi_id(coll), {}};
    if (by_comm.begin()->first > 2) rules.blocks.push_back(default_block(2));
    for (auto it = by_comm.begin(); it != by_comm.end(); ++it) {
      int comm_size = it->first;
      CommSizeBlock block{comm_size, message_rules(coll, comm_size, it->second, options, table)};
      bool two_proc = false;
      for (const auto& r : block.rules)
        if (const auto* info = table.at(coll).find(r.algorithm)) two_proc |= info->only_two_procs;
      rules.blocks.push_back(std::move(block));
      auto next = std::next(it);
      std::int64_t next_size = next == by_comm.end() ? kNoEnd : next->first;
      // Rules hold at the communicator size they were measured at, nowhere else.
      std::int64_t end = two_proc || options.comm_coverage_factor > 0
                             ? comm_size + 1
                             : scaled(comm_size, options.comm_coverage_factor);
      if (end < next_size && end <= std::numeric_limits<int>::max())
        rules.blocks.push_back(default_block(static_cast<int>(end)));
    }
    // Merge adjacent blocks with identical rules (same behaviour, shorter file).
    std::vector<CommSizeBlock> merged;
    for (auto& b : rules.blocks)
      if (merged.empty() || merged.back().rules != b.rules) merged.push_back(std::move(b));
    rules.blocks = std::move(merged);
    model.collectives.push_back(std::move(rules));
  }
  return model;
}

}  // namespace colltune
