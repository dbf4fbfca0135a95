#include "rules/rules_reader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "rules/version_tables.h"

namespace colltune {

RulesDialect rules_dialect_for(const OmpiVersion& v) {
  if (v.major >= 6) return RulesDialect::ompi_main;
  if (v.major == 5)
    return v >= OmpiVersion{5, 0, 7} ? RulesDialect::ompi_v2 : RulesDialect::ompi_4_1;
  if (v.major == 4 && v.minor >= 1 && v >= OmpiVersion{4, 1, 8}) return RulesDialect::ompi_v2;
  return RulesDialect::ompi_4_1;
}

std::string_view to_string(RulesDialect dialect) {
  switch (dialect) {
    case RulesDialect::ompi_4_1:
      return "4.1";
    case RulesDialect::ompi_v2:
      return "v2";
    case RulesDialect::ompi_main:
      return "main";
  }
  return "?";
}

std::optional<RulesDialect> parse_rules_dialect(std::string_view text) {
  if (text == "4.1" || text == "classic" || text == "v1") return RulesDialect::ompi_4_1;
  if (text == "v2" || text == "4.1.8" || text == "5.0.7") return RulesDialect::ompi_v2;
  if (text == "main" || text == "6.0" || text == "json") return RulesDialect::ompi_main;
  if (auto v = parse_ompi_version(text)) return rules_dialect_for(*v);
  return std::nullopt;
}

namespace {

constexpr int kCollCount = 22;  // COLLCOUNT, identical in 4.1.x, 5.0.x and main

constexpr std::array<std::string_view, kCollCount> kJsonNames{"allgather",
                                                              "allgatherv",
                                                              "allreduce",
                                                              "alltoall",
                                                              "alltoallv",
                                                              "alltoallw",
                                                              "barrier",
                                                              "bcast",
                                                              "exscan",
                                                              "gather",
                                                              "gatherv",
                                                              "reduce",
                                                              "reducescatter",
                                                              "reducescatterblock",
                                                              "scan",
                                                              "scatter",
                                                              "scatterv",
                                                              "neighbor_allgather",
                                                              "neighbor_allgatherv",
                                                              "neighbor_alltoall",
                                                              "neighbor_alltoallv",
                                                              "neighbor_alltoallw"};

int line_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

// Line of the last non-blank character (where "the file ends before ..." points).
int last_content_line(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return line_of(text, end == 0 ? 0 : end - 1);
}

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};

// The tokenizer of ompi/mca/coll/base/coll_base_util.c, on a FILE that holds `text`.
class OmpiScanner {
 public:
  OmpiScanner(std::string_view text, RulesReadResult& out) : text_(text), out_(out) {
    // fmemopen reads through the same libio code paths (and the same scanf) as fopen.
    file_.reset(fmemopen(const_cast<char*>(text.data()), text.size(), "r"));
    if (!file_) throw std::runtime_error("fmemopen failed");
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') newlines_.push_back(i);
  }

  FILE* file() { return file_.get(); }
  int fileline = 0;  // Open MPI's counter (static `fileline` in the reader)

  // ompi_coll_base_file_getnext_long: 0 and *val on success, -1 at end of file.
  int getnext_long(long* val) {
    FILE* f = file_.get();
    do {
      long before = std::ftell(f);
      int rc = std::fscanf(f, "%li", val);
      if (rc == EOF) return -1;
      if (rc == 1) {
        note_token(before, std::ftell(f), *val);
        return 0;
      }
      // "in all other cases, skip to the end of the token": one character.
      std::size_t got = std::fread(&trash_, sizeof(char), 1, f);
      if (got == 1) note_stray(before, std::ftell(f));
      if ('\n' == trash_) ++fileline;
      if ('#' == trash_) skiptonewline();
    } while (true);
  }

  // ompi_coll_base_file_peek_next_char_isdigit (4.1.8 / 5.0.7 / main).
  int peek_next_char_isdigit() {
    FILE* f = file_.get();
    do {
      int next = std::fgetc(f);
      if (' ' == next || '\t' == next) continue;
      std::ungetc(next, f);
      return next != EOF && std::isdigit(next);
    } while (true);
  }

  const RulesToken& last_token() const { return out_.tokens.back(); }
  std::size_t position() { return static_cast<std::size_t>(std::ftell(file_.get())); }

 private:
  void skiptonewline() {
    char c;
    while (std::fread(&c, 1, 1, file_.get()) == 1) {
      if ('\n' == c) {
        ++fileline;
        return;
      }
    }
  }

  void note_token(long before, long after, long value) {
    std::size_t begin = static_cast<std::size_t>(before);
    while (begin < static_cast<std::size_t>(after) &&
           std::isspace(static_cast<unsigned char>(text_[begin])))
      ++begin;
    RulesToken token;
    token.value = value;
    token.text = std::string(text_.substr(begin, static_cast<std::size_t>(after) - begin));
    token.offset = begin;
    token.line = line_at(begin);
    if (!out_.strays.empty() && out_.strays.back().end == begin)
      out_.strays.back().glued_to_number = true;
    out_.tokens.push_back(std::move(token));
  }

  // Characters scanf consumed without a conversion, plus the one fread skipped. Comments and
  // whitespace are not stray; consecutive stray characters form one word.
  void note_stray(long before, long after) {
    std::size_t begin = static_cast<std::size_t>(before);
    std::size_t end = static_cast<std::size_t>(after);
    if (trash_ == '#') --end;  // the comment marker itself
    for (std::size_t i = begin; i < end; ++i) {
      char c = text_[i];
      if (std::isspace(static_cast<unsigned char>(c))) continue;
      if (!out_.strays.empty() && out_.strays.back().end == i) {
        out_.strays.back().text += c;
        out_.strays.back().end = i + 1;
      } else {
        out_.strays.push_back(StrayText{std::string(1, c), line_at(i), i, i + 1, false});
      }
    }
  }

  // line_of(text_, offset) in O(log n): counting newlines per token made big files quadratic
  // (found by fuzzing: 200 KB of stray words took minutes).
  int line_at(std::size_t offset) const {
    return 1 + static_cast<int>(std::lower_bound(newlines_.begin(), newlines_.end(), offset) -
                                newlines_.begin());
  }

  std::string_view text_;
  RulesReadResult& out_;
  std::vector<std::size_t> newlines_;  // offsets of every '\n' in text_, ascending
  std::unique_ptr<FILE, FileCloser> file_;
  char trash_ = 0;  // Open MPI's stack variable keeps its value when fread hits the end
};

// What is left after the last token Open MPI read, minus whitespace and '#' comments.
void note_trailing(std::string_view text, std::size_t from, RulesReadResult& out) {
  std::string rest;
  int first_line = 0;
  bool in_comment = false;
  for (std::size_t i = from; i < text.size(); ++i) {
    char c = text[i];
    if (in_comment) {
      if (c == '\n') in_comment = false;
      continue;
    }
    if (c == '#') {
      in_comment = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!rest.empty() && rest.back() != ' ') rest += ' ';
      continue;
    }
    if (first_line == 0) first_line = line_of(text, i);
    rest += c;
  }
  while (!rest.empty() && rest.back() == ' ') rest.pop_back();
  if (rest.size() > 80) rest = rest.substr(0, 77) + "...";
  out.trailing_text = rest;
  out.trailing_line = first_line;
}

int to_int_field(const RulesToken& token, RulesReadResult& out) {
  if (token.value > INT_MAX) out.truncated_values.push_back(token);
  return static_cast<int>(token.value);  // what Open MPI's int fields store
}

// ompi_coll_tuned_read_rules_config_file (4.1.4 / 4.1.8 / 5.0.7 / main classic).
void read_classic(std::string_view text, RulesDialect dialect, RulesReadResult& out) {
  out.dialect = dialect;
  out.semantics = dialect == RulesDialect::ompi_main ? LookupSemantics::ompi_main_classic
                                                     : LookupSemantics::ompi_4_1;
  OmpiScanner scanner(text, out);
  FILE* f = scanner.file();

  int version = 1;
  if (dialect != RulesDialect::ompi_4_1) {
    // 4.1.8/5.0.7: `if (0 == fscanf(fptr, "rule-file-version-%u", &version)) version = 1;`
    // (main: `1 != fscanf(... "%d" ...)`); the literal must start at the first byte.
    unsigned parsed = 0;
    int rc = std::fscanf(f, "rule-file-version-%u", &parsed);
    if (rc == 1) {
      version = static_cast<int>(parsed);
      out.header_version = version;
    }
  }

  auto fail = [&](std::string reason, int line) {
    out.loaded = false;
    out.reason = std::move(reason);
    out.line = line;
    out.ompi_line = scanner.fileline;
  };
  auto at_end = [&](const std::string& what) {
    fail("the file ends where " + what + " was expected", last_content_line(text));
  };
  // Reads one value; false (with the reason set) at end of file or when negative.
  auto next = [&](long* value, const std::string& what) {
    if (scanner.getnext_long(value) < 0) {
      at_end(what);
      return false;
    }
    if (*value < 0) {
      fail(what + " is negative (" + scanner.last_token().text + ")", scanner.last_token().line);
      return false;
    }
    return true;
  };

  long ncol = 0;
  if (!next(&ncol, "the number of collectives")) return;
  if (ncol > kCollCount) {
    fail("the number of collectives (" + std::to_string(ncol) + ") exceeds " +
             std::to_string(kCollCount),
         scanner.last_token().line);
    return;
  }
  for (long x = 0; x < ncol; ++x) {
    long coll_id = 0;
    std::string where = "collective " + std::to_string(x + 1) + " of " + std::to_string(ncol);
    if (!next(&coll_id, "the id of " + where)) return;
    if (coll_id >= kCollCount) {
      fail("collective id " + std::to_string(coll_id) + " is not below " +
               std::to_string(kCollCount),
           scanner.last_token().line);
      return;
    }
    out.model.collectives.push_back(CollectiveRules{static_cast<int>(coll_id), {}});
    out.collective_lines.push_back(scanner.last_token().line);
    out.block_lines.emplace_back();
    out.rule_lines.emplace_back();
    CollectiveRules& coll = out.model.collectives.back();
    std::string coll_name = "collective id " + std::to_string(coll_id);

    long ncomsizes = 0;
    if (!next(&ncomsizes, "the number of communicator sizes of " + coll_name)) return;
    if (dialect == RulesDialect::ompi_main && ncomsizes > INT_MAX) {
      fail("the number of communicator sizes of " + coll_name + " is suspiciously large",
           scanner.last_token().line);
      return;
    }
    for (long ncs = 0; ncs < ncomsizes; ++ncs) {
      std::string block_name =
          "communicator-size entry " + std::to_string(ncs + 1) + " of " + coll_name;
      long comsize = 0;
      if (!next(&comsize, "the communicator size of " + block_name)) return;
      coll.blocks.push_back(CommSizeBlock{to_int_field(scanner.last_token(), out), {}});
      out.block_lines.back().push_back(scanner.last_token().line);
      out.rule_lines.back().emplace_back();
      CommSizeBlock& block = coll.blocks.back();
      block_name = "communicator size " + std::to_string(comsize) + " of " + coll_name;

      long nmsgsizes = 0;
      if (!next(&nmsgsizes, "the number of message-size rules of " + block_name)) return;
      for (long nms = 0; nms < nmsgsizes; ++nms) {
        std::string rule_name = "message rule " + std::to_string(nms + 1) + " of " + block_name;
        long msgsize = 0, alg = 0, faninout = 0, segsize = 0, maxreq = 0;
        if (!next(&msgsize, "the message size of " + rule_name)) return;
        int rule_line = scanner.last_token().line;
        MessageRule rule;
        rule.msg_size = msgsize;
        block.rules.push_back(rule);
        out.rule_lines.back().back().push_back(rule_line);
        if (!next(&alg, "the algorithm of " + rule_name)) return;
        block.rules.back().algorithm = to_int_field(scanner.last_token(), out);
        if (!next(&faninout, "the fan-in/out of " + rule_name)) return;
        block.rules.back().fanout = to_int_field(scanner.last_token(), out);
        if (!next(&segsize, "the segment size of " + rule_name)) return;
        block.rules.back().segsize = to_int_field(scanner.last_token(), out);
        // 4.1.8+: the MCA default (coll_tuned_alltoall_algorithm_max_requests, 0) unless a
        // digit follows on the same line.
        if (dialect != RulesDialect::ompi_4_1 && version > 1 && scanner.peek_next_char_isdigit()) {
          if (!next(&maxreq, "the max requests of " + rule_name)) return;
          block.rules.back().max_requests = to_int_field(scanner.last_token(), out);
        }
        if (nms == 0 && msgsize != 0) {
          fail("the first message rule of " + block_name + " is for size " +
                   std::to_string(msgsize) + ", not 0 (every block must start with size 0)",
               rule_line);
          return;
        }
      }
    }
  }
  out.loaded = true;
  out.ompi_line = scanner.fileline;
  note_trailing(text, scanner.position(), out);
}

// ---- main / 6.0 JSON reader (ompi_coll_tuned_read_rules_json) ----

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

struct JsonError {
  std::string message;
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

// Removes commas that directly precede '}' or ']' (outside strings): main's bundled json
// parser accepts them (its own documentation example has one); nlohmann does not.
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

}  // namespace

std::string_view ompi_json_collective_name(int collective_id) {
  if (collective_id < 0 || collective_id >= kCollCount) return {};
  return kJsonNames[static_cast<std::size_t>(collective_id)];
}

std::optional<int> ompi_collective_id_from_json_name(std::string_view json_name) {
  for (int i = 0; i < kCollCount; ++i)
    if (kJsonNames[static_cast<std::size_t>(i)] == json_name) return i;
  return std::nullopt;
}

RulesReadResult read_rules_text(std::string_view text, RulesDialect dialect,
                                const AlgorithmTable* algorithms) {
  RulesReadResult out;
  out.dialect = dialect;
  if (dialect == RulesDialect::ompi_main) {
    // main tries JSON first and falls back to the classic reader when the file is not JSON.
    nlohmann::ordered_json root = nlohmann::ordered_json::parse(
        without_trailing_commas(text), nullptr, /*allow_exceptions=*/false);
    if (!root.is_discarded()) {
      try {
        read_json(root, algorithms ? *algorithms : algorithm_table_main(), out);
      } catch (const JsonError& e) {
        out = RulesReadResult{};
        out.dialect = dialect;
        out.json = true;
        out.loaded = false;
        out.reason = "valid JSON, but " + e.message;
        out.line = 0;
      } catch (const nlohmann::json::exception& e) {
        out = RulesReadResult{};
        out.dialect = dialect;
        out.json = true;
        out.reason = std::string("valid JSON, but unreadable as rules: ") + e.what();
      }
      return out;
    }
  }
  read_classic(text, dialect, out);
  return out;
}

RulesReadResult read_rules_file(const std::filesystem::path& path, RulesDialect dialect,
                                const AlgorithmTable* algorithms) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    RulesReadResult out;
    out.dialect = dialect;
    out.reason = "the file " + path.string() + " cannot be opened";
    return out;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return read_rules_text(buffer.str(), dialect, algorithms);
}

RulesModel parse_rules(std::string_view text, RulesDialect dialect) {
  RulesReadResult r = read_rules_text(text, dialect);
  if (!r.loaded) {
    std::string where = r.line > 0 ? " (line " + std::to_string(r.line) + ")" : "";
    throw std::invalid_argument("Open MPI would ignore this rules file: " + r.reason + where);
  }
  return std::move(r.model);
}

}  // namespace colltune
