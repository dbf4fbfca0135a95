// Initial design over the mixed, conditional space: a Latin Hypercube that is
//  - stratified on the categorical algorithm axis: every algorithm gets floor(n/A) or
//    ceil(n/A) points (fewer only when it has fewer configurations; the rest goes to others);
//  - non-collapsing on the numeric axes: the points whose algorithm reads a segment size take
//    distinct segment-size levels, one per stratum of the level list (balanced repeats once
//    there are more such points than levels); the same for chain fan-outs;
//  - maximin: of `candidates` such designs, the one with the largest smallest pairwise distance
//    (ConfigEncoder::design_distance2) is kept.
// The default decision, when in the space and `include_default`, is always the first point.
#pragma once

#include <map>
#include <vector>

#include "core/rng.h"
#include "core/tuning_config.h"
#include "optimizer/search_space.h"

namespace colltune {

struct LatinHypercubeOptions {
  int candidates = 32;
  bool include_default = true;
  // Every algorithm that reads a chain fan-out first gets two points (when n allows), at its
  // smallest and its largest fan-out: the fan-out is the tree's shape, not a smooth rate, so a
  // design that saw fan-out 2 only says little about the flat tree (fan-out P-1).
  bool cover_fanouts = false;
};

// `n` distinct configurations of the space (all of them when n >= space.size()).
std::vector<TuningConfig> latin_hypercube_design(const SearchSpace& space, int n, Rng& rng,
                                                 const LatinHypercubeOptions& options = {});

// Smallest pairwise design_distance2 of a design (infinity for fewer than 2 points).
double min_pairwise_distance2(const SearchSpace& space, const std::vector<TuningConfig>& design);

// Per algorithm id, the tree shapes the design gives it: 2 (smallest and largest fan-out) when
// it reads a fan-out and has several, else 1.
std::map<int, int> fanout_shapes(const SearchSpace& space);

// One point per algorithm, plus one per algorithm with two shapes under `cover_fanouts`.
int lean_design_size(const SearchSpace& space, bool cover_fanouts);

// The default initial-design size for a space: one point per algorithm plus one per numeric
// knob the space has, capped by the space size.
int default_initial_design_size(const SearchSpace& space);

}  // namespace colltune
