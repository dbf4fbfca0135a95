// An analytic communication model of every coll_tuned algorithm of bcast, reduce, allreduce and
// gather as Open MPI 4.1 implements them (ompi/mca/coll/base/coll_base_{bcast,reduce,allreduce,
// gather}.c and coll_base_topo.c; ids and knobs: core/algorithm_table.h and
// docs/reference/open-mpi-rules.md §2): how a configuration's latency *scales* with the
// communicator size P, the message size and its segment size and fan-out, before it was ever
// run at that P. The whole-cluster search prices runs with it (optimizer/cluster_bayes_strategy.h,
// docs/whole-cluster.md "Cost model").
//
// Contract:
//  - algorithm_cost_terms(collective, config, P, osu_size) counts what one call costs for the
//    OSU workload (root 0; bcast and gather MPI_CHAR, count = OSU size, per rank for gather;
//    reduce and allreduce MPI_FLOAT with MPI_SUM, count = size / 4), as the mean over ranks of
//    each rank's time in the call, which is what OSU reports ("Avg"):
//      messages  messages a rank waits on one after the other (a per-message overhead each),
//      rounds    latencies that do not overlap (one per tree level and per pipeline stage),
//      bytes     bytes that pass one after the other through one rank's port,
//      reduced   bytes the reduction operator combines one after the other.
//    The network is the Hockney model on a single port per rank: a rank that posts k
//    non-blocking sends (or receives) of s bytes at once pays one latency and k x s bytes;
//    blocking operations in sequence (the linear reduce's and gather's receives) pay one
//    latency each, and a send is done when its receiver has taken it. Trees are built as
//    coll_base_topo.c builds them (chain with its fan-out, binary, binomial, k-nomial of radix 4,
//    the in-order binomial and binary trees), each rank serving its children in coll_base's
//    order, and each rank's time follows the generic tree bcast / reduce with segment
//    pipelining: its first segment's path (depth; the sends ahead of it: a parent posts all
//    its sends at once, so the per-message costs count those up to its own, in turn, and the
//    bytes all of them, which share the parent's bandwidth) or its subtree's (height; the
//    receives on its critical path: a parent takes its children's messages one at a time in
//    the order it posted them, each once that child has its own), S - 1 periods of the
//    busiest rank it waits on, and its own sends. Linear algorithms: rank i is
//    done when the root has handled i messages (the mean over ranks: (P - 1)(P + 2) / (2P)).
//    Algorithms every rank ends together (allreduce, scatter-allgather bcasts) count their
//    common critical path; an allreduce made of a reduce and a bcast counts the reduce's root.
//    Algorithm 0 is Open MPI's fixed decision (core/fixed_decision.h), unsegmented; a
//    configuration an algorithm falls back from (scatter_allgather with fewer bytes than ranks,
//    rabenseifner with fewer elements than the power of two, a segmented ring with less than a
//    segment per rank, split_binary_tree with a segment above half the message) is counted as
//    the algorithm that really runs.
//  - The terms are counts of this model, not of the machine: no eager protocol (a small send is
//    done when received, as a large one), no contention between ranks (but, at the node
//    level below, at a node's NIC and in its memory).
//    They give the shape of a configuration's cost in P, message and segment size; its scale
//    comes from the machine coefficients, and what the shape misses (bench/README.md
//    "Whole-cluster", the cost model's check) is left to the surrogate that uses it.
//  - Node level (`ranks_per_node` Q > 0 and below P): ranks fill the nodes in order (rank r on
//    node r / Q, Slurm's block distribution), and two more terms count what crosses a node
//    boundary on top of the one-level terms (which every message pays, within a node or not):
//      inter_rounds  crossing messages one after the other on a rank's critical path,
//      inter_bytes   bytes a crossing message on that path waits behind at a node's NIC: it
//                    shares its sender's and its receiver's NIC with the other crossing
//                    messages of the same step (a tree level, a step of a schedule), and counts
//                    the busier NIC's bytes of that step but its own (its own are in `bytes`;
//                    a lone crossing message waits for none, a chain's or a ring's).
//    Trees are labelled as coll_base_topo.c labels their ranks (the level-order tree's strided
//    subtrees, the plain binomial tree's, the in-order binomial, k-nomial and binary trees'
//    neighbouring ranks), which the one-level terms need not tell apart; algorithms whose ranks
//    all end together count, per step of their schedule (ring, recursive doubling and halving,
//    binomial scatter), whether any pair crosses and the busiest NIC. Q = 0 (or Q >= P): one
//    level, the inter terms 0, the other terms exactly as without it.
//  - Node memory (Q > 0; Q >= P: every rank on one node): a message between two ranks of one
//    node moves through that node's memory system, which the node's other such messages of
//    the same step share (a node's cores copy far more together than one core alone, but not
//    Q times more):
//      shared_bytes  bytes the other messages of its step move within its node, for the
//                    messages on a rank's path, as inter_bytes counts them at a NIC (the
//                    busiest node of a schedule's step, less its own message).
//    A linear algorithm's messages pass the root one after the other (none shared). Q = 0:
//    shared_bytes 0.
//  - MachineCoefficients: microseconds per message, per round, per byte sent, per byte
//    reduced, per crossing round, per crossing byte and per byte shared in a node's memory;
//    latency = their dot product with the terms. fit_machine_coefficients() finds them from
//    observed latencies (least squares on log latency, positive, pulled weakly toward
//    typical_machine_coefficients() so that it is defined from one observation; a coefficient
//    whose term no observation has is not fitted and stays at the prior).
//  - Pure functions (trees and their crossings are cached behind a mutex); nullopt for a
//    collective without a model, an algorithm id it does not know, P < 2 or a size < 1.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/collective.h"
#include "core/tuning_config.h"

namespace colltune {

struct CostTerms {
  double messages = 0;
  double rounds = 0;
  double bytes = 0;
  double reduced = 0;
  double inter_rounds = 0;  // node level only (see the contract above)
  double inter_bytes = 0;
  double shared_bytes = 0;  // the node's memory (see the contract above)

  CostTerms& operator+=(const CostTerms& o) {
    messages += o.messages, rounds += o.rounds, bytes += o.bytes, reduced += o.reduced;
    inter_rounds += o.inter_rounds, inter_bytes += o.inter_bytes;
    shared_bytes += o.shared_bytes;
    return *this;
  }
};

struct MachineCoefficients {
  double per_message_us = 0;
  double per_round_us = 0;
  double per_byte_us = 0;
  double per_reduced_byte_us = 0;
  double per_inter_round_us = 0;  // what a message crossing nodes costs on top
  double per_inter_byte_us = 0;
  double per_shared_byte_us = 0;  // a byte another message moves through the node's memory
};

// True for the collectives algorithm_cost_terms() models (bcast, reduce, allreduce, gather).
bool cost_model_covers(Collective collective);

// `ranks_per_node` 0: one level of network (what the tuner uses today).
std::optional<CostTerms> algorithm_cost_terms(Collective collective, const TuningConfig& config,
                                              int comm_size, std::int64_t osu_size,
                                              int ranks_per_node = 0);

// Predicted latency of one call (µs).
double modelled_latency_us(const CostTerms& terms, const MachineCoefficients& machine);

// Typical values of a cluster (about 0.5 µs per message, 1.5 µs per round, 10 GB/s, 5 GB/s of
// reduction; crossing nodes 1 µs and 10 GB/s more; 50 GB/s of a node's memory for all its copies):
// the prior of fit_machine_coefficients() and the coefficients before anything was observed. Only
// their ratios matter where prices are anchored to a known run cost.
MachineCoefficients typical_machine_coefficients();

struct CostObservation {
  CostTerms terms;
  double latency_us = 0;  // observed; non-positive or non-finite values are ignored
};

// Least squares on log latency, sum (log(terms . c) - log latency)^2, over positive
// coefficients (L-BFGS-B on their logs), plus prior_weight x sum (log(c_j / prior_j))^2: a
// coefficient the observations do not inform stays at the prior; with none the prior returns.
// (Least squares on the relative error was tried first: where the model's shape misses a
// configuration by 10x, it shrinks every coefficient toward 0.)
MachineCoefficients fit_machine_coefficients(const std::vector<CostObservation>& observations,
                                             const MachineCoefficients& prior,
                                             double prior_weight = 1.0);

// What the fitted machine coefficients still miss, per algorithm: the analytic model is off by
// a factor that is the algorithm's own (an implementation detail it does not model: a reduce
// that is not pipelined, a Rabenseifner that degrades below P elements). factor(a) =
// exp(the median over the observed cells of algorithm a, at every size, of log(observed /
// modelled)); 1 (log factor 0) for an algorithm never observed. One factor per algorithm, not
// one per size: how the error changes with P is left to the surrogate's shared trend, which
// sees it across algorithms (a factor per algorithm and size, taken from the nearest observed
// size, was tried: it froze each algorithm's error at its largest run; bench/README.md).
class AlgorithmCalibration {
 public:
  struct Cell {
    int algorithm = 0;     // TuningConfig::algorithm (0 = the default decision)
    double log_ratio = 0;  // log(observed / modelled latency); non-finite values are ignored
  };
  AlgorithmCalibration() = default;
  explicit AlgorithmCalibration(const std::vector<Cell>& cells);
  double log_factor(int algorithm) const;

 private:
  std::map<int, double> median_;  // algorithm -> median log ratio
};

}  // namespace colltune
