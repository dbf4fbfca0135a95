#include "optimizer/run_prices.h"

namespace colltune {

double timed_run_price(int comm_size, const std::map<int, TimedRuns>& timed,
                       const std::function<double(int comm_size)>& cost) {
  if (auto it = timed.find(comm_size); it != timed.end() && it->second.runs > 0)
    return it->second.node_seconds / it->second.runs;
  double seconds = 0, priced = 0;  // what the timed runs cost, and their sizes' costs
  for (const auto& [p, t] : timed) {
    seconds += t.node_seconds;
    priced += t.runs * cost(p);
  }
  const double own = cost(comm_size);
  return priced > 0 ? own * seconds / priced : own;
}

}  // namespace colltune
