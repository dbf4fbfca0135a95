#include "rules/verify.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "core/fixed_decision.h"
#include "rules/rules_writer.h"

namespace colltune {

std::string_view to_string(VerifyStatus status) {
  switch (status) {
    case VerifyStatus::match:
      return "match";
    case VerifyStatus::mismatch:
      return "MISMATCH";
    case VerifyStatus::not_observed:
      return "NOT OBSERVED";
    case VerifyStatus::ambiguous:
      return "AMBIGUOUS";
  }
  return "?";
}

namespace {

struct RuleControlled {
  bool segsize = false, fanout = false, max_requests = false;
};

// Which traced arguments carry the rule's values (see verify.h).
RuleControlled rule_controlled(Collective c, int algorithm) {
  switch (c) {
    case Collective::bcast:
      if (algorithm == 2) return {true, true, false};
      if (algorithm >= 3 && algorithm <= 9) return {true, false, false};
      return {};
    case Collective::reduce:
      if (algorithm == 2) return {true, true, true};
      if (algorithm >= 3 && algorithm <= 6) return {true, false, true};
      return {};
    case Collective::allreduce:
      return {algorithm == 5, false, false};
    case Collective::gather:
      return {algorithm == 3, false, false};
    case Collective::alltoall:
      return {false, false, algorithm == 4};
    default:
      return {};
  }
}

}  // namespace

ExpectedChoice expected_choice(const RulesModel& model, Collective c, int comm_size,
                               std::int64_t osu_size, const VerifyOptions& options) {
  const AlgorithmTable& table =
      options.algorithms ? *options.algorithms : AlgorithmTable::builtin_4_1();
  ExpectedChoice expected;
  auto match = lookup_rule(model, ompi_id(c), comm_size,
                           rules_key_for_osu_size(c, osu_size, comm_size), options.semantics);
  if (match && match->rule.algorithm != 0) {
    const MessageRule& rule = match->rule;
    const CollectiveAlgorithms* algs = table.find(c);
    if (algs && rule.algorithm >= algs->algorithm_count) {
      expected.algorithm = rule.algorithm;
      expected.call_fails = true;
      return expected;
    }
    expected.algorithm = rule.algorithm;
    RuleControlled controlled = rule_controlled(c, rule.algorithm);
    if (controlled.segsize) expected.segsize = rule.segsize;
    if (controlled.fanout) expected.fanout = rule.fanout;
    if (controlled.max_requests) expected.max_requests = rule.max_requests;
    return expected;
  }
  expected.from_fixed_decision = true;
  if (auto fixed = fixed_decision_4_1(c, comm_size, osu_size, options.commutative_op))
    expected.algorithm = *fixed;
  else
    expected.any_algorithm = true;
  return expected;
}

int VerificationReport::matches() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const VerificationRow& r) {
    return r.status == VerifyStatus::match;
  }));
}

namespace {

std::string describe_expected(const ExpectedChoice& e, Collective c, const AlgorithmTable& t) {
  if (e.any_algorithm) return "fixed decision (any)";
  std::string text = t.algorithm_name(c, e.algorithm) + " (" + std::to_string(e.algorithm) + ")";
  if (e.call_fails) return text + ": call fails";
  if (e.from_fixed_decision) text += " [fixed]";
  if (e.segsize) text += " seg=" + std::to_string(*e.segsize);
  if (e.fanout) text += " fan=" + std::to_string(*e.fanout);
  if (e.max_requests) text += " req=" + std::to_string(*e.max_requests);
  return text;
}

std::string describe_observed(const ObservedChoice& o) {
  std::string text = o.function;
  if (o.segsize) text += " seg=" + std::to_string(*o.segsize);
  if (o.fanout) text += " fan=" + std::to_string(*o.fanout);
  if (o.max_requests) text += " req=" + std::to_string(*o.max_requests);
  return text + " x" + std::to_string(o.min_calls);
}

}  // namespace

VerificationReport verify_trace(const RulesModel& model, Collective c, int comm_size,
                                const std::vector<std::int64_t>& osu_sizes, const TraceData& trace,
                                const VerifyOptions& options) {
  VerificationReport report;
  report.collective = c;
  report.comm_size = comm_size;

  std::set<int> ranks_in_trace;
  for (const auto& r : trace.records)
    if (r.comm_size == comm_size) ranks_in_trace.insert(r.rank);

  for (std::int64_t osu_size : osu_sizes) {
    VerificationRow row;
    row.osu_size = osu_size;
    row.rules_key = rules_key_for_osu_size(c, osu_size, comm_size);
    row.expected = expected_choice(model, c, comm_size, osu_size, options);
    const std::int64_t bytes = has_message_size(c) ? osu_size : 0;

    using Key = std::tuple<std::string, std::optional<std::int64_t>, std::optional<std::int64_t>,
                           std::optional<std::int64_t>>;
    std::map<Key, ObservedChoice> groups;
    for (const auto& r : trace.records) {
      if (r.depth != 0 || r.comm_size != comm_size || r.bytes != bytes) continue;
      if (r.calls < options.min_calls) continue;
      auto alg = algorithm_for_function(r.function);
      if (!alg || alg->collective != c) continue;
      if (options.ignore_osu_timing_reduce && c == Collective::reduce && r.dtsize == 8 &&
          r.bytes == 8)
        continue;
      Key key{r.function, r.segsize, r.fanout, r.max_requests};
      auto [it, inserted] = groups.try_emplace(key);
      ObservedChoice& o = it->second;
      if (inserted) {
        o.function = r.function;
        o.algorithm = alg->algorithm;
        o.segsize = r.segsize;
        o.fanout = r.fanout;
        o.max_requests = r.max_requests;
        o.min_calls = r.calls;
      }
      o.min_calls = std::min(o.min_calls, r.calls);
      o.ranks.push_back(r.rank);
    }
    for (auto& [key, o] : groups) row.observed.push_back(std::move(o));

    const ExpectedChoice& e = row.expected;
    if (e.call_fails) {
      row.status = row.observed.empty() ? VerifyStatus::match : VerifyStatus::mismatch;
      if (!row.observed.empty()) row.detail = "an algorithm ran although the rule's id is invalid";
    } else if (row.observed.empty()) {
      row.status = VerifyStatus::not_observed;
      row.detail = "no call with at least " + std::to_string(options.min_calls) + " repetitions";
    } else if (row.observed.size() > 1) {
      row.status = VerifyStatus::ambiguous;
      row.detail = std::to_string(row.observed.size()) + " different configurations ran";
    } else {
      const ObservedChoice& o = row.observed.front();
      std::vector<std::string> problems;
      if (!e.any_algorithm && o.algorithm != e.algorithm)
        problems.push_back("algorithm " + std::to_string(o.algorithm) + " ran, expected " +
                           std::to_string(e.algorithm));
      if (e.segsize && o.segsize != e.segsize) problems.push_back("segment size differs");
      if (e.fanout && o.fanout != e.fanout) problems.push_back("fan-out differs");
      if (e.max_requests && o.max_requests != e.max_requests)
        problems.push_back("max requests differ");
      std::set<int> ranks(o.ranks.begin(), o.ranks.end());
      if (ranks != ranks_in_trace)
        problems.push_back("only " + std::to_string(ranks.size()) + " of " +
                           std::to_string(ranks_in_trace.size()) + " ranks ran it");
      row.status = problems.empty() ? VerifyStatus::match : VerifyStatus::mismatch;
      for (const auto& p : problems) row.detail += (row.detail.empty() ? "" : "; ") + p;
    }
    report.rows.push_back(std::move(row));
  }
  return report;
}

std::string VerificationReport::to_text(const AlgorithmTable& algorithms) const {
  std::ostringstream out;
  out << name(collective) << " on " << comm_size << " ranks: " << matches() << " of " << rows.size()
      << " sizes match\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-10s %-10s %-38s %-40s %s\n", "OSU size", "rules key",
                "expected", "observed", "status");
  out << line;
  for (const auto& row : rows) {
    std::string observed;
    for (const auto& o : row.observed)
      observed += (observed.empty() ? "" : ", ") + describe_observed(o);
    if (observed.empty()) observed = "-";
    std::snprintf(line, sizeof line, "  %-10s %-10s %-38s %-40s %s",
                  human_bytes(row.osu_size).c_str(), human_bytes(row.rules_key).c_str(),
                  describe_expected(row.expected, collective, algorithms).c_str(), observed.c_str(),
                  std::string(to_string(row.status)).c_str());
    out << line;
    if (!row.detail.empty() && row.status != VerifyStatus::match) out << " (" << row.detail << ")";
    out << "\n";
  }
  return out.str();
}

}  // namespace colltune
