#include "bench/optimizer/simulation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "core/stats.h"
#include "optimizer/bayes_strategy.h"
#include "optimizer/final_choice.h"
#include "optimizer/kronecker_gp.h"
#include "optimizer/search_loop.h"
#include "optimizer/search_space.h"

namespace colltune::bench {
namespace {

const Choice* choice_for(const std::vector<Choice>& choices, std::int64_t size) {
  for (const auto& c : choices)
    if (c.msg_size == size) return &c;
  return nullptr;
}

}  // namespace

std::vector<Choice> oracle_choices(const Landscape& landscape, std::vector<Choice> picks) {
  for (auto& k : picks) {
    const auto best = landscape.optimal_config(k.msg_size);
    if (!best) continue;
    const auto* d = landscape.find(TuningConfig::default_decision(), k.msg_size);
    k.config = *best;
    k.latency_us = landscape.find(*best, k.msg_size)->truth;
    k.default_us = d ? d->truth : std::nan("");
    k.gain_sd = 0;
  }
  return picks;
}

std::vector<double> regrets(const Landscape& landscape, const std::vector<Choice>& choices) {
  std::vector<double> out;
  for (auto size : landscape.msg_sizes) {
    double best = landscape.optimum(size);
    const Choice* c = choice_for(choices, size);
    const LandscapePoint* p = landscape.find(c ? c->config : TuningConfig{}, size);
    out.push_back(p ? p->truth / best - 1.0 : std::nan(""));
  }
  return out;
}

bool on_target(const Landscape& landscape, const std::vector<Choice>& choices) {
  for (auto size : landscape.msg_sizes) {
    const Choice* c = choice_for(choices, size);
    if (!c) return false;
    const LandscapePoint* p = landscape.find(c->config, size);
    if (!p) return false;
    double best = landscape.optimum(size);
    if (p->truth > best * 1.01 && p->truth - best > p->noise_sd) return false;
  }
  return true;
}

SimulationResult simulate(const Landscape& landscape, const AlgorithmTable& table,
                          const SimulationOptions& options) {
  SearchSpace space(landscape.collective, landscape.comm_size, table, landscape.configs());
  StrategyOptions so;
  so.seed = options.seed;
  so.budget = options.budget;
  so.budget_seconds = options.budget_seconds;
  so.msg_sizes = landscape.msg_sizes;
  so.cost = options.cost;
  so.stop_rule = options.stop_rule;
  so.settings = options.settings;
  auto strategy = make_strategy(options.strategy, space, so);

  SimulationResult r;
  r.space_size = space.size();
  Rng draws(options.seed * 0x9E3779B97F4A7C15ULL + 0xD1B54A32D192ED03ULL);
  std::vector<double> decision_ms;

  std::set<TuningConfig> searched;  // every configuration run during the search
  SearchLatencies search_latency;   // what the search measured (for the paired final phase)
  bool searching = true;
  auto run = [&](const TuningConfig& config) -> Evaluation {
    std::vector<std::int64_t> sizes = strategy->msg_sizes_wanted(config);
    if (sizes.empty()) sizes = landscape.msg_sizes;
    Evaluation e;
    e.config = config;
    e.msg_sizes = sizes;
    e.latency_us = landscape.draw(config, sizes, draws);
    e.failed = std::none_of(e.latency_us.begin(), e.latency_us.end(),
                            [](double x) { return std::isfinite(x); });
    r.benchmark_seconds += options.cost.run_seconds(e.msg_sizes, e.latency_us);
    ++r.runs;
    searched.insert(space.canonical(config));
    if (searching)
      for (std::size_t i = 0; i < e.msg_sizes.size(); ++i)
        if (std::isfinite(e.latency_us[i]) && !e.failed)
          search_latency[e.msg_sizes[i]][config].push_back(e.latency_us[i]);
    return e;
  };
  // Runs-to-target counts observed runs: the loop observes a batch after all of it ran.
  int observed_runs = 0;
  auto after_observe = [&] {
    ++observed_runs;
    if (!r.runs_to_target && on_target(landscape, strategy->recommend()))
      r.runs_to_target = observed_runs;
  };

  // The search: the campaign engine's loop (optimizer/search_loop.h), each batch drawn from the
  // landscape instead of run on a backend.
  class LandscapeRunner : public BatchRunner {
   public:
    LandscapeRunner(std::function<Evaluation(const TuningConfig&)> draw,
                    std::function<void()> after_observe)
        : draw_(std::move(draw)), after_observe_(std::move(after_observe)) {}
    std::optional<std::vector<Measurement>> run(const SearchBatch& batch) override {
      std::vector<Measurement> out;
      for (const auto& item : batch.items) out.push_back({item.context, draw_(item.config)});
      return out;
    }
    void observed(const Evaluation&) override { after_observe_(); }

   private:
    std::function<Evaluation(const TuningConfig&)> draw_;
    std::function<void()> after_observe_;
  };
  LandscapeRunner runner(run, after_observe);
  const SearchLoopResult search = run_search_loop(*strategy, runner, options.batch);
  for (double s : search.decision_seconds) decision_ms.push_back(s * 1000.0);
  r.jobs += static_cast<int>(search.batches);
  r.search_runs = r.runs;
  r.search_seconds = r.benchmark_seconds;
  searching = false;
  for (std::int64_t size : landscape.msg_sizes) {
    const double best = landscape.optimum(size);
    bool found = false;
    for (const auto& [config, by_size] : landscape.points) {
      auto it = by_size.find(size);
      if (it != by_size.end() && it->second.truth == best && searched.count(config)) found = true;
    }
    r.optimum_searched.push_back(found);
  }
  std::map<std::int64_t, std::map<TuningConfig, std::vector<double>>> final_samples;
  if (options.final_pick != "paired" && options.finalists > 0 && options.final_repeats > 0) {
    // As the campaign engine does: the finalists and the default, side by side, in one job.
    const std::set<TuningConfig> finalists = final_candidates(*strategy, options.finalists, &space);
    ++r.jobs;
    for (int rep = 0; rep < options.final_repeats; ++rep)
      for (const auto& c : finalists) {
        Evaluation e = run(c);
        strategy->observe(e);
        after_observe();
        for (std::size_t i = 0; i < e.msg_sizes.size(); ++i)
          if (std::isfinite(e.latency_us[i]))
            final_samples[e.msg_sizes[i]][c].push_back(e.latency_us[i]);
      }
  }
  r.choices = strategy->recommend();
  if (options.final_pick == "paired") {
    PairedFinalOptions po;
    po.final_repeats = options.final_repeats;
    po.cost = options.cost;
    const PairedFinalDraw fin =
        draw_paired_final(landscape, space, r.choices, strategy->finalists(options.finalists),
                          search_latency, r.search_runs, po, draws);
    r.choices = fin.choices;
    r.runs += fin.runs;
    r.jobs += fin.looks;
    r.benchmark_seconds += fin.benchmark_seconds;
    r.final_looks = fin.looks;
    r.final_nominees = fin.nominees;
    r.nominated_sizes = fin.nominated_sizes;
    r.proven_sizes = fin.proven_sizes;
  }
  r.final_runs = r.runs - r.search_runs;
  if (options.final_pick == "engine" && !final_samples.empty()) {
    for (auto& choice : r.choices) {
      auto it = final_samples.find(choice.msg_size);
      if (it != final_samples.end()) choice.config = pick_within_noise(it->second).config;
    }
  }
  if (!r.runs_to_target && on_target(landscape, r.choices)) r.runs_to_target = r.runs;
  r.stop_reason = strategy->stop_reason();
  if (const auto* bo = dynamic_cast<const BayesStrategy*>(strategy.get())) {
    if (auto theta = bo->hyperparameters()) {
      r.hyperparameters.assign(theta->data(), theta->data() + theta->size());
      Eigen::VectorXd u(3);
      u << 0.0, 0.5, 1.0;
      Eigen::VectorXd sd = KroneckerGp::noise_log_variance(*theta, u).cwiseSqrt();
      r.noise_sd = {sd[0], sd[1], sd[2]};
    }
  }
  r.regrets = regrets(landscape, r.choices);
  std::vector<double> finite;
  for (double x : r.regrets)
    if (std::isfinite(x)) finite.push_back(x);
  if (!finite.empty()) {
    double sum = 0;
    for (double x : finite) sum += x;
    r.regret_mean = sum / finite.size();
    r.regret_median = median(finite);
    r.regret_max = *std::max_element(finite.begin(), finite.end());
  }
  r.decision_ms = median(decision_ms);
  r.decision_ms_max =
      decision_ms.empty() ? 0 : *std::max_element(decision_ms.begin(), decision_ms.end());
  return r;
}

nlohmann::json to_json(const Landscape& landscape, const SimulationOptions& options,
                       const SimulationResult& r) {
  nlohmann::json choices = nlohmann::json::array();
  for (const auto& c : r.choices)
    choices.push_back({{"msg_size", c.msg_size},
                       {"algorithm", c.config.algorithm},
                       {"segsize", c.config.segsize},
                       {"fanout", c.config.fanout}});
  nlohmann::json to_target = nullptr;
  if (r.runs_to_target) to_target = *r.runs_to_target;
  return {{"strategy", options.strategy},
          {"seed", options.seed},
          {"collective", std::string(name(landscape.collective))},
          {"comm_size", landscape.comm_size},
          {"configs", r.space_size},
          {"runs", r.runs},
          {"search_runs", r.search_runs},
          {"final_runs", r.final_runs},
          {"jobs", r.jobs},
          {"benchmark_seconds", r.benchmark_seconds},
          {"regret_mean", r.regret_mean},
          {"regret_median", r.regret_median},
          {"regret_max", r.regret_max},
          {"regrets", r.regrets},
          {"optimum_searched", r.optimum_searched},
          {"runs_to_target", to_target},
          {"decision_ms", r.decision_ms},
          {"decision_ms_max", r.decision_ms_max},
          {"stop_reason", r.stop_reason},
          {"hyperparameters", r.hyperparameters},
          {"noise_sd_small_mid_large", r.noise_sd},
          {"choices", choices}};
}

PairedFinalDraw draw_paired_final(const Landscape& landscape, const SearchSpace& space,
                                  const std::vector<Choice>& picks,
                                  const std::vector<TuningConfig>& finalists,
                                  const SearchLatencies& search, int search_runs,
                                  const PairedFinalOptions& options, Rng& draws) {
  PairedFinalDraw out;
  const std::vector<std::int64_t>& sizes = landscape.msg_sizes;
  std::set<std::int64_t> riders;
  const std::map<std::int64_t, TuningConfig> nominated =
      final_nominees(picks, finalists, search, space, options.model, &riders);
  std::set<TuningConfig> distinct;
  for (const auto& [size, config] : nominated) distinct.insert(config);
  out.nominated_sizes = static_cast<int>(nominated.size());
  out.nominees = static_cast<int>(distinct.size());
  SequentialOptions seq;
  seq.min_gain = options.min_gain;
  seq.max_runs =
      final_run_cap(search_runs, options.final_repeats, static_cast<int>(distinct.size()));
  seq.test.looks = planned_looks(1 + static_cast<int>(distinct.size()), seq);
  // Per candidate, per message size: log(candidate / default) of every round's pair.
  std::map<TuningConfig, std::vector<std::vector<double>>> log_ratios;
  std::map<TuningConfig, std::vector<PairedInterval>> intervals;
  std::set<TuningConfig> unaffordable;            // left out of a look by the campaign's budget
  std::set<TuningConfig> leftover_looked;         // given a leftover first look
  if (options.state && options.state->started) {  // going on from the size's earlier phase
    out = options.state->drawn;
    log_ratios = options.state->log_ratios;
    intervals = options.state->intervals;
    out.untested_sizes = out.proven_sizes = 0;
    out.choices.clear();
  }
  const double seconds_before = out.benchmark_seconds;
  // One run over the look's message sizes (look_size_span); NaN at the sizes outside them.
  auto draw = [&](const TuningConfig& c, std::size_t lo, std::size_t hi) {
    const std::vector<std::int64_t> span(sizes.begin() + lo, sizes.begin() + hi + 1);
    const std::vector<double> lat = landscape.draw(space.canonical(c), span, draws);
    out.benchmark_seconds += options.cost.run_seconds(span, lat);
    ++out.runs;
    std::vector<double> all(sizes.size(), std::nan(""));
    std::copy(lat.begin(), lat.end(), all.begin() + static_cast<std::ptrdiff_t>(lo));
    return all;
  };
  for (;;) {
    std::set<TuningConfig> open;
    for (const auto& c : open_nominees(nominated, sizes, intervals, seq.min_gain, riders))
      if (!unaffordable.count(c)) open.insert(c);
    if (open.empty()) break;
    int rounds = next_look_rounds(out.looks, out.runs, static_cast<int>(open.size()) + 1, seq);
    bool leftover_look = false;
    if (rounds == 0 && options.leftover) {  // a first look past the size's looks and cap
      std::set<TuningConfig> first_looks;
      for (const auto& c : untested_nominees(nominated, sizes, open, intervals))
        if (!leftover_looked.count(c)) first_looks.insert(c);  // once, as the engine
      open = std::move(first_looks);
      if (!open.empty()) rounds = seq.rounds_per_look, leftover_look = true;
    }
    if (rounds == 0) break;
    if (options.unspent_node_seconds) {
      const FinalLookBudget budget{*options.unspent_node_seconds -
                                       (out.benchmark_seconds - seconds_before) * options.nodes -
                                       options.reserved_after,
                                   options.run_price, options.planned, options.leftover};
      const std::set<TuningConfig> paid =
          affordable_nominees(nominated, open, rounds, budget, out.looks == 0 && !options.leftover);
      record_look(open, paid, leftover_look, &unaffordable, &leftover_looked);
      open = paid;
      if (open.empty()) break;
    }  // a leftover look (options.leftover) always has a budget
    const auto span = look_size_span(nominated, open);
    const auto lo = static_cast<std::size_t>(std::find(sizes.begin(), sizes.end(), span->first) -
                                             sizes.begin());
    const auto hi = static_cast<std::size_t>(std::find(sizes.begin(), sizes.end(), span->second) -
                                             sizes.begin());
    for (int r = 0; r < rounds; ++r) {
      const std::vector<double> fixed = draw(TuningConfig::default_decision(), lo, hi);
      for (const auto& c : open) {
        const std::vector<double> lat = draw(c, lo, hi);
        auto& lr = log_ratios[c];
        lr.resize(sizes.size());
        for (std::size_t i = 0; i < sizes.size(); ++i)
          if (lat[i] > 0 && fixed[i] > 0 && std::isfinite(lat[i]) && std::isfinite(fixed[i]))
            lr[i].push_back(std::log(lat[i] / fixed[i]));
      }
    }
    ++out.looks;
    for (const auto& [c, lr] : log_ratios) {
      std::vector<const std::vector<std::vector<double>>*> same;
      for (const PairedFinalState* other : options.lent)
        if (auto it = other->log_ratios.find(c); it != other->log_ratios.end())
          same.push_back(&it->second);
      intervals[c] = paired_intervals(lr, seq.min_gain, seq.test, same);
    }
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Choice choice{sizes[i], TuningConfig::default_decision(), 0, 0};
    if (auto n = nominated.find(sizes[i]); n != nominated.end() && !intervals.count(n->second))
      out.untested_sizes += unaffordable.count(n->second) > 0;
    if (auto n = nominated.find(sizes[i]); n != nominated.end())
      if (auto it = intervals.find(n->second);
          it != intervals.end() && it->second[i].verdict == PairedVerdict::faster) {
        choice.config = n->second;
        ++out.proven_sizes;
      }
    out.choices.push_back(choice);
  }
  if (options.state) *options.state = {true, out, log_ratios, intervals};
  return out;
}

RemeasureDraw draw_remeasure(const Landscape& landscape, const SearchSpace& space,
                             std::vector<Choice> choices, int rounds, const BenchmarkCost& cost,
                             Rng& draws) {
  RemeasureDraw out;
  const std::vector<std::int64_t>& sizes = landscape.msg_sizes;
  // The file: what each message size runs with it loaded.
  std::vector<TuningConfig> file(sizes.size(), TuningConfig::default_decision());
  for (const auto& c : choices) {
    const auto at = std::find(sizes.begin(), sizes.end(), c.msg_size);
    const TuningConfig config = space.canonical(c.config);
    if (at != sizes.end() && landscape.find(config, c.msg_size))
      file[static_cast<std::size_t>(at - sizes.begin())] = config;
  }
  const std::set<TuningConfig> distinct(file.begin(), file.end());
  auto run = [&](const std::vector<double>& lat) {
    out.benchmark_seconds += cost.run_seconds(sizes, lat);
    ++out.runs;
  };
  PairedTestOptions test;
  test.looks = 2;
  std::vector<std::vector<double>> d(sizes.size());
  std::vector<PairedInterval> intervals;
  for (int look = 0; look < test.looks; ++look) {
    ++out.looks;
    for (int r = 0; r < rounds; ++r) {
      // Sizes are drawn independently (Landscape::draw), so one draw per configuration gives
      // the file's run at every size that runs it.
      std::map<TuningConfig, std::vector<double>> by_config;
      for (const auto& c : distinct) by_config[c] = landscape.draw(c, sizes, draws);
      std::vector<double> with(sizes.size());
      for (std::size_t i = 0; i < sizes.size(); ++i) with[i] = by_config.at(file[i])[i];
      const std::vector<double> without =
          landscape.draw(TuningConfig::default_decision(), sizes, draws);
      run(with);
      run(without);
      for (std::size_t i = 0; i < sizes.size(); ++i)
        if (with[i] > 0 && without[i] > 0 && std::isfinite(with[i]) && std::isfinite(without[i]))
          d[i].push_back(std::log(with[i] / without[i]));
    }
    intervals = paired_intervals(d, 0.0, test);
    bool suspect = false;
    for (std::size_t i = 0; i < sizes.size(); ++i)
      suspect = suspect || (!file[i].is_default() && intervals[i].verdict == PairedVerdict::open &&
                            intervals[i].ratio > 1);
    if (!suspect) break;
  }
  for (auto& c : choices) {
    const auto at = std::find(sizes.begin(), sizes.end(), c.msg_size);
    if (at == sizes.end()) continue;
    const auto i = static_cast<std::size_t>(at - sizes.begin());
    if (file[i].is_default() || intervals[i].verdict != PairedVerdict::slower) continue;
    c.config = TuningConfig::default_decision();
    ++out.reverted;
  }
  out.choices = std::move(choices);
  return out;
}

}  // namespace colltune::bench
