#include "rules/rules_validate.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>

#include "rules/rules_writer.h"
#include "rules/version_tables.h"

namespace colltune {

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::error:
      return "error";
    case Severity::warning:
      return "warning";
    case Severity::info:
      return "info";
  }
  return "?";
}

ValidationOptions validation_options_for(const OmpiVersion& version) {
  ValidationOptions options;
  options.dialect = rules_dialect_for(version);
  options.algorithms = &algorithm_table_for(version);
  return options;
}

namespace {

constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();

const AlgorithmTable& table_for(const ValidationOptions& options) {
  if (options.algorithms) return *options.algorithms;
  return options.dialect == RulesDialect::ompi_main ? algorithm_table_main()
                                                    : AlgorithmTable::builtin_4_1();
}

std::string_view release_label(RulesDialect dialect) {
  switch (dialect) {
    case RulesDialect::ompi_4_1:
      return "Open MPI 4.1.0-4.1.7 / 5.0.0-5.0.6";
    case RulesDialect::ompi_v2:
      return "Open MPI 4.1.8+ / 5.0.7+";
    case RulesDialect::ompi_main:
      return "Open MPI main / 6.0";
  }
  return "Open MPI";
}

std::string coll_label(int id) {
  if (auto c = collective_from_ompi_id(id)) return std::string(name(*c));
  std::string_view json_name = ompi_json_collective_name(id);
  return json_name.empty() ? "collective " + std::to_string(id) : std::string(json_name);
}

// "2 to 63" ranks, or "sizes [4 KiB, 64 KiB)".
std::string range_text(SizeRange r, bool bytes) {
  if (bytes) {
    if (r.end == kOpen) return "sizes >= " + human_bytes(r.begin);
    return "sizes [" + human_bytes(r.begin) + ", " + human_bytes(r.end) + ")";
  }
  if (r.end == kOpen) return std::to_string(r.begin) + " and more";
  if (r.end - 1 == r.begin) return std::to_string(r.begin);
  return std::to_string(r.begin) + " to " + std::to_string(r.end - 1);
}

class Linter {
 public:
  Linter(const RulesReadResult& read, const ValidationOptions& options)
      : read_(read), options_(options), table_(table_for(options)) {}

  std::vector<LintFinding> run() {
    lint_tokens();
    if (read_.loaded) {
      lint_trailing();
      lint_model();
    }
    for (const auto& note : read_.notes) add(Severity::warning, "json", 0, note);
    std::stable_sort(findings_.begin(), findings_.end(),
                     [](const LintFinding& a, const LintFinding& b) { return a.line < b.line; });
    return findings_;
  }

 private:
  void add(Severity s, std::string code, int line, std::string message) {
    findings_.push_back(LintFinding{s, std::move(code), line, std::move(message)});
  }

  void lint_tokens() {
    const auto& tokens = read_.tokens;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const RulesToken& t = tokens[i];
      std::string_view digits = t.text;
      if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
        if (digits[0] == '+')
          add(Severity::warning, "signed-number", t.line,
              "'" + t.text + "' has a sign; write plain decimal numbers");
        digits.remove_prefix(1);
      }
      if (digits.size() > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        add(Severity::warning, "hex-number", t.line,
            "'" + t.text + "' is read as hexadecimal " + std::to_string(t.value) +
                " (%li); write decimal numbers");
      } else if (digits.size() > 1 && digits[0] == '0') {
        add(Severity::error, "octal-number", t.line,
            "'" + t.text + "' is read as octal " + std::to_string(t.value) +
                " (%li), not decimal; never zero-pad numbers");
      }
      if (i > 0) {
        const RulesToken& prev = tokens[i - 1];
        if (prev.offset + prev.text.size() == t.offset)
          add(Severity::error, "glued-numbers", t.line,
              "'" + prev.text + t.text + "' is read as two numbers, " + std::to_string(prev.value) +
                  " and " + std::to_string(t.value) +
                  (prev.text == "0" ? " (a leading 0 starts an octal number, which stops at 8 "
                                      "or 9)"
                                    : ""));
      }
    }
    for (const auto& s : read_.strays) {
      if (s.glued_to_number)
        add(Severity::error, "digits-in-text", s.line,
            "'" + s.text +
                "' is outside a comment; the digits right after it are read as a "
                "number. Put annotations after '#'");
      else
        add(Severity::warning, "stray-text", s.line,
            "'" + s.text +
                "' is outside a comment (Open MPI skips it character by character); "
                "put annotations after '#'");
    }
    for (const auto& t : read_.truncated_values)
      add(Severity::error, "int-overflow", t.line,
          "'" + t.text + "' does not fit Open MPI's int field and is truncated to " +
              std::to_string(static_cast<int>(t.value)));
  }

  void lint_trailing() {
    if (read_.trailing_text.empty()) return;
    bool has_digit =
        std::any_of(read_.trailing_text.begin(), read_.trailing_text.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    add(has_digit ? Severity::error : Severity::warning, "ignored-trailing", read_.trailing_line,
        "Open MPI stops reading before '" + read_.trailing_text +
            "' and ignores it; check the counts of collectives, communicator sizes and rules");
  }

  void lint_model() {
    const RulesModel& model = read_.model;
    if (model.collectives.empty())
      add(Severity::info, "no-rules", 0,
          "the file holds no rules: every collective uses the "
          "fixed decision");
    std::map<int, std::size_t> last_index;
    for (std::size_t ci = 0; ci < model.collectives.size(); ++ci)
      last_index[model.collectives[ci].collective_id] = ci;
    for (std::size_t ci = 0; ci < model.collectives.size(); ++ci) {
      const CollectiveRules& coll = model.collectives[ci];
      int coll_line = line_of_collective(ci);
      std::size_t last = last_index[coll.collective_id];
      if (last != ci) {
        add(Severity::warning, "duplicate-collective", coll_line,
            coll_label(coll.collective_id) + " appears again at line " +
                std::to_string(line_of_collective(last)) + "; Open MPI uses only the later entry");
        continue;
      }
      int id = coll.collective_id;
      if (id == 5 || id == 10 || id == 16)
        add(Severity::warning, "tuned-disabled", coll_line,
            "rules for " + coll_label(id) + " make tuned drop its " + coll_label(id) +
                " (another component runs it); remove them");
      else if (id >= 17)
        add(Severity::info, "never-consulted", coll_line,
            "tuned never looks up rules for " + coll_label(id));
      lint_blocks(ci);
    }
  }

  int line_of_collective(std::size_t ci) const {
    return ci < read_.collective_lines.size() ? read_.collective_lines[ci] : 0;
  }
  int line_of_block(std::size_t ci, std::size_t b) const {
    if (ci < read_.block_lines.size() && b < read_.block_lines[ci].size())
      return read_.block_lines[ci][b];
    return 0;
  }
  int line_of_rule(std::size_t ci, std::size_t b, std::size_t r) const {
    if (ci < read_.rule_lines.size() && b < read_.rule_lines[ci].size() &&
        r < read_.rule_lines[ci][b].size())
      return read_.rule_lines[ci][b][r];
    return 0;
  }

  void lint_blocks(std::size_t ci) {
    const CollectiveRules& coll = read_.model.collectives[ci];
    const std::string label = coll_label(coll.collective_id);
    const bool main_classic = read_.semantics == LookupSemantics::ompi_main_classic;
    if (main_classic && coll.blocks.size() > 1)
      add(Severity::warning, "main-classic-ranges", line_of_block(ci, 0),
          "Open MPI main/6.0 reads classic comm sizes as upper bounds (entry i serves sizes "
          "from entry i-1 to entry i minus 1): write JSON for main");
    auto coll_enum = collective_from_ompi_id(coll.collective_id);
    const CollectiveAlgorithms* algs = coll_enum ? table_.find(*coll_enum) : nullptr;
    const std::vector<SizeRange> comm_ranges = block_comm_ranges(coll);
    for (std::size_t b = 0; b < coll.blocks.size(); ++b) {
      const CommSizeBlock& block = coll.blocks[b];
      int block_line = line_of_block(ci, b);
      SizeRange comm = comm_ranges[b];
      if (b == 0 && block.comm_size > 2 && !main_classic && coll_enum)
        add(Severity::warning, "first-block-floor", block_line,
            label + " rules for " + std::to_string(block.comm_size) +
                " ranks are also used on every smaller communicator (the first entry is a "
                "floor in 4.1.x); add a block for 2 ranks with algorithm 0 first");
      if (b > 0 && block.comm_size < coll.blocks[b - 1].comm_size)
        add(Severity::warning, "comm-not-ascending", block_line,
            label + " communicator sizes are not ascending (" +
                std::to_string(coll.blocks[b - 1].comm_size) + " then " +
                std::to_string(block.comm_size) + ")");
      bool block_reachable = !comm.empty() && comm.end > 2;
      if (!main_classic && !block_reachable)
        add(Severity::warning, "unreachable-block", block_line,
            label + " rules for " + std::to_string(block.comm_size) +
                " ranks are never used (an earlier entry covers these communicator sizes)");
      SizeRange relevant{std::max<std::int64_t>(comm.begin, 2), comm.end};
      const std::vector<SizeRange> key_ranges = rule_key_ranges(block);
      for (std::size_t r = 0; r < block.rules.size(); ++r) {
        const MessageRule& rule = block.rules[r];
        int line = line_of_rule(ci, b, r);
        SizeRange keys = key_ranges[r];
        bool reachable = main_classic || (block_reachable && !keys.empty());
        if (!main_classic && block_reachable && keys.empty())
          add(Severity::warning, "unreachable-rule", line,
              label + " rule for size " + std::to_string(rule.msg_size) +
                  " is never used (message sizes must ascend)");
        if (rule.algorithm == 0 || algs == nullptr) continue;
        std::string where =
            label + " on " + range_text(relevant, false) + " ranks, " + range_text(keys, true);
        const AlgorithmInfo* info = algs->find(rule.algorithm);
        if (rule.algorithm >= algs->algorithm_count || info == nullptr) {
          add(reachable ? Severity::error : Severity::warning, "alg-out-of-range", line,
              label + " algorithm " + std::to_string(rule.algorithm) + " does not exist (0.." +
                  std::to_string(algs->algorithm_count - 1) +
                  "): calls fail with MPI_ERR_ARG and abort the job (" + where + ")");
          continue;
        }
        if (info->only_two_procs && reachable && !main_classic &&
            !(relevant.begin == 2 && relevant.end == 3))
          add(Severity::error, "two-proc", line,
              label + " " + info->name + " only works on exactly 2 ranks, but this rule serves " +
                  range_text(relevant, false) + " ranks (MPI_ERR_UNSUPPORTED_OPERATION)");
        if (info->commutative_only && options_.non_commutative_ops_possible)
          add(Severity::warning, "non-commutative", line,
              label + " " + info->name +
                  " gives wrong results for non-commutative "
                  "user-defined operations, and the file cannot tell operations apart");
        if (rule.segsize != 0 && !info->uses_segsize)
          add(Severity::info, "ignored-segsize", line,
              label + " " + info->name + " does not use the segment size " +
                  std::to_string(rule.segsize));
        if (rule.fanout != 0 && !info->uses_fanout)
          add(Severity::info, "ignored-fanout", line,
              label + " " + info->name + " does not use the fan-in/out " +
                  std::to_string(rule.fanout) +
                  (coll_enum == Collective::bcast && rule.algorithm == 7
                       ? " (the k-nomial radix is coll_tuned_bcast_algorithm_knomial_radix)"
                       : ""));
      }
    }
  }

  const RulesReadResult& read_;
  const ValidationOptions& options_;
  const AlgorithmTable& table_;
  std::vector<LintFinding> findings_;
};

}  // namespace

std::vector<LintFinding> lint_rules(const RulesReadResult& read, const ValidationOptions& options) {
  return Linter(read, options).run();
}

bool ValidationReport::has_errors() const {
  return std::any_of(findings.begin(), findings.end(),
                     [](const LintFinding& f) { return f.severity == Severity::error; });
}

std::string ValidationReport::verdict() const {
  std::string who(release_label(read.dialect));
  if (read.loaded) return who + " would load this file.";
  std::string text = who +
                     " would silently ignore this file (and use its fixed decision for "
                     "every collective), because " +
                     read.reason;
  if (read.line > 0) text += " (line " + std::to_string(read.line) + ")";
  return text + ".";
}

std::string ValidationReport::to_text() const {
  // One line per distinct finding, with every line of the file it stands at ("lines 30, 32,
  // 34: ..."): a reduce file can have the same warning at a dozen rules.
  std::vector<std::pair<const LintFinding*, std::vector<int>>> distinct;
  for (const auto& f : findings) {
    auto same = std::find_if(distinct.begin(), distinct.end(), [&](const auto& d) {
      return d.first->severity == f.severity && d.first->code == f.code &&
             d.first->message == f.message;
    });
    if (same == distinct.end()) same = distinct.insert(distinct.end(), {&f, {}});
    if (f.line > 0 && (same->second.empty() || same->second.back() != f.line))
      same->second.push_back(f.line);
  }
  std::string out = verdict() + "\n";
  for (const auto& [f, lines] : distinct) {
    for (std::size_t i = 0; i < lines.size(); ++i)
      out += (i == 0 ? (lines.size() == 1 ? "line " : "lines ") : ", ") + std::to_string(lines[i]);
    if (!lines.empty()) out += ": ";
    out += std::string(to_string(f->severity)) + " [" + f->code + "] " + f->message + "\n";
  }
  return out;
}

ValidationReport validate_rules_text(std::string_view text, const ValidationOptions& options) {
  ValidationReport report;
  report.read = read_rules_text(text, options.dialect, &table_for(options));
  report.findings = lint_rules(report.read, options);
  return report;
}

ValidationReport validate_rules_file(const std::filesystem::path& path,
                                     const ValidationOptions& options) {
  ValidationReport report;
  report.read = read_rules_file(path, options.dialect, &table_for(options));
  report.findings = lint_rules(report.read, options);
  return report;
}

}  // namespace colltune
