// The classic text reader of Open MPI's coll_tuned rules files, a port of
// ompi_coll_tuned_read_rules_config_file (4.1.4 / 4.1.8 / 5.0.7 / main classic) with its
// tokenizer (coll_base_util.c) run on the same libc scanf.
#include <array>
#include <cctype>
#include <climits>
#include <cstdio>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>

#include "rules/rules_reader_internal.h"
#include "rules/version_tables.h"

namespace colltune::rules_reader_detail {
namespace {

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

}  // namespace

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

}  // namespace colltune::rules_reader_detail
