// Whether a run may join a batch being built under a node-second budget. A batch's runs are
// committed together, at prices of runs not made yet; where those prices are far off, a batch
// that fits at its prices crosses the budget (docs/whole-cluster.md, "The search").
#pragma once

#include <set>

namespace colltune {

// One batch being built. The caller offers its picks in order: admits() says whether the next
// one joins, add() records one that did. Plain values, no references kept.
//
//  - The batch's first run always joins (the caller checks that its price fits what is left).
//  - A further run joins while the batch fits `left` with every price times `factor` (what
//    runs cost over their prices so far, ClusterBayesStrategy::batch_price_factor; >= 1).
//  - A price at a comm size with no run that reported its seconds (not in `timed_sizes`) is an
//    extrapolation (1.9-3.6x under at 1024 simulated ranks from one run at 2). Such a size
//    takes a second run of the batch only while the batch's runs at sizes like it, at
//    `blind_factor` times their prices, fit `left_total` (what is left of the whole budget);
//    else its one run there reports what runs at that size cost before more are sent.
//
// What does not join waits for the next batch, priced after this one's runs reported.
class BatchCheck {
 public:
  BatchCheck(double left, double factor, std::set<int> timed_sizes, double blind_factor,
             double left_total);
  bool admits(int comm_size, double price) const;
  void add(int comm_size, double price);

 private:
  double left_, factor_, blind_factor_, left_total_;
  std::set<int> timed_;     // sizes with a run that reported its seconds
  std::set<int> blind_;     // sizes of the batch's runs not in timed_
  double blind_price_ = 0;  // the prices of the batch's runs at those sizes
  double dear_ = 0;         // the batch's prices times factor_
  int runs_ = 0;
};

}  // namespace colltune
