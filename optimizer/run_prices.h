// What a run at a comm size costs in node-seconds, for a whole-cluster strategy that knows only
// the sizes' relative costs (ClusterSize::run_cost, or its own estimate): the unit comes from
// the observed runs that reported their seconds.
#pragma once

#include <functional>
#include <map>

namespace colltune {

// The observed runs at one comm size that reported their seconds, and the node-seconds they
// cost (seconds x the size's nodes).
struct TimedRuns {
  int runs = 0;
  double node_seconds = 0;
};

// The node-seconds of a run at `comm_size`, from `timed` (per comm size) and `cost` (a size's
// relative cost, any unit): the mean of the timed runs at that size; else its cost times what
// all timed runs cost over their sizes' costs; else its cost as it is (no run has given the
// prices a unit yet, which is why a strategy under a node-second budget sends one run first).
double timed_run_price(int comm_size, const std::map<int, TimedRuns>& timed,
                       const std::function<double(int comm_size)>& cost);

}  // namespace colltune
