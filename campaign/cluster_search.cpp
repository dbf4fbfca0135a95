#include "campaign/cluster_search.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_states.h"
#include "campaign/context_request.h"
#include "campaign/context_result.h"
#include "campaign/final_choice.h"
#include "campaign/retune_warm_start.h"
#include "campaign/search_jobs.h"
#include "optimizer/cluster_strategy.h"
#include "optimizer/cluster_warm_start.h"
#include "optimizer/paired_final.h"
#include "optimizer/search_loop.h"
#include "optimizer/search_space.h"
#include "optimizer/strategy.h"

namespace colltune {
namespace {

// The finished search of a ClusterStrategy seen from one of its sizes, for the engine's final
// phase (run_context): it suggests nothing and names the finalists and picks of that size.
class ClusterSizeView : public Strategy {
 public:
  ClusterSizeView(const ClusterStrategy& cluster, int comm_size, int evaluations)
      : cluster_(cluster), comm_size_(comm_size), evaluations_(evaluations) {}
  std::string name() const override { return cluster_.name(); }
  std::vector<TuningConfig> suggest(int) override { return {}; }
  void observe(const Evaluation&) override {}
  bool done() const override { return true; }
  int planned_evaluations() const override { return evaluations_; }
  int reused_runs() const override { return cluster_.reused_runs(comm_size_); }
  std::vector<TuningConfig> finalists(int per_size) const override {
    return cluster_final_candidates(cluster_, comm_size_, per_size);
  }
  std::vector<Choice> recommend() const override {
    std::vector<Choice> out;
    for (const auto& c : cluster_.recommend({comm_size_}, 0.0))
      out.push_back({c.msg_size, c.config, c.latency_us, c.default_us});
    return out;
  }
  VersusDefault versus_default(const std::set<TuningConfig>& configs) const override {
    return cluster_.versus_default(comm_size_, configs);
  }
  int evaluations() const override { return evaluations_; }
  // None of its own: the whole-cluster search keeps its state on the group's lead.
  nlohmann::json state() const override { return nullptr; }
  void restore(const nlohmann::json&) override {}

 private:
  const ClusterStrategy& cluster_;
  int comm_size_;
  int evaluations_;
};

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nullptr; }

// The search's options for one collective over `sizes`, but for the seed.
ClusterStrategyOptions cluster_options(const CampaignSpec& spec, Collective collective,
                                       std::vector<ClusterSize> sizes) {
  ClusterStrategyOptions options;
  options.msg_sizes = osu_message_sizes(collective, spec.min_size, spec.max_size);
  options.sizes = std::move(sizes);
  const int per_size = spec.stop.max_evaluations > 0 ? spec.stop.max_evaluations : spec.budget;
  options.budget = spec.cluster.budget > 0 ? spec.cluster.budget
                   : per_size > 0          ? per_size * static_cast<int>(options.sizes.size())
                                           : 0;
  options.budget_node_seconds = spec.cluster.budget_node_seconds;
  // Every OSU size runs warm-up + timed iterations (as the sim and replay backends count them).
  for (auto m : options.msg_sizes) options.calls_per_run[m] = spec.iterations + spec.warmup;
  options.settings = spec.cluster.settings;
  return options;
}

}  // namespace

std::vector<std::vector<ContextRecord>> cluster_groups(const std::vector<ContextRecord>& contexts) {
  std::vector<std::vector<ContextRecord>> groups;
  std::map<Collective, std::size_t> index;
  for (const auto& c : contexts) {
    auto [it, inserted] = index.emplace(c.collective, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(c);
  }
  for (auto& g : groups)
    std::stable_sort(g.begin(), g.end(), [](const ContextRecord& a, const ContextRecord& b) {
      return a.comm_size < b.comm_size;
    });
  return groups;
}

const ContextRecord& cluster_lead(const std::vector<ContextRecord>& group) {
  const ContextRecord* lead = &group.front();
  for (const auto& c : group)
    if (c.id < lead->id) lead = &c;
  return *lead;
}

const ContextRecord& nearest_measured(const std::vector<ContextRecord>& group, int comm_size) {
  const ContextRecord* best = &group.front();
  for (const auto& c : group)
    if (std::abs(std::log2(double(c.comm_size) / comm_size)) <
        std::abs(std::log2(double(best->comm_size) / comm_size)))
      best = &c;
  return *best;
}

PredictedLayout predicted_layout(const std::vector<ContextRecord>& group, int comm_size) {
  const ContextRecord& near = nearest_measured(group, comm_size);
  PredictedLayout out;
  out.from_comm_size = near.comm_size;
  out.nodes = std::max(1, std::min(near.nodes, comm_size));
  out.ppn = comm_size % out.nodes == 0 ? comm_size / out.nodes : 0;
  return out;
}

std::vector<int> cluster_prediction_sizes(const std::vector<int>& measured, int max_comm_size) {
  const std::set<int> known(measured.begin(), measured.end());
  std::set<int> out;
  if (max_comm_size <= 256) {
    for (int p = 2; p <= max_comm_size; ++p) out.insert(p);
  } else {
    for (long long p = 2; p <= max_comm_size; p *= 2) {
      out.insert(static_cast<int>(p));
      if (3 * p / 2 <= max_comm_size && p >= 4) out.insert(static_cast<int>(3 * p / 2));
    }
  }
  std::vector<int> result;
  for (int p : out)
    if (!known.count(p)) result.push_back(p);
  return result;
}

nlohmann::json cluster_report(const std::vector<ContextRecord>& contexts,
                              const AlgorithmTable& table) {
  nlohmann::json collectives = nlohmann::json::array();
  nlohmann::json predicted = nlohmann::json::array();
  for (const auto& group : cluster_groups(contexts)) {
    const ContextRecord* lead = &cluster_lead(group);
    if (!lead->result.is_object() || !lead->result.contains("cluster")) continue;
    const auto& cluster = lead->result.at("cluster");
    const std::string coll(name(lead->collective));
    nlohmann::json summary = cluster;
    summary.erase("predicted");
    summary["collective"] = coll;
    summary["above"] = "default";
    collectives.push_back(summary);
    for (const auto& p : cluster.at("predicted")) {
      const int comm_size = p.at("comm_size").get<int>();
      const PredictedLayout layout = predicted_layout(group, comm_size);
      const auto best = p.at("best").get<TuningConfig>();
      nlohmann::json entry = {
          {"collective", coll},
          {"comm_size", comm_size},
          {"msg_size", p.at("msg_size")},
          {"source", "predicted"},
          {"best", best},
          {"best_name", table.algorithm_name(lead->collective, best.algorithm)},
          {"confidence", p.at("confidence")},
          {"default_us", p.at("default_us")},
          {"best_us", best.is_default() ? p.at("default_us") : p.at("latency_us")},
          {"layout_from", layout.from_comm_size},
          {"layout",
           {{"nodes", layout.nodes},
            {"ppn", layout.ppn > 0 ? nlohmann::json(layout.ppn) : nlohmann::json(nullptr)}}},
          {"note", p.value("note", std::string())}};
      if (p.contains("previous_best")) entry["previous_best"] = p.at("previous_best");
      const auto& d = entry["default_us"];
      const auto& b = entry["best_us"];
      entry["speedup"] = best.is_default() ? nlohmann::json(1.0)
                         : d.is_number() && b.is_number() && b.get<double>() > 0
                             ? nlohmann::json(d.get<double>() / b.get<double>())
                             : nlohmann::json(nullptr);
      predicted.push_back(std::move(entry));
    }
  }
  if (collectives.empty()) return nullptr;
  return {{"collectives", collectives}, {"predicted", predicted}};
}

EngineOutcome CampaignEngine::run_cluster_group(const CampaignRecord& campaign,
                                                const CampaignSpec& spec,
                                                const std::vector<ContextRecord>& group,
                                                const CancelFlag& cancel) {
  const Collective collective = group.front().collective;
  const ContextRecord* lead = &cluster_lead(group);

  std::vector<ClusterSize> sizes;
  for (const auto& c : group) sizes.push_back({c.comm_size, c.nodes, c.ppn, 0});
  ClusterStrategyOptions options = cluster_options(spec, collective, sizes);
  options.seed = spec.seed * 1000003ULL + static_cast<std::uint64_t>(lead->id);
  // A budget for the whole campaign: the search stops where what it spent and the first looks
  // of every nominee its model has (those that what is left could pay for), at the prices its
  // runs taught it, reach the total (docs/whole-cluster.md). A size's nominees as the final phase
  // will find them: from the strategy and what the search measured there (the store's runs: those
  // the strategy observed when it asks for the reserve, before a batch).
  const double total = spec.cluster.total_node_seconds;
  // What the campaign's runs at the group's sizes have cost, in node-seconds (those of one
  // purpose only, when given).
  auto group_node_seconds = [&](std::optional<JobPurpose> only = std::nullopt) {
    double sum = 0;
    for (const auto& c : group)
      for (const auto& run : store_.runs_of_context(c.id))
        if (!only || run.purpose == *only)
          sum += observed_seconds(run.provenance) * std::max(1, c.nodes);
    return sum;
  };
  if (total > 0) {
    options.budget_node_seconds = total;
    std::vector<int> comm_sizes;
    std::map<int, std::int64_t> context_of;
    for (const auto& c : group) {
      comm_sizes.push_back(c.comm_size);
      context_of[c.comm_size] = c.id;
    }
    options.reserve = [&, comm_sizes, context_of](const ClusterStrategy& strategy) {
      return first_look_reserve(
          strategy, comm_sizes, spec.final_candidates,
          [&](int p) {
            return search_latencies(store_.runs_of_context(context_of.at(p), JobPurpose::search));
          },
          collective, table_, total - group_node_seconds());
    };
  }
  // A re-tune (spec.warm_start_from) starts from the earlier campaign's picks and runs at each
  // comm size it shares (campaign/retune_warm_start.h). Its runs are data only without a
  // node-second budget: the strategy prices runs itself, so old runs would spend that budget.
  // The re-measured points replace bo-cluster's own initial design, as for bo per context.
  // A resume keeps the kind of strategy its saved state was made by.
  const auto& saved = lead->optimizer_state;
  const bool saved_plain = saved.is_object() && !saved.contains("warm_start");
  const bool saved_warm = saved.is_object() && saved.contains("warm_start");
  ClusterWarmStart warm = saved_plain ? ClusterWarmStart{}
                                      : cluster_warm_start(store_, spec.warm_start_from, group,
                                                           options.budget_node_seconds <= 0);
  std::unique_ptr<ClusterStrategy> strategy;
  WarmStartedClusterStrategy* warm_started = nullptr;
  if (warm.empty() && !saved_warm) {
    strategy = make_cluster_strategy(spec.cluster.strategy, collective, table_, options);
  } else {
    ClusterStrategyOptions inner = options;
    if (inner.budget > 0) inner.budget += static_cast<int>(warm.prior_runs());
    if (spec.cluster.strategy == "bo-cluster") {
      if (!inner.settings.contains("initial_points")) inner.settings["initial_points"] = 1;
      if (!inner.settings.contains("design_defaults")) inner.settings["design_defaults"] = false;
    }
    auto wrapped = std::make_unique<WarmStartedClusterStrategy>(
        make_cluster_strategy(spec.cluster.strategy, collective, table_, inner), std::move(warm),
        options.budget);
    warm_started = wrapped.get();
    strategy = std::move(wrapped);
  }
  if (!lead->optimizer_state.is_null()) strategy->restore(lead->optimizer_state);

  // The search: the loop every campaign runs (optimizer/search_loop.h), over one job per size
  // a batch touches (campaign/search_jobs.h); the strategy's state is saved on the lead. An
  // interrupted batch is finished first (its jobs exist, with the state after suggest()).
  bool final_started = false;
  std::size_t search_jobs = 0;
  for (const auto& job : store_.jobs(campaign.id)) {
    if (std::none_of(group.begin(), group.end(),
                     [&](const ContextRecord& c) { return c.id == job.context_id; }))
      continue;
    final_started |= job.purpose == JobPurpose::final;
    search_jobs += job.purpose == JobPurpose::search;
  }
  auto over_time_budget = [&] {
    return spec.stop.max_benchmark_seconds > 0 &&
           campaign_benchmark_seconds(store_, campaign.id) >= spec.stop.max_benchmark_seconds;
  };
  const bool all_done = std::all_of(group.begin(), group.end(), [](const ContextRecord& c) {
    return c.state == ContextState::done;
  });
  if (!final_started && !all_done) {
    // The search's events name the whole group: its lead context and every size.
    std::vector<int> group_sizes;
    std::size_t space_total = 0;
    for (const auto& c : group) {
      group_sizes.push_back(c.comm_size);
      space_total += SearchSpace(collective, c.comm_size, table_).size();
    }
    const nlohmann::json group_info = {{"context_id", lead->id},
                                       {"collective", std::string(name(collective))},
                                       {"comm_size", group.back().comm_size},
                                       {"comm_sizes", group_sizes},
                                       {"planned", strategy->max_evaluations()}};
    nlohmann::json started = group_info;
    if (total > 0) started["node_seconds"] = {{"total", total}, {"reserve", "first_looks"}};
    started["space"] = space_total;
    emit(campaign.id, "context_started", started, true);
    for (const auto& c : group) store_.set_context_state(c.id, ContextState::searching);
    std::map<int, std::int64_t> contexts;
    for (const auto& c : group) contexts[c.comm_size] = c.id;
    ClusterSearch searcher(*strategy, contexts);
    SearchJobRunner runner(
        store_, executor_, spec,
        {campaign.id, backend_.name(), group, lead->id, options.seed, search_jobs + 1}, searcher,
        cancel, over_time_budget, [&](const std::string& type, nlohmann::json payload) {
          emit(campaign.id, type, std::move(payload), true);
        });
    const SearchLoopResult search = run_search_loop(searcher, runner, spec.batch_size);
    if (search.end == SearchEnd::interrupted) return EngineOutcome::interrupted;
    // Why the search over all sizes ended (progress displays say so; the sizes' final phases
    // that follow report no search of their own), with the runs it made at all sizes.
    int runs = 0;
    for (const auto& job : store_.jobs(campaign.id))
      if (job.purpose == JobPurpose::search &&
          std::any_of(group.begin(), group.end(),
                      [&](const ContextRecord& c) { return c.id == job.context_id; }))
        runs += static_cast<int>(store_.runs_of_job(job.id).size());
    nlohmann::json stopped = group_info;
    stopped["evaluations"] = runs;
    stopped["reason"] = search.end == SearchEnd::runner_stop ? "time_budget" : "done";
    stopped["stop_reason"] = strategy->stop_reason();
    emit(campaign.id, "search_stopped", stopped, true);
  }

  // The final phase of every measured size, as for a context of its own, smallest first. Under
  // a budget for the whole campaign (optimizer/paired_final.h): largest first (the dearest look
  // is decided while the most is left), the first looks of all sizes planned together on
  // what the search left, each run priced as the search priced its reserve
  // (the strategy's price of the default there, cluster_first_look), each look checked at
  // what its runs are expected to cost (final_look_budget); a size's nominees come from the
  // search alone, so they are known before any final phase runs.
  std::vector<std::size_t> order(group.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (total > 0) std::reverse(order.begin(), order.end());
  std::vector<FirstLookCandidate> candidates(order.size());  // in `order`
  FirstLookPlan plan;
  if (total > 0) {
    for (std::size_t k = 0; k < order.size(); ++k) {
      const ContextRecord& c = group[order[k]];
      // Its price serves its later looks too.
      candidates[k] =
          cluster_first_look(*strategy, c.comm_size, spec.final_candidates,
                             search_latencies(store_.runs_of_context(c.id, JobPurpose::search)),
                             SearchSpace(c.collective, c.comm_size, table_));
    }
    // On what the search left: a resume makes the plan the final phases started with (the
    // strategy's state and the search's runs are those it had then), so an interrupted
    // campaign ends as one never interrupted.
    plan = plan_final_looks(candidates, total - group_node_seconds(JobPurpose::search));
  }
  // One size's final phase (run_context: the view of the strategy at that size, the look
  // budget); a failure marks the size failed and ends the group.
  // The neighbours of each size (group is in increasing comm size): their final pairs lend
  // their variance to its intervals (run_context's lend_from).
  auto neighbours = [&](const ContextRecord& c) {
    std::vector<std::int64_t> ids;
    const auto at = static_cast<std::size_t>(
        std::find_if(group.begin(), group.end(),
                     [&](const ContextRecord& g) { return g.id == c.id; }) -
        group.begin());
    if (at > 0 && at < group.size()) ids.push_back(group[at - 1].id);
    if (at + 1 < group.size()) ids.push_back(group[at + 1].id);
    return ids;
  };
  auto final_phase = [&](const ContextRecord& c, const std::function<FinalLookBudget()>& budget) {
    int evaluations = 0;
    for (const auto& job : store_.jobs(campaign.id))
      if (job.context_id == c.id && job.purpose == JobPurpose::search)
        evaluations += static_cast<int>(store_.runs_of_job(job.id).size());
    ClusterSizeView view(*strategy, c.comm_size, evaluations);
    EngineOutcome outcome;
    try {
      outcome = run_context(campaign, spec, c, cancel, &view, budget, neighbours(c));
    } catch (const std::exception& e) {
      error_ =
          std::string(name(c.collective)) + " P=" + std::to_string(c.comm_size) + ": " + e.what();
      outcome = EngineOutcome::failed;
    }
    if (outcome == EngineOutcome::failed) store_.set_context_state(c.id, ContextState::failed);
    return outcome;
  };
  for (std::size_t k = 0; k < order.size(); ++k) {
    const ContextRecord& c = group[order[k]];
    if (c.state == ContextState::done) continue;
    // Its first pass ended (a resume): its leftover pass, if any, is below.
    if (const auto done = context_result_of(c.result); done && !done->final_passes.empty())
      continue;
    std::function<FinalLookBudget()> look_budget;
    if (total > 0)
      look_budget = [&, k] {
        return final_look_budget(plan, candidates, k, total - group_node_seconds());
      };
    const EngineOutcome outcome = final_phase(c, look_budget);
    if (outcome == EngineOutcome::interrupted || outcome == EngineOutcome::failed) return outcome;
  }
  // What the planned looks left unspent pays for more looks, in the same order
  // (leftover_look_budget): a size whose result has a nominee with no pair has its final phase
  // run again on all that is left, which adds further looks for its undecided nominees and a
  // first look for those no look tested when they fit, and recomputes the size's picks.
  // A size's leftover pass runs once (ContextResult::final_passes); one a resume finds started
  // (its first pass ended, the size not done) is finished, whatever is left.
  for (std::size_t k = 0; total > 0 && k < order.size(); ++k) {
    const std::optional<ContextRecord> c = store_.context(group[order[k]].id);
    const auto first = c ? context_result_of(c->result) : std::nullopt;
    if (!first || c->state == ContextState::failed || first->final_passes.size() != 1) continue;
    const bool started = c->state != ContextState::done;
    if (!started && group_node_seconds() >= total) continue;
    bool untested = false;
    for (const auto& pick : c->result.value("picks", nlohmann::json::array()))
      untested = untested || (!pick.value("candidate", nlohmann::json()).is_null() &&
                              pick.value("samples", 0) == 0);
    if (!untested) {
      if (started) store_.set_context_state(c->id, ContextState::done);
      continue;
    }
    const EngineOutcome outcome = final_phase(
        *c, [&, k] { return leftover_look_budget(candidates[k], total - group_node_seconds()); });
    if (outcome == EngineOutcome::interrupted || outcome == EngineOutcome::failed) return outcome;
  }

  // The predictions for the sizes not run, kept with the lead's result (recomputed from the
  // restored state on every resume: the strategy is deterministic).
  std::vector<int> measured;
  nlohmann::json layouts = nlohmann::json::array();
  for (const auto& c : group) {
    measured.push_back(c.comm_size);
    layouts.push_back({{"comm_size", c.comm_size},
                       {"nodes", c.nodes},
                       {"ppn", c.ppn > 0 ? c.ppn : c.comm_size / std::max(1, c.nodes)}});
  }
  const int max_comm_size = std::max(group.back().comm_size, spec.cluster.predict_up_to);
  // The final phase's runs are evaluations too: the model predicts from everything measured.
  // And what the final phase decided at each measured size (its paired test is stricter than
  // the search's medians): a prediction needs a proven gain next to it (below).
  auto stored = store_.contexts(campaign.id);
  std::map<int, std::map<std::int64_t, TuningConfig>> final_pick;
  for (const auto& c : stored) {
    if (c.collective != collective) continue;
    for (const auto& run : store_.runs_of_context(c.id, JobPurpose::final))
      strategy->observe(c.comm_size, evaluation_of(run));
    if (c.result.is_object())
      for (const auto& pick : c.result.value("picks", nlohmann::json::array()))
        final_pick[c.comm_size][pick.at("msg_size").get<std::int64_t>()] =
            pick.at("best").get<TuningConfig>();
  }
  // A re-tune: the earlier campaign's predictions, to say which recomputed blocks changed.
  std::map<std::pair<int, std::int64_t>, TuningConfig> previous;
  if (spec.warm_start_from > 0)
    for (const auto& group_before : cluster_groups(store_.contexts(spec.warm_start_from))) {
      const ContextRecord& lead_before = cluster_lead(group_before);
      if (lead_before.collective != collective || !lead_before.result.is_object() ||
          !lead_before.result.contains("cluster"))
        continue;
      for (const auto& p : lead_before.result.at("cluster").value("predicted", nlohmann::json()))
        previous[{p.at("comm_size").get<int>(), p.at("msg_size").get<std::int64_t>()}] =
            p.at("best").get<TuningConfig>();
    }
  int changed = 0, unchanged = 0, new_blocks = 0;
  nlohmann::json predicted = nlohmann::json::array();
  for (const auto& choice : strategy->recommend(cluster_prediction_sizes(measured, max_comm_size),
                                                spec.cluster.min_confidence)) {
    // A tuned prediction stands only when the final phase proved a gain (a non-default pick) at
    // this message size at the nearest measured size below or above; else the default wins.
    TuningConfig best = choice.config;
    std::string note;
    if (!best.is_default()) {
      bool backed = false;
      auto above = final_pick.upper_bound(choice.comm_size);
      if (above != final_pick.end()) {
        auto it = above->second.find(choice.msg_size);
        backed |= it != above->second.end() && !it->second.is_default();
      }
      if (above != final_pick.begin()) {
        auto below = std::prev(above);
        auto it = below->second.find(choice.msg_size);
        backed |= it != below->second.end() && !it->second.is_default();
      }
      if (!backed) {
        best = TuningConfig::default_decision();
        note = "no proven gain at the nearest measured sizes";
      }
    }
    nlohmann::json entry = {{"comm_size", choice.comm_size},
                            {"msg_size", choice.msg_size},
                            {"best", best},
                            {"confidence", choice.confidence},
                            {"latency_us", number_or_null(choice.latency_us)},
                            {"default_us", number_or_null(choice.default_us)}};
    if (!note.empty()) {
      entry["model_choice"] = choice.config;
      entry["note"] = note;
    }
    if (spec.warm_start_from > 0) {
      auto before = previous.find({choice.comm_size, choice.msg_size});
      if (before == previous.end()) {
        ++new_blocks;
      } else {
        entry["previous_best"] = before->second;
        ++(before->second == best ? unchanged : changed);
      }
    }
    predicted.push_back(std::move(entry));
  }
  auto lead_now = std::find_if(stored.begin(), stored.end(),
                               [&](const ContextRecord& c) { return c.id == lead->id; });
  nlohmann::json result =
      lead_now->result.is_object() ? lead_now->result : nlohmann::json::object();
  result["cluster"] = {{"strategy", strategy->name()},
                       {"stop_reason", strategy->stop_reason()},
                       {"min_confidence", spec.cluster.min_confidence},
                       {"measured", measured},
                       {"max_comm_size", max_comm_size},
                       {"layouts", layouts},
                       {"predicted", predicted}};
  if (spec.warm_start_from > 0) {
    // What the re-tune reused and re-measured, and which predictions it recomputed: all of
    // them (from old shifted and new runs); "changed" differ from the earlier campaign's.
    nlohmann::json w = warm_started ? warm_started->summary() : nlohmann::json::object();
    w["from_campaign"] = spec.warm_start_from;
    w["cold"] = !warm_started;
    w["predictions"] = {{"recomputed", predicted.size()},
                        {"changed", changed},
                        {"unchanged", unchanged},
                        {"new", new_blocks}};
    result["cluster"]["warm_start"] = w;
  }
  store_.save_context_result(lead->id, result);
  return EngineOutcome::completed;
}

}  // namespace colltune
