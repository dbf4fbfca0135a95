// A cheap non-regression check of deployed rules: re-measure a few (collective, message size)
// cells with the rules file loaded and with Open MPI's default decision, interleaved in a seeded
// random order (drift and neighbours' noise hit both sides alike), and test with a bootstrap
// confidence interval on the ratio of medians whether the tuned side still holds.
//
// Verdict per cell (ratio = median tuned / median default, [low, high] its interval):
//   regressed       low > 1 + tolerance: the rules make this cell slower than the default,
//                   beyond noise;
//   advantage_lost  a speed-up s >= 1 + 2 x tolerance was measured when the rules were made
//                   (expected_speedup) and now even 1 / low < 1 + tolerance: the advantage is
//                   gone, beyond noise;
//   ok              otherwise; no_data when a side has fewer than 3 measurements.
// The sentinel fires (report.regression) when any cell regressed or lost its advantage.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective.h"
#include "rules/rules_model.h"
#include "runner/backend.h"

namespace colltune {

struct SentinelCell {
  Collective collective = Collective::bcast;
  std::int64_t msg_size = 0;  // OSU size, bytes
  bool operator==(const SentinelCell&) const = default;
};

// "bcast:1M,allreduce:64K" (K, M, G binary suffixes). Throws std::invalid_argument naming the
// bad item.
std::vector<SentinelCell> parse_sentinel_cells(std::string_view text);
std::string to_string(const SentinelCell& cell);  // "bcast:1M"

// Cells worth watching in a rules file on `comm_size` ranks: for each collective, the largest
// OSU size (power of two, within [min_size, max_size]) of each rule that picks an algorithm,
// largest sizes first, at most `max_cells` in all (round-robin over collectives).
std::vector<SentinelCell> sentinel_cells_from_rules(const RulesModel& model, int comm_size,
                                                    int max_cells = 3, std::int64_t min_size = 4,
                                                    std::int64_t max_size = 1 << 20);

// Bootstrap interval of median(a) / median(b): resamples both with replacement.
struct RatioInterval {
  double ratio = 0;
  double low = 0;
  double high = 0;
};
RatioInterval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                     int samples, double confidence, std::uint64_t seed);

struct SentinelOptions {
  std::filesystem::path rules_path;  // made absolute before use (every rank reads it)
  std::vector<SentinelCell> cells;   // empty = sentinel_cells_from_rules
  int comm_size = 4;
  int nodes = 1;
  int ppn = 0;
  int rounds = 10;      // (tuned, default) pairs per cell, in a random order per round
  int iterations = 50;  // OSU -i per run
  int warmup = 5;       // OSU -x per run
  std::uint64_t seed = 1;
  int bootstrap_samples = 2000;
  double confidence = 0.95;
  double tolerance = 0.10;
  // Speed-up (default / tuned) measured when the rules were made, by cell name ("bcast:1M").
  std::map<std::string, double> expected_speedup;
  double run_timeout_s = 120;
  std::string tag_prefix = "sentinel";
};

struct SentinelCellResult {
  SentinelCell cell;
  std::vector<double> tuned_us;
  std::vector<double> default_us;
  RatioInterval ratio;  // tuned / default
  std::optional<double> expected_speedup;
  std::string verdict;  // ok, regressed, advantage_lost, no_data
};

struct SentinelReport {
  std::vector<SentinelCellResult> cells;
  bool regression = false;
  int runs = 0;
  int failed_runs = 0;
  std::string first_failure;  // error of the first failed run
  double seconds = 0;         // wall time
  bool interrupted = false;

  nlohmann::json to_json() const;
  std::string to_text() const;
};

// Runs the check on `backend` (which must run the real Open MPI: the rules file is loaded by
// the library). Throws std::invalid_argument for bad options (no cells, a rules file that does
// not exist, a backend that cannot load rules files).
SentinelReport run_sentinel(Backend& backend, const SentinelOptions& options,
                            const CancelFlag& cancel);

}  // namespace colltune
