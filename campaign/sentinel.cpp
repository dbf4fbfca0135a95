#include "campaign/sentinel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "campaign/campaign_spec.h"
#include "core/rng.h"
#include "core/stats.h"
#include "rules/rules_model.h"

namespace colltune {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string format_size(std::int64_t bytes) {
  if (bytes >= (1 << 30) && bytes % (1 << 30) == 0) return std::to_string(bytes >> 30) + "G";
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

class CollectingSink : public RunSink {
 public:
  void on_result(const RunResult& result) override { results.push_back(result); }
  std::vector<RunResult> results;
};

}  // namespace

std::vector<SentinelCell> parse_sentinel_cells(std::string_view text) {
  std::vector<SentinelCell> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string item(text.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    const auto colon = item.find(':');
    if (colon == std::string::npos)
      throw std::invalid_argument("cell '" + item + "': expected COLLECTIVE:SIZE, e.g. bcast:1M");
    const auto coll = parse_collective(item.substr(0, colon));
    if (!coll) throw std::invalid_argument("cell '" + item + "': unknown collective");
    if (!has_message_size(*coll))
      throw std::invalid_argument("cell '" + item + "': " + std::string(name(*coll)) +
                                  " has no message size");
    std::pair<std::int64_t, std::int64_t> size;
    try {
      size = parse_size_range(item.substr(colon + 1));
    } catch (const std::exception& e) {
      throw std::invalid_argument("cell '" + item + "': " + e.what());
    }
    if (size.first != size.second || size.first <= 0)
      throw std::invalid_argument("cell '" + item + "': one positive size expected");
    SentinelCell cell{*coll, size.first};
    if (std::find(out.begin(), out.end(), cell) == out.end()) out.push_back(cell);
  }
  if (out.empty()) throw std::invalid_argument("no cell given");
  return out;
}

std::string to_string(const SentinelCell& cell) {
  return std::string(name(cell.collective)) + ":" + format_size(cell.msg_size);
}

std::vector<SentinelCell> sentinel_cells_from_rules(const RulesModel& model, int comm_size,
                                                    int max_cells, std::int64_t min_size,
                                                    std::int64_t max_size) {
  std::vector<std::vector<SentinelCell>> per_collective;
  for (const auto& rules : model.collectives) {
    const auto coll = collective_from_ompi_id(rules.collective_id);
    if (!coll || !has_message_size(*coll)) continue;
    std::vector<SentinelCell> cells;
    // Runs of consecutive OSU sizes with the same configured choice; the largest size of each
    // tuned run stands for it.
    const auto sizes = osu_message_sizes(*coll, min_size, max_size);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const TuningConfig choice = configured_choice(model, *coll, comm_size, sizes[i]);
      const bool last_of_run = i + 1 == sizes.size() ||
                               configured_choice(model, *coll, comm_size, sizes[i + 1]) != choice;
      if (!choice.is_default() && last_of_run) cells.push_back({*coll, sizes[i]});
    }
    std::reverse(cells.begin(), cells.end());  // largest first: where tuning matters most
    if (!cells.empty()) per_collective.push_back(std::move(cells));
  }
  std::vector<SentinelCell> out;
  for (std::size_t k = 0; static_cast<int>(out.size()) < max_cells; ++k) {
    bool any = false;
    for (const auto& cells : per_collective)
      if (k < cells.size() && static_cast<int>(out.size()) < max_cells)
        out.push_back(cells[k]), any = true;
    if (!any) break;
  }
  return out;
}

RatioInterval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                     int samples, double confidence, std::uint64_t seed) {
  RatioInterval r;
  r.ratio = median(a) / median(b);
  if (a.empty() || b.empty() || samples <= 0) {
    r.low = r.high = r.ratio;
    return r;
  }
  Rng rng(seed);
  std::vector<double> ratios;
  ratios.reserve(samples);
  std::vector<double> ra(a.size()), rb(b.size());
  for (int s = 0; s < samples; ++s) {
    for (auto& x : ra) x = a[rng.below(a.size())];
    for (auto& x : rb) x = b[rng.below(b.size())];
    ratios.push_back(median(ra) / median(rb));
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1.0 - confidence) / 2.0;
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(ratios.size() - 1);
    const auto i = static_cast<std::size_t>(std::floor(pos));
    const double f = pos - static_cast<double>(i);
    return i + 1 < ratios.size() ? ratios[i] * (1 - f) + ratios[i + 1] * f : ratios[i];
  };
  r.low = at(tail);
  r.high = at(1.0 - tail);
  return r;
}

SentinelReport run_sentinel(Backend& backend, const SentinelOptions& options,
                            const CancelFlag& cancel) {
  if (!backend.runs_real_open_mpi())
    throw std::invalid_argument("the " + backend.name() +
                                " backend does not run Open MPI: it cannot load a rules file");
  if (options.rules_path.empty()) throw std::invalid_argument("no rules file given");
  const fs::path rules = fs::absolute(options.rules_path);
  if (!fs::is_regular_file(rules)) throw std::invalid_argument(rules.string() + ": no such file");
  if (options.cells.empty()) throw std::invalid_argument("no cell to measure");
  if (options.rounds < 3) throw std::invalid_argument("at least 3 rounds are needed");
  if (options.comm_size < 2) throw std::invalid_argument("at least 2 ranks are needed");

  const auto start = std::chrono::steady_clock::now();
  SentinelReport report;
  std::map<Collective, std::set<std::int64_t>> by_collective;
  for (const auto& c : options.cells) by_collective[c.collective].insert(c.msg_size);
  std::map<std::pair<Collective, std::int64_t>, std::pair<std::vector<double>, std::vector<double>>>
      samples;

  for (int round = 0; round < options.rounds && !report.interrupted; ++round) {
    Rng rng(options.seed * 1000003ULL + static_cast<std::uint64_t>(round));
    for (const auto& [coll, sizes] : by_collective) {
      const bool tuned_first = rng.below(2) == 0;
      for (int k = 0; k < 2; ++k) {
        if (cancel.cancelled()) {
          report.interrupted = true;
          break;
        }
        const bool tuned = (k == 0) == tuned_first;
        BenchmarkRequest r;
        r.tag = options.tag_prefix + "-r" + std::to_string(round + 1) + "-" +
                std::string(name(coll)) + (tuned ? "-tuned" : "-default");
        r.collective = coll;
        r.comm_size = options.comm_size;
        r.nodes = options.nodes;
        r.ppn = options.ppn;
        r.min_size = *sizes.begin();
        r.max_size = *sizes.rbegin();
        r.iterations = options.iterations;
        r.warmup = options.warmup;
        r.configs = {TuningConfig::default_decision()};
        r.repeats = 1;
        r.order_seed = options.seed + static_cast<std::uint64_t>(round);
        r.run_timeout_s = options.run_timeout_s;
        if (tuned) r.extra_mca = {{"coll_tuned_dynamic_rules_filename", rules.string()}};
        CollectingSink sink;
        backend.run(r, sink, cancel);
        for (const auto& result : sink.results) {
          ++report.runs;
          if (result.outcome != RunOutcome::ok) {
            ++report.failed_runs;
            if (report.first_failure.empty())
              report.first_failure = std::string(to_string(result.outcome)) + ": " + result.error;
          }
          for (const auto& row : result.rows) {
            if (!sizes.count(row.size) || !(row.avg_us > 0)) continue;
            auto& [t, d] = samples[{coll, row.size}];
            (tuned ? t : d).push_back(row.avg_us);
          }
        }
      }
      if (report.interrupted) break;
    }
  }

  for (std::size_t i = 0; i < options.cells.size(); ++i) {
    const auto& cell = options.cells[i];
    SentinelCellResult c;
    c.cell = cell;
    auto it = samples.find({cell.collective, cell.msg_size});
    if (it != samples.end()) c.tuned_us = it->second.first, c.default_us = it->second.second;
    if (auto e = options.expected_speedup.find(to_string(cell));
        e != options.expected_speedup.end())
      c.expected_speedup = e->second;
    if (c.tuned_us.size() < 3 || c.default_us.size() < 3) {
      c.ratio.ratio = c.ratio.low = c.ratio.high = std::numeric_limits<double>::quiet_NaN();
      if (!c.tuned_us.empty() && !c.default_us.empty())
        c.ratio.ratio = median(c.tuned_us) / median(c.default_us);
      c.verdict = "no_data";
    } else {
      c.ratio = bootstrap_median_ratio(c.tuned_us, c.default_us, options.bootstrap_samples,
                                       options.confidence, options.seed * 7919ULL + i);
      if (c.ratio.low > 1.0 + options.tolerance)
        c.verdict = "regressed";
      else if (c.expected_speedup && *c.expected_speedup >= 1.0 + 2 * options.tolerance &&
               1.0 / c.ratio.low < 1.0 + options.tolerance)
        c.verdict = "advantage_lost";
      else
        c.verdict = "ok";
    }
    report.regression =
        report.regression || c.verdict == "regressed" || c.verdict == "advantage_lost";
    report.cells.push_back(std::move(c));
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

json SentinelReport::to_json() const {
  json cells_json = json::array();
  auto number = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  for (const auto& c : cells)
    cells_json.push_back(
        {{"cell", to_string(c.cell)},
         {"collective", std::string(name(c.cell.collective))},
         {"msg_size", c.cell.msg_size},
         {"tuned_median_us", number(median(c.tuned_us))},
         {"default_median_us", number(median(c.default_us))},
         {"ratio", number(c.ratio.ratio)},
         {"ratio_low", number(c.ratio.low)},
         {"ratio_high", number(c.ratio.high)},
         {"samples_tuned", c.tuned_us.size()},
         {"samples_default", c.default_us.size()},
         {"expected_speedup", c.expected_speedup ? json(*c.expected_speedup) : json(nullptr)},
         {"verdict", c.verdict}});
  return {{"regression", regression},
          {"cells", cells_json},
          {"runs", runs},
          {"failed_runs", failed_runs},
          {"first_failure", first_failure},
          {"seconds", seconds},
          {"interrupted", interrupted}};
}

std::string SentinelReport::to_text() const {
  std::string out =
      "cell            tuned us  default us  tuned/default  95% interval      verdict\n";
  for (const auto& c : cells) {
    char line[256];
    std::snprintf(line, sizeof line, "%-14s %9s %11s %14s  [%s, %s]%*s%s\n",
                  to_string(c.cell).c_str(), fixed(median(c.tuned_us), 1).c_str(),
                  fixed(median(c.default_us), 1).c_str(), fixed(c.ratio.ratio, 2).c_str(),
                  fixed(c.ratio.low, 2).c_str(), fixed(c.ratio.high, 2).c_str(), 4, "",
                  c.verdict.c_str());
    out += line;
  }
  out += std::to_string(runs) + " runs (" + std::to_string(failed_runs) + " failed), " +
         fixed(seconds, 1) + " s";
  if (!first_failure.empty()) out += "; first failure: " + first_failure;
  out += "\n";
  out += regression ? "REGRESSION: the deployed rules no longer hold their advantage\n"
                    : "no regression: the tuned rules hold\n";
  return out;
}

}  // namespace colltune
