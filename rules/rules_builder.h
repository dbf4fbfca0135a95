// Turns tuning results (one winning configuration per collective, communicator size and OSU
// message size) into a RulesModel that Open MPI applies exactly where it was measured.
//
// Policy (what an administrator should expect from a generated file):
// - Keys: OSU sizes are converted to Open MPI's lookup key (rules_key_for_osu_size; gather,
//   scatter, allgather, alltoall: per-rank bytes x P).
// - Message sizes: a measured size s governs keys [s, next measured size), but never more than
//   [s, factor x s): OSU measures powers of two, so each measurement stands for one octave.
//   The largest measured size governs itself only (key S, then algorithm 0 from S + 1), and
//   below the smallest measured size the rules say algorithm 0, i.e. Open MPI's own fixed
//   decision: nothing is extrapolated into sizes nobody measured. Every block starts with a
//   size-0 rule, as Open MPI requires.
// - Communicator sizes: rules tuned at P govern communicators of exactly P ranks: a block with
//   algorithm 0 at P + 1 ends them (rules measured at 4 ranks say nothing about 5 or 6), and a
//   leading block for P >= 2 with algorithm 0 keeps them off smaller communicators (in 4.1.x
//   the first block is a floor, so without it rules tuned at 64 ranks would also run on every
//   sub-communicator). Predicting other sizes needs a model, which this builder does not have.
// - Knobs the chosen algorithm does not read (AlgorithmInfo::uses_segsize / uses_fanout) are
//   written as 0, and adjacent rules (and blocks) with equal choices are merged.
#pragma once

#include <cstdint>
#include <vector>

#include "core/algorithm_table.h"
#include "core/collective.h"
#include "core/tuning_config.h"
#include "rules/rules_model.h"

namespace colltune {

struct TunedPoint {
  Collective collective = Collective::bcast;
  int comm_size = 0;          // ranks the point was tuned at
  std::int64_t osu_size = 0;  // bytes as OSU prints them (per rank where OSU means per rank)
  TuningConfig winner;        // algorithm 0 = Open MPI's default decision won
};

struct RulesBuildOptions {
  const AlgorithmTable* algorithms = nullptr;  // default AlgorithmTable::builtin_4_1()
  // Reach of one measurement between measured message sizes, as a factor of its size; any
  // value > 0 keeps the largest size and every communicator size to themselves (no
  // extrapolation). 0 = unlimited: a choice holds up to the next measured size and the last one
  // to infinity (Open MPI's behaviour for a plain list of rules).
  int size_coverage_factor = 2;
  int comm_coverage_factor = 2;
};

// Collectives come out in Open MPI id order. Throws std::invalid_argument (naming the point)
// for: comm_size < 2, negative sizes or knobs, two points for the same (collective, P, key),
// an algorithm the table does not have (Open MPI would fail the call with MPI_ERR_ARG), a
// two_proc algorithm at P != 2, or different winners for a collective without a message size
// (barrier, alltoallv) at one P.
RulesModel build_rules_model(const std::vector<TunedPoint>& points,
                             const RulesBuildOptions& options = {});

}  // namespace colltune
