// The JSON reader of Open MPI main / 6.0's coll_tuned rules files, a port of
// ompi_coll_tuned_read_rules_json.
#include <climits>
#include <limits>
#include <map>
#include <set>

#include "rules/rules_reader_internal.h"
#include "rules/version_tables.h"

namespace colltune::rules_reader_detail {
namespace {

constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();

struct JsonMsgRule {
  std::int64_t min = 0, max = kInf;
  MessageRule rule;
  bool disabled = false;
};
struct JsonCommRule {
  std::int64_t min = 0, max = INT_MAX;
  std::vector<JsonMsgRule> rules;
  bool skipped = false;  // comm_rank_distribution other than "any"
};

// coll_tuned_get_json_integer_field: integer, or a string starting with inf/Inf/INF.
std::optional<std::int64_t> json_integer(const nlohmann::ordered_json& parent, const char* field,
                                         bool* was_inf = nullptr) {
  auto it = parent.find(field);
  if (it == parent.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_string()) {
    std::string s = it->get<std::string>();
    if (s.rfind("inf", 0) == 0 || s.rfind("Inf", 0) == 0 || s.rfind("INF", 0) == 0) {
      if (was_inf) *was_inf = true;
      return kInf;
    }
  }
  throw JsonError{std::string("field \"") + field + "\" is neither an integer nor \"inf\""};
}

}  // namespace

std::string without_trailing_commas(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == ',') {
      std::size_t j = i + 1;
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j < text.size() && (text[j] == '}' || text[j] == ']')) continue;
    }
    out += c;
  }
  return out;
}

// First-match ranges -> an equivalent model under 4.1.x semantics. Each elementary interval
// between range boundaries maps to the first rule containing it.
template <typename Rule, typename Contains>
std::vector<std::pair<std::int64_t, int>> first_match_partition(const std::vector<Rule>& rules,
                                                                std::int64_t upper,
                                                                Contains contains, auto bounds) {
  std::set<std::int64_t> cuts{0};
  for (const auto& r : rules) {
    auto [lo, hi] = bounds(r);
    if (lo > hi) continue;
    cuts.insert(lo);
    if (hi < upper) cuts.insert(hi + 1);
  }
  std::vector<std::pair<std::int64_t, int>> out;  // (start, rule index or -1)
  for (std::int64_t start : cuts) {
    if (start > upper) continue;
    int match = -1;
    for (std::size_t i = 0; i < rules.size(); ++i)
      if (contains(rules[i], start)) {
        match = static_cast<int>(i);
        break;
      }
    if (!out.empty() && out.back().second == match) continue;
    out.emplace_back(start, match);
  }
  return out;
}

// ordered_json: collectives are taken in file order, as main's reader iterates them.
void read_json(const nlohmann::ordered_json& root, const AlgorithmTable& algorithms,
               RulesReadResult& out) {
  out.json = true;
  out.semantics = LookupSemantics::ompi_4_1;  // the model below is the 4.1-equivalent
  if (!root.is_object() || !root.contains("collectives"))
    throw JsonError{"the required top-level field \"collectives\" is missing"};
  const auto& collectives = root.at("collectives");
  if (!collectives.is_object())
    throw JsonError{"\"collectives\" must be a dictionary of collectives"};

  for (const auto& [coll_name, comm_rules] : collectives.items()) {
    auto coll_id = ompi_collective_id_from_json_name(coll_name);
    if (!coll_id) throw JsonError{"unrecognized collective \"" + coll_name + "\""};
    if (!comm_rules.is_array())
      throw JsonError{"collective \"" + coll_name + "\" must be an array of comm rules"};
    const CollectiveAlgorithms* algs = nullptr;
    if (auto c = collective_from_ompi_id(*coll_id)) algs = algorithms.find(*c);

    std::vector<JsonCommRule> parsed;
    for (std::size_t ci = 0; ci < comm_rules.size(); ++ci) {
      const auto& comm_rule = comm_rules[ci];
      std::string where = coll_name + " comm rule " + std::to_string(ci + 1);
      if (!comm_rule.is_object()) throw JsonError{where + " is not an object"};
      JsonCommRule cr;
      bool inf = false;
      if (auto v = json_integer(comm_rule, "comm_size_min", &inf)) cr.min = *v;
      if (auto v = json_integer(comm_rule, "comm_size_max", &inf)) cr.max = *v;
      if (inf)
        out.notes.push_back(where +
                            ": \"inf\" as a communicator size is stored in an int by Open MPI "
                            "(value unreliable); omit comm_size_max instead");
      if (cr.max > INT_MAX) cr.max = INT_MAX;
      if (auto it = comm_rule.find("comm_rank_distribution"); it != comm_rule.end()) {
        if (!it->is_string()) throw JsonError{where + ": comm_rank_distribution must be a string"};
        std::string d = it->get<std::string>();
        if (d == "one-per-node" || d == "single-node") {
          cr.skipped = true;
          out.notes.push_back(where + ": comm_rank_distribution \"" + d +
                              "\" applies only to some communicators; not represented");
        } else if (d != "any") {
          out.notes.push_back(where + ": unknown comm_rank_distribution \"" + d +
                              "\" is treated as \"any\"");
        }
      }
      auto rules_it = comm_rule.find("rules");
      if (rules_it == comm_rule.end()) throw JsonError{where + " has no \"rules\""};
      if (!rules_it->is_array()) throw JsonError{where + ": \"rules\" must be an array"};
      for (std::size_t mi = 0; mi < rules_it->size(); ++mi) {
        const auto& msg_rule = (*rules_it)[mi];
        std::string mwhere = where + " message rule " + std::to_string(mi + 1);
        if (!msg_rule.is_object()) throw JsonError{mwhere + " is not an object"};
        JsonMsgRule mr;
        if (auto v = json_integer(msg_rule, "msg_size_min")) mr.min = *v;
        if (auto v = json_integer(msg_rule, "msg_size_max")) mr.max = *v;
        if (auto v = json_integer(msg_rule, "faninout")) mr.rule.fanout = static_cast<int>(*v);
        if (auto v = json_integer(msg_rule, "seg_size")) mr.rule.segsize = static_cast<int>(*v);
        if (auto v = json_integer(msg_rule, "reqs")) mr.rule.max_requests = static_cast<int>(*v);
        if (msg_rule.contains("segsize"))
          out.notes.push_back(mwhere +
                              ": \"segsize\" is ignored by Open MPI (the key is \"seg_size\")");
        // coll_tuned_read_alg: a missing or mistyped alg leaves algorithm 0 and keeps the rule;
        // an unknown one disables the rule.
        auto alg_it = msg_rule.find("alg");
        if (alg_it == msg_rule.end()) {
          out.notes.push_back(mwhere + ": no \"alg\"; the rule selects the fixed decision");
        } else if (alg_it->is_string()) {
          std::string alg_name = alg_it->get<std::string>();
          const AlgorithmInfo* info = algs ? algs->find(alg_name) : nullptr;
          if (info)
            mr.rule.algorithm = info->id;
          else if (alg_name == "ignore")
            mr.rule.algorithm = 0;
          else
            mr.disabled = true;
        } else if (alg_it->is_number_integer()) {
          std::int64_t id = alg_it->get<std::int64_t>();
          // Collectives colltune has no table for (exscan, scan, ...) are not judged.
          bool valid = id >= 0 && id <= INT_MAX && (!algs || id < algs->algorithm_count);
          if (valid)
            mr.rule.algorithm = static_cast<int>(id);
          else
            mr.disabled = true;
        } else {
          out.notes.push_back(mwhere +
                              ": \"alg\" is neither a string nor an integer; the rule "
                              "selects the fixed decision");
        }
        if (mr.disabled)
          out.notes.push_back(mwhere + ": algorithm " + alg_it->dump() +
                              " is not valid for this release; the rule is disabled");
        cr.rules.push_back(mr);
      }
      parsed.push_back(std::move(cr));
    }

    // Convert first-match ranges into blocks / rules with 4.1.x meaning.
    CollectiveRules coll{*coll_id, {}};
    std::vector<JsonCommRule> active;
    for (const auto& cr : parsed)
      if (!cr.skipped) active.push_back(cr);
    auto comm_parts = first_match_partition(
        active, INT_MAX,
        [](const JsonCommRule& r, std::int64_t p) { return p >= r.min && p <= r.max; },
        [](const JsonCommRule& r) {
          return std::pair{r.min, r.max};
        });
    // Communicators below 2 ranks never use tuned: drop a leading "no rule" part below 2.
    if (comm_parts.size() > 1 && comm_parts[0].second < 0 && comm_parts[1].first <= 2)
      comm_parts.erase(comm_parts.begin());
    // No rule for any size is the same as no blocks.
    if (comm_parts.size() == 1 && comm_parts[0].second < 0) comm_parts.clear();
    for (const auto& [start, index] : comm_parts) {
      CommSizeBlock block{static_cast<int>(start), {}};
      if (index >= 0) {
        std::vector<JsonMsgRule> enabled;
        for (const auto& mr : active[index].rules)
          if (!mr.disabled) enabled.push_back(mr);
        if (!enabled.empty()) {
          auto msg_parts = first_match_partition(
              enabled, kInf,
              [](const JsonMsgRule& r, std::int64_t m) { return m >= r.min && m <= r.max; },
              [](const JsonMsgRule& r) {
                return std::pair{r.min, r.max};
              });
          for (const auto& [mstart, mindex] : msg_parts) {
            MessageRule rule;
            if (mindex >= 0) rule = enabled[mindex].rule;
            rule.msg_size = mstart;
            block.rules.push_back(rule);
          }
        }
      }
      coll.blocks.push_back(std::move(block));
    }
    out.model.collectives.push_back(std::move(coll));
    out.collective_lines.push_back(0);
    out.block_lines.emplace_back(out.model.collectives.back().blocks.size(), 0);
    out.rule_lines.emplace_back();
    for (const auto& b : out.model.collectives.back().blocks)
      out.rule_lines.back().emplace_back(b.rules.size(), 0);
  }
  out.loaded = true;
}

}  // namespace colltune::rules_reader_detail
