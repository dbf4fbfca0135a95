#include "runner/sim/sim_model.h"

#include "core/algorithm_table.h"
#include "runner/sim/collective_schedules.h"
#include "runner/sim/noise.h"

namespace colltune::sim {

SimModel::SimModel(ClusterProfile profile, std::int64_t max_messages_per_call,
                   std::size_t max_cache_entries)
    : profile_(std::move(profile)),
      max_messages_(max_messages_per_call),
      max_cache_entries_(max_cache_entries) {}

SimModel SimModel::load(std::string_view name_or_path) {
  return SimModel(load_profile(name_or_path));
}

bool SimModel::models(Collective collective) { return sim_models(collective); }

namespace {

// What build_schedule needs for one call on `profile`'s cluster.
CallSpec model_call_spec(const ClusterProfile& profile, std::int64_t max_messages,
                         Collective collective, const Placement& placement,
                         const TuningConfig& config, std::int64_t msg_size) {
  CallSpec spec;
  spec.collective = collective;
  spec.comm_size = placement.comm_size;
  spec.config = config;
  spec.osu_size = msg_size;
  spec.knomial_radix = profile.knomial_radix;
  spec.forced_chain_fanout = profile.forced_chain_fanout;
  spec.max_messages = max_messages;
  return spec;
}

}  // namespace

SimModel::Key SimModel::key(Collective c, const Placement& p, const TuningConfig& config,
                            std::int64_t size) const {
  // Knobs the algorithm never reads do not change the result: cache them as 0.
  TuningConfig canonical = config;
  if (const auto* algs = AlgorithmTable::builtin_4_1().find(c)) {
    if (const auto* info = algs->find(config.algorithm)) {
      if (!info->uses_segsize) canonical.segsize = 0;
      if (!info->uses_fanout) canonical.fanout = 0;
    }
  }
  return {
      static_cast<int>(c), p.comm_size,       p.nodes,          p.ppn, static_cast<int>(p.mapping),
      canonical.algorithm, canonical.segsize, canonical.fanout, size};
}

SimResult SimModel::simulate(Collective collective, const Placement& placement,
                             const TuningConfig& config, std::int64_t msg_size) const {
  const Schedule schedule = build_schedule(
      model_call_spec(profile_, max_messages_, collective, placement, config, msg_size));
  return Simulator(profile_, placement).run(schedule);
}

Measurement SimModel::measure(Collective collective, const Placement& placement,
                              const TuningConfig& config, std::int64_t msg_size) const {
  const Key k = key(collective, placement, config, msg_size);
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(k); it != cache_.end()) return it->second;
  }
  Schedule schedule = build_schedule(
      model_call_spec(profile_, max_messages_, collective, placement, config, msg_size));
  const SimResult r = Simulator(profile_, placement).run(schedule);
  Measurement m{r.avg_us, r.min_us, r.max_us, std::move(schedule.trace)};
  std::lock_guard lock(mutex_);
  if (max_cache_entries_ > 0 && cache_.emplace(k, m).second) {
    cache_order_.push_back(k);
    while (cache_.size() > max_cache_entries_) {
      cache_.erase(cache_order_.front());
      cache_order_.pop_front();
    }
  }
  return m;
}

double SimModel::latency_us(Collective collective, const Placement& placement,
                            const TuningConfig& config, std::int64_t msg_size) const {
  return measure(collective, placement, config, msg_size).avg_us;
}

double SimModel::latency_us(Collective collective, int comm_size, const TuningConfig& config,
                            std::int64_t msg_size) const {
  return latency_us(collective, placement(comm_size), config, msg_size);
}

std::size_t SimModel::cache_size() const {
  std::lock_guard lock(mutex_);
  return cache_.size();
}

void SimModel::clear_cache() {
  std::lock_guard lock(mutex_);
  cache_.clear();
  cache_order_.clear();
}

NoisySampler::NoisySampler(const SimModel& model, std::uint64_t seed,
                           std::optional<NoiseModel> noise)
    : model_(model), noise_(noise.value_or(model.profile().noise)), seed_(seed) {}

double NoisySampler::sample_us(Collective collective, int comm_size, const TuningConfig& config,
                               std::int64_t msg_size) {
  RunNoise run(noise_, mix_seed(seed_, draws_++));
  return model_.latency_us(collective, comm_size, config, msg_size) * run.factor(msg_size);
}

OsuRow noisy_row(const Measurement& m, std::int64_t msg_size, double factor, int iterations) {
  OsuRow row;
  row.size = msg_size;
  row.avg_us = m.avg_us * factor;
  row.min_us = m.min_us * factor;
  row.max_us = m.max_us * factor;
  row.iterations = iterations;
  return row;
}

std::vector<OsuRow> NoisySampler::sample_run(Collective collective, const Placement& placement,
                                             const TuningConfig& config,
                                             const std::vector<std::int64_t>& sizes, int iterations,
                                             std::uint64_t run_seed) const {
  RunNoise run(noise_, mix_seed(seed_, run_seed));
  std::vector<OsuRow> rows;
  rows.reserve(sizes.size());
  for (std::int64_t size : sizes) {
    rows.push_back(noisy_row(model_.measure(collective, placement, config, size), size,
                             run.factor(size), iterations));
  }
  return rows;
}

}  // namespace colltune::sim
