// The conditional coll_tuned search space of one (collective, comm size, Open MPI version):
// algorithm ids, and for each algorithm only the knobs it really reads. Equivalent
// configurations are one point (e.g. binomial with fan-out 3 == binomial with fan-out 0).
//
// Equivalences applied by canonical() (Open MPI 4.1.x source, coll_base_topo.c/coll_base_*.c):
//  - knobs an algorithm ignores are 0;
//  - chain fan-out is clamped to [1, 32] and to comm_size - 1 (build_chain does both), so at
//    4 ranks fan-outs 3..32 are one configuration;
//  - chain with fan-out 1 builds the same tree as "pipeline" and runs the same generic code:
//    it becomes the pipeline configuration (when the table has a "pipeline" algorithm);
//  - allreduce "segmented_ring" with segment size 0 is plain "ring".
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/algorithm_table.h"
#include "core/collective.h"
#include "core/tuning_config.h"

namespace colltune {

struct SearchSpaceOptions {
  // Segment sizes tried for algorithms that read one; 0 = unsegmented. Log2 grid by default.
  std::vector<int> segment_sizes = {0, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144};
  // Chain fan-outs tried for algorithms that read one.
  std::vector<int> fanouts = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
  bool include_default = true;  // algorithm 0 (Open MPI's own decision) is a candidate
  // Drop algorithms that give wrong answers for non-commutative ops.
  bool commutative_ops_only = false;
};

class SearchSpace {
 public:
  SearchSpace(Collective collective, int comm_size, const AlgorithmTable& table,
              const SearchSpaceOptions& options = {});

  // A space made of explicit points (e.g. the configurations a recorded landscape holds). Each
  // point is canonicalised; duplicates collapse; algorithms not usable at comm_size are dropped.
  SearchSpace(Collective collective, int comm_size, const AlgorithmTable& table,
              const std::vector<TuningConfig>& points);

  Collective collective() const { return collective_; }
  int comm_size() const { return comm_size_; }

  // Every distinct configuration, in a stable order (default first, then by algorithm id,
  // segment size, fan-out).
  const std::vector<TuningConfig>& points() const { return points_; }
  std::size_t size() const { return points_.size(); }

  // The canonical form of a configuration (see the equivalences above).
  TuningConfig canonical(const TuningConfig& config) const;
  bool contains(const TuningConfig& config) const;
  // Index of the canonical configuration in points(); -1 when absent.
  int index_of(const TuningConfig& config) const;

  const AlgorithmTable& table() const { return *table_; }
  // Knob usage of an algorithm id of this collective; nullptr for 0 and unknown ids.
  const AlgorithmInfo* algorithm_info(int algorithm) const;

  // The configuration the default (algorithm 0) runs at OSU size `msg_size`: Open MPI's fixed
  // decision (core/fixed_decision.h), that algorithm with segment size 0 and fan-out 0, in
  // canonical form. nullopt when it reads a fan-out (fan-out 0 is not a point of the space) or
  // the collective has no transcribed decision. The two are one code path.
  std::optional<TuningConfig> default_alias(std::int64_t msg_size) const;

 private:
  void finish();  // sort and de-duplicate points_

  Collective collective_;
  int comm_size_;
  const AlgorithmTable* table_;
  std::vector<TuningConfig> points_;
};

}  // namespace colltune
