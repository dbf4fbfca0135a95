#include "optimizer/paired_final.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <tuple>

#include "core/stats.h"
#include "optimizer/expected_improvement.h"

namespace colltune {

std::map<std::int64_t, TuningConfig> final_nominees(const std::vector<Choice>& picks,
                                                    const std::vector<TuningConfig>& finalists,
                                                    const SearchLatencies& search,
                                                    const SearchSpace& space,
                                                    const VersusDefault& model,
                                                    std::set<std::int64_t>* riders) {
  std::set<TuningConfig> pool;
  for (const auto& c : finalists)
    if (!c.is_default()) pool.insert(c);
  std::map<std::int64_t, TuningConfig> nominated;
  for (const auto& choice : picks) {
    const std::int64_t size = choice.msg_size;
    std::optional<TuningConfig> nominee;
    if (!choice.config.is_default() && pool.count(choice.config)) {
      nominee = choice.config;
    } else if (auto at = search.find(size); at != search.end()) {
      double best = std::numeric_limits<double>::infinity();
      for (const auto& c : pool)
        if (auto it = at->second.find(c);
            it != at->second.end() && !it->second.empty() && median(it->second) < best) {
          best = median(it->second);
          nominee = c;
        }
      const auto d = at->second.find(TuningConfig::default_decision());
      if (nominee && d != at->second.end() && !d->second.empty() && !(best < median(d->second)))
        nominee.reset();
    }
    if (auto alias = space.default_alias(size); nominee && alias && *alias == *nominee)
      nominee.reset();
    if (nominee) nominated[size] = *nominee;
  }
  if (model.empty() || nominated.empty()) return nominated;
  // Below the largest size a nominee is nominated at, where none is: the nominee the model
  // expects to gain the most there.
  std::set<TuningConfig> nominees;
  for (const auto& [size, config] : nominated) nominees.insert(config);
  const std::int64_t top = nominated.rbegin()->first;
  std::map<std::int64_t, TuningConfig> extended;
  for (const auto& choice : picks) {
    const std::int64_t size = choice.msg_size;
    if (size >= top || nominated.count(size)) continue;
    const auto alias = space.default_alias(size);
    double most = kExtendGain;
    for (const auto& config : nominees) {
      const auto rows = model.find(config);
      if (rows == model.end() || (alias && *alias == config)) continue;
      for (const auto& row : rows->second) {
        if (row.msg_size == size && expected_gain(row) > most) {
          most = expected_gain(row);
          extended[size] = config;
        }
      }
    }
  }
  if (riders)
    for (const auto& [size, config] : extended) riders->insert(size);
  nominated.merge(extended);
  return nominated;
}

double expected_gain(const Choice& pick) {
  if (!(pick.latency_us > 0) || !std::isfinite(pick.default_us)) return 0;
  const double mu = std::log(pick.default_us / pick.latency_us), sd = pick.gain_sd;
  if (!(sd > 0)) return std::max(0.0, pick.default_us / pick.latency_us - 1);
  return std::exp(mu + sd * sd / 2) * normal_cdf((mu + sd * sd) / sd) - normal_cdf(mu / sd);
}

int final_run_cap(int search_runs, int final_repeats, int nominees) {
  return std::max(first_look_runs(nominees), std::min(search_runs, final_repeats * (1 + nominees)));
}

int first_look_runs(int nominees) { return 2 * (1 + nominees); }

double look_cost(int rounds, const std::set<TuningConfig>& tested,
                 const std::map<std::int64_t, TuningConfig>& nominated, const SpanPrice& price) {
  const auto span = look_size_span(nominated, tested);
  if (!span) return 0;
  double run = price(TuningConfig::default_decision(), span->first, span->second);
  for (const auto& config : tested) run += price(config, span->first, span->second);
  return static_cast<double>(rounds) * run;
}

FirstLookCandidate cluster_first_look(const ClusterStrategy& strategy, int comm_size, int per_size,
                                      const SearchLatencies& latencies, const SearchSpace& space) {
  // The picks once: the candidates and the nominees read the same ones.
  const std::vector<ClusterChoice> ungated = strategy.recommend({comm_size}, 0.0);
  std::vector<Choice> picks;
  for (const auto& c : ungated)
    picks.push_back({c.msg_size, c.config, c.latency_us, c.default_us, c.gain_sd});
  const ClusterFinalists finalists = cluster_finalists(strategy, comm_size, per_size, &ungated);
  FirstLookCandidate out;
  std::set<std::int64_t> riders;
  out.nominated =
      final_nominees(picks, finalists.configs, latencies, space, finalists.model, &riders);
  std::map<std::int64_t, TuningConfig> own = out.nominated;
  for (const auto size : riders) own.erase(size);
  out.values = first_look_values(own, picks);
  // Every run at the default's price there, priced once (the strategy's prices follow its
  // observations, which a plan does not change). A nominee at its own price was measured worse:
  // its whole-run price counts the message sizes where it is slow and not nominated, and at a
  // size it never ran it is extrapolated (bench/README.md, "A budget for the whole campaign").
  out.run_price = [price = strategy.run_price(comm_size, TuningConfig::default_decision())](
                      const TuningConfig&, std::int64_t, std::int64_t) { return price; };
  auto memo =
      std::make_shared<std::map<std::tuple<TuningConfig, std::int64_t, std::int64_t>, double>>();
  out.expected_price = [&strategy, comm_size, memo](const TuningConfig& config, std::int64_t lo,
                                                    std::int64_t hi) {
    auto [it, fresh] = memo->try_emplace({config, lo, hi}, 0.0);
    if (fresh) it->second = strategy.span_price(comm_size, config, lo, hi);
    return it->second;
  };
  return out;
}

namespace {

// The nominees of `values`, the most valuable first (ties: in configuration order).
std::vector<TuningConfig> by_value(const std::map<TuningConfig, double>& values) {
  std::vector<std::pair<double, TuningConfig>> queue;
  for (const auto& [config, v] : values) queue.push_back({-v, config});
  std::sort(queue.begin(), queue.end());
  std::vector<TuningConfig> out;
  for (const auto& [minus_value, config] : queue) out.push_back(config);
  return out;
}

}  // namespace

double first_look_reserve(const ClusterStrategy& strategy, const std::vector<int>& comm_sizes,
                          int per_size,
                          const std::function<SearchLatencies(int comm_size)>& latencies,
                          Collective collective, const AlgorithmTable& table, double money) {
  double reserve = 0;
  for (int p : comm_sizes) {
    const SearchLatencies measured = latencies(p);
    if (measured.empty()) continue;
    const FirstLookCandidate look =
        cluster_first_look(strategy, p, per_size, measured, SearchSpace(collective, p, table));
    // Every run at the default's price over the look's span, as the plan prices every run at
    // the default's (over the whole run): a nominee's own price is extrapolated where it never
    // ran, and priced so, looks stopped searches early (bench/README.md, "The search's reserve
    // follows its nominees").
    const SpanPrice default_over_span = [&strategy, p](const TuningConfig&, std::int64_t lo,
                                                       std::int64_t hi) {
      return strategy.span_price(p, TuningConfig::default_decision(), lo, hi);
    };
    std::set<TuningConfig> tested;
    double fits = 0;  // the look of the most nominees, most valuable first, that money pays for
    for (const auto& config : by_value(look.values)) {
      tested.insert(config);
      const double cost = look_cost(2, tested, look.nominated, default_over_span);
      if (cost > money) break;
      fits = cost;
    }
    reserve += fits;
  }
  return reserve;
}

std::map<TuningConfig, double> first_look_values(
    const std::map<std::int64_t, TuningConfig>& nominated, const std::vector<Choice>& picks) {
  std::map<TuningConfig, double> out;
  for (const auto& [size, config] : nominated) {
    double gain = 0;
    for (const auto& pick : picks)
      if (pick.msg_size == size) gain = expected_gain(pick);
    out[config] += gain + 0.001;
  }
  return out;
}

std::vector<std::set<TuningConfig>> plan_first_looks(const std::vector<FirstLookCandidate>& sizes,
                                                     double money) {
  const std::size_t k_count = sizes.size();
  // Each size's nominees, most valuable first: a size's look tests a prefix of them; the cost
  // and the value of every prefix.
  std::vector<std::vector<std::set<TuningConfig>>> prefix(k_count);
  std::vector<std::vector<double>> cost(k_count), value(k_count);
  double all = 0;
  for (std::size_t k = 0; k < k_count; ++k) {
    std::set<TuningConfig> taken;
    double sum = 0;
    prefix[k].push_back({});
    cost[k].push_back(0);
    value[k].push_back(0);
    for (const auto& config : by_value(sizes[k].values)) {
      taken.insert(config);
      sum += sizes[k].values.at(config);
      prefix[k].push_back(taken);
      cost[k].push_back(look_cost(2, taken, sizes[k].nominated, sizes[k].run_price));
      value[k].push_back(sum);
    }
    all += cost[k].back();
  }
  std::vector<std::set<TuningConfig>> plan(k_count);
  if (all <= money) {
    for (std::size_t k = 0; k < k_count; ++k) plan[k] = prefix[k].back();
    return plan;
  }
  if (!(money > 0)) return plan;
  // The most value within the money: a knapsack over the sizes' prefixes, the money in 1000
  // units, each look's cost rounded up (so the plan never costs more).
  constexpr int kUnits = 1000;
  const double unit = money / kUnits;
  auto units = [&](double c) { return std::ceil(c / unit - 1e-9); };
  std::vector<double> best(kUnits + 1, 0);  // most value within b units, sizes so far
  std::vector<std::vector<int>> chosen(k_count, std::vector<int>(kUnits + 1, 0));
  for (std::size_t k = 0; k < k_count; ++k) {
    std::vector<double> next = best;
    for (std::size_t m = 1; m < prefix[k].size(); ++m) {
      if (units(cost[k][m]) > kUnits) continue;
      const int u = static_cast<int>(units(cost[k][m]));
      for (int b = kUnits; b >= u; --b)
        if (best[b - u] + value[k][m] > next[b]) {
          next[b] = best[b - u] + value[k][m];
          chosen[k][b] = static_cast<int>(m);
        }
    }
    best = std::move(next);
  }
  int b = kUnits;
  for (std::size_t k = k_count; k-- > 0;) {
    const int m = chosen[k][b];
    if (m == 0) continue;
    plan[k] = prefix[k][static_cast<std::size_t>(m)];
    b -= static_cast<int>(units(cost[k][static_cast<std::size_t>(m)]));
  }
  return plan;
}

double FirstLookPlan::after(std::size_t k) const {
  double sum = 0;
  for (std::size_t i = k + 1; i < cost.size(); ++i) sum += cost[i];
  return sum;
}

FirstLookPlan plan_final_looks(const std::vector<FirstLookCandidate>& sizes, double money) {
  FirstLookPlan plan;
  plan.tested = plan_first_looks(sizes, money);
  for (std::size_t k = 0; k < sizes.size(); ++k)
    plan.cost.push_back(look_cost(2, plan.tested[k], sizes[k].nominated, sizes[k].run_price));
  return plan;
}

FinalLookBudget final_look_budget(const FirstLookPlan& plan,
                                  const std::vector<FirstLookCandidate>& sizes, std::size_t k,
                                  double unspent) {
  const FirstLookCandidate& look = sizes.at(k);
  return {unspent - plan.after(k), look.expected_price ? look.expected_price : look.run_price,
          plan.tested.at(k)};
}

FinalLookBudget leftover_look_budget(const FirstLookCandidate& size, double unspent) {
  FinalLookBudget out{unspent, size.expected_price ? size.expected_price : size.run_price, {}};
  for (const auto& [msg_size, config] : size.nominated) out.planned.insert(config);
  out.leftover = true;
  return out;
}

std::set<TuningConfig> untested_nominees(
    const std::map<std::int64_t, TuningConfig>& nominated,
    const std::vector<std::int64_t>& msg_sizes, const std::set<TuningConfig>& open,
    const std::map<TuningConfig, std::vector<PairedInterval>>& intervals) {
  std::set<TuningConfig> out;
  for (const auto& c : open) {
    const auto it = intervals.find(c);
    bool paired = false;
    for (std::size_t i = 0; it != intervals.end() && i < msg_sizes.size(); ++i)
      if (auto n = nominated.find(msg_sizes[i]); n != nominated.end() && n->second == c)
        paired = paired || (i < it->second.size() && it->second[i].pairs > 0);
    if (!paired) out.insert(c);
  }
  return out;
}

void record_look(const std::set<TuningConfig>& open, const std::set<TuningConfig>& looked,
                 bool leftover_look, std::set<TuningConfig>* unaffordable,
                 std::set<TuningConfig>* leftover_looked) {
  bool any = false;
  for (const auto& c : looked) any = any || open.count(c) > 0;
  if (!leftover_look || !any)
    for (const auto& c : open)
      if (!looked.count(c)) unaffordable->insert(c);
  if (leftover_look)
    for (const auto& c : looked)
      if (open.count(c)) leftover_looked->insert(c);
}

std::set<TuningConfig> affordable_nominees(const std::map<std::int64_t, TuningConfig>& nominated,
                                           const std::set<TuningConfig>& open, int rounds,
                                           const FinalLookBudget& budget, bool first) {
  std::set<TuningConfig> candidates;
  for (const auto& c : open)
    if (!first || budget.planned.count(c)) candidates.insert(c);
  auto fits = [&](const std::set<TuningConfig>& tested) {
    return look_cost(rounds, tested, nominated, budget.run_price) <= budget.left;
  };
  if (fits(candidates)) return candidates;
  std::vector<std::pair<int, TuningConfig>> by_sizes;  // (-message sizes, nominee)
  for (const auto& nominee : candidates) {
    int sizes = 0;
    for (const auto& [size, config] : nominated) sizes += config == nominee;
    by_sizes.push_back({-sizes, nominee});
  }
  std::sort(by_sizes.begin(), by_sizes.end());
  std::set<TuningConfig> out;
  for (const auto& [minus_sizes, nominee] : by_sizes) {
    std::set<TuningConfig> more = out;
    more.insert(nominee);
    if (fits(more)) out = std::move(more);
  }
  return out;
}

std::optional<std::pair<std::int64_t, std::int64_t>> look_size_span(
    const std::map<std::int64_t, TuningConfig>& nominated, const std::set<TuningConfig>& open) {
  std::optional<std::pair<std::int64_t, std::int64_t>> span;
  for (const auto& [size, config] : nominated) {  // sizes in increasing order
    if (!open.count(config)) continue;
    if (!span) span.emplace(size, size);
    span->second = size;
  }
  return span;
}

namespace {

// cluster_final_candidates given the strategy's ungated picks at `comm_size`.
std::vector<TuningConfig> final_candidates_of(const ClusterStrategy& strategy, int comm_size,
                                              int per_size,
                                              const std::vector<ClusterChoice>& picks) {
  std::vector<TuningConfig> out = strategy.finalists(comm_size, per_size);
  for (const auto& choice : picks)
    if (!choice.config.is_default() && choice.confidence >= kNominateOdds &&
        std::find(out.begin(), out.end(), choice.config) == out.end())
      out.push_back(choice.config);
  return out;
}

}  // namespace

std::vector<TuningConfig> cluster_final_candidates(const ClusterStrategy& strategy, int comm_size,
                                                   int per_size) {
  return final_candidates_of(strategy, comm_size, per_size, strategy.recommend({comm_size}, 0.0));
}

ClusterFinalists cluster_finalists(const ClusterStrategy& strategy, int comm_size, int per_size,
                                   const std::vector<ClusterChoice>* picks) {
  ClusterFinalists out;
  out.configs = picks ? final_candidates_of(strategy, comm_size, per_size, *picks)
                      : cluster_final_candidates(strategy, comm_size, per_size);
  out.model = strategy.versus_default(comm_size, {out.configs.begin(), out.configs.end()});
  return out;
}

std::set<TuningConfig> open_nominees(
    const std::map<std::int64_t, TuningConfig>& nominated,
    const std::vector<std::int64_t>& msg_sizes,
    const std::map<TuningConfig, std::vector<PairedInterval>>& intervals, double min_gain,
    const std::set<std::int64_t>& riders) {
  std::set<TuningConfig> open;
  for (std::size_t i = 0; i < msg_sizes.size(); ++i) {
    auto n = nominated.find(msg_sizes[i]);
    if (n == nominated.end() || riders.count(msg_sizes[i])) continue;
    auto it = intervals.find(n->second);
    if (it == intervals.end() || i >= it->second.size() || still_open(it->second[i], min_gain))
      open.insert(n->second);
  }
  return open;
}

}  // namespace colltune
