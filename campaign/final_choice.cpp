#include "campaign/final_choice.h"

#include <cmath>
#include <limits>
#include <set>

namespace colltune {

SizePick choose_for_size(std::int64_t msg_size,
                         const std::map<TuningConfig, std::vector<double>>& samples,
                         double min_tolerance) {
  SizePick out;
  out.msg_size = msg_size;
  const FinalPick pick = pick_within_noise(samples, min_tolerance);
  out.default_us =
      pick.default_measured ? pick.default_us : std::numeric_limits<double>::quiet_NaN();
  if (!pick.found) return out;
  out.best = pick.config;
  out.best_us = pick.median_us;
  out.noise = pick.noise;
  out.default_within_noise = pick.default_within_noise;
  out.samples = pick.samples;
  return out;
}

}  // namespace colltune

namespace colltune {

PairedFinalData paired_final_data(const std::vector<RunRecord>& runs,
                                  const std::vector<std::int64_t>& sizes) {
  PairedFinalData data;
  data.sizes = sizes;
  std::map<std::int64_t, std::size_t> index;
  for (std::size_t i = 0; i < sizes.size(); ++i) index[sizes[i]] = i;
  // (job, round) -> per size latency of the default and of each candidate
  std::map<std::pair<std::int64_t, int>, std::map<TuningConfig, std::map<std::size_t, double>>>
      rounds;
  std::set<std::int64_t> jobs;
  const TuningConfig fixed = TuningConfig::default_decision();
  for (const auto& run : runs) {
    ++data.runs;
    jobs.insert(run.job_id);
    auto& lat = data.latencies[run.config];
    lat.resize(sizes.size());
    if (run.outcome != RunOutcome::ok) continue;
    for (const auto& row : run.rows) {
      auto it = index.find(row.size);
      if (it == index.end() || !(row.avg_us > 0)) continue;
      lat[it->second].push_back(row.avg_us);
      rounds[{run.job_id, run.repeat}][run.config][it->second] = row.avg_us;
    }
  }
  data.jobs = static_cast<int>(jobs.size());
  for (const auto& [key, by_config] : rounds) {
    auto d = by_config.find(fixed);
    if (d == by_config.end()) continue;
    for (const auto& [config, by_size] : by_config) {
      if (config == fixed) continue;
      auto& lr = data.log_ratios[config];
      lr.resize(sizes.size());
      for (const auto& [i, us] : by_size)
        if (auto ds = d->second.find(i); ds != d->second.end())
          lr[i].push_back(std::log(us / ds->second));
    }
  }
  return data;
}

std::map<TuningConfig, std::vector<PairedInterval>> paired_final_intervals(
    const PairedFinalData& data, double min_gain, const PairedTestOptions& options,
    const std::vector<PairedFinalData>& lent) {
  std::map<TuningConfig, std::vector<PairedInterval>> out;
  for (const auto& [config, d] : data.log_ratios) {
    std::vector<const std::vector<std::vector<double>>*> same;
    for (const auto& other : lent)
      if (auto it = other.log_ratios.find(config);
          other.sizes == data.sizes && it != other.log_ratios.end())
        same.push_back(&it->second);
    out[config] = paired_intervals(d, min_gain, options, same);
  }
  return out;
}

SearchLatencies search_latencies(const std::vector<RunRecord>& search_runs) {
  SearchLatencies out;
  for (const auto& run : search_runs) {
    if (run.outcome != RunOutcome::ok) continue;
    for (const auto& row : run.rows) out[row.size][run.config].push_back(row.avg_us);
  }
  return out;
}

nlohmann::json paired_pick_json(
    std::int64_t msg_size, std::size_t size_index, const std::optional<TuningConfig>& candidate,
    const PairedFinalData& data,
    const std::map<TuningConfig, std::vector<PairedInterval>>& intervals,
    double fallback_default_us) {
  const TuningConfig fixed = TuningConfig::default_decision();
  auto latencies_of = [&](const TuningConfig& c) -> std::vector<double> {
    auto it = data.latencies.find(c);
    if (it == data.latencies.end() || size_index >= it->second.size()) return {};
    return it->second[size_index];
  };
  const std::vector<double> default_lat = latencies_of(fixed);
  const double default_us = default_lat.empty() ? fallback_default_us : median(default_lat);
  nlohmann::json pick = {
      {"msg_size", msg_size},
      {"method", "paired"},
      {"default_us", std::isfinite(default_us) ? nlohmann::json(default_us) : nlohmann::json()},
      {"noise", relative_noise(default_lat)},
      {"candidate", candidate ? nlohmann::json(*candidate) : nlohmann::json()}};
  PairedInterval iv;
  if (candidate)
    if (auto it = intervals.find(*candidate);
        it != intervals.end() && size_index < it->second.size())
      iv = it->second[size_index];
  const bool wins = candidate && iv.verdict == PairedVerdict::faster;
  const TuningConfig best = wins ? *candidate : fixed;
  const std::vector<double> best_lat = wins ? latencies_of(best) : default_lat;
  pick["best"] = best;
  pick["best_us"] = best_lat.empty() ? pick["default_us"] : nlohmann::json(median(best_lat));
  pick["default_within_noise"] = !wins;
  pick["samples"] = iv.pairs;
  pick.update(interval_json(iv));
  return pick;
}

nlohmann::json interval_json(const PairedInterval& iv) {
  const bool bounded = iv.pairs >= 2 && std::isfinite(iv.upper);
  return {{"pairs", iv.pairs},
          {"ratio", iv.pairs > 0 ? nlohmann::json(iv.ratio) : nlohmann::json()},
          {"ratio_low", bounded ? nlohmann::json(iv.lower) : nlohmann::json()},
          {"ratio_high", bounded ? nlohmann::json(iv.upper) : nlohmann::json()},
          {"confidence", iv.confidence},
          {"verdict", std::string(to_string(iv.verdict))}};
}

}  // namespace colltune
