// colltune-bench-rules [--sizes 10000,100000,1000000] [--quadratic-max 100000]
//
// For each size N: a classic rules file of one bcast block with N message-size rules, then,
// measured in this one run:
//   validate  validate_rules_text (read + lint, what `colltune rules validate` does)
//   show      show_rows + format_rules_table (what `colltune rules show` prints)
//   ranges    the key range of every rule: rule_key_ranges (one linear pass) against
//             rule_key_range called per index (the scan every loop used before, O(N^2));
//             the per-index scan is timed only up to --quadratic-max rules.
// Prints one Markdown row per N (seconds, and the per-index / linear ratio).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "rules/rules_show.h"
#include "rules/rules_validate.h"
#include "rules/version_tables.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string rules_text(std::size_t n) {
  std::string out = "1\n7\n1\n4\n" + std::to_string(n) + "\n";
  out.reserve(n * 20);
  for (std::size_t i = 0; i < n; ++i)
    out += std::to_string(i * 8) + (i % 2 ? " 6 0 1024\n" : " 0 0 0\n");
  return out;
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) sizes.push_back(std::stoull(item));
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes = {10000, 100000, 1000000};
  std::size_t quadratic_max = 100000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--sizes")
      sizes = parse_sizes(argv[i + 1]);
    else if (key == "--quadratic-max")
      quadratic_max = std::stoull(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--sizes N,N,...] [--quadratic-max N]\n", argv[0]);
      return 2;
    }
  }
  using namespace colltune;
  const OmpiVersion version{4, 1, 4};
  const ValidationOptions options = validation_options_for(version);
  std::printf(
      "| rules | validate, s | show, s | ranges linear, s | ranges per index (before), s | "
      "per index / linear |\n|---|---|---|---|---|---|\n");
  for (std::size_t n : sizes) {
    const std::string text = rules_text(n);
    auto t0 = Clock::now();
    const ValidationReport report = validate_rules_text(text, options);
    const double validate_s = seconds_since(t0);
    if (!report.loads()) {
      std::fprintf(stderr, "the generated file does not load: %s\n", report.verdict().c_str());
      return 1;
    }
    t0 = Clock::now();
    const std::string table = format_rules_table(report.read.model, algorithm_table_for(version));
    const double show_s = seconds_since(t0);
    const CommSizeBlock& block = report.read.model.collectives.at(0).blocks.at(0);
    t0 = Clock::now();
    const auto ranges = rule_key_ranges(block);
    const double linear_s = seconds_since(t0);
    std::string per_index = "not run";
    std::string ratio = "-";
    if (n <= quadratic_max) {
      t0 = Clock::now();
      std::int64_t check = 0;
      for (std::size_t r = 0; r < block.rules.size(); ++r) {
        const SizeRange range = rule_key_range(block, r);
        if (range.begin != ranges[r].begin || range.end != ranges[r].end) {
          std::fprintf(stderr, "range %zu differs\n", r);
          return 1;
        }
        check += range.begin;
      }
      const double quadratic_s = seconds_since(t0);
      per_index = std::to_string(quadratic_s);
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.0fx", quadratic_s / std::max(linear_s, 1e-9));
      ratio = buffer;
      if (check < 0) std::printf("?");
    }
    std::printf("| %zu | %.3f | %.3f | %.5f | %s | %s |\n", n, validate_s, show_s, linear_s,
                per_index.c_str(), ratio.c_str());
    std::fflush(stdout);
    if (table.empty()) return 1;
  }
  return 0;
}
