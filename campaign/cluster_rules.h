// The rules file of a whole-cluster campaign (docs/whole-cluster.md "The rules file"): for every
// collective, communicator-size blocks from 2 ranks to the largest size of the campaign, each
// from the final phase at a measured size or from the ClusterStrategy's prediction
// (server/cluster_search.h), and Open MPI's default above the largest size.
//
// - Measured sizes: the picks of their context (the paired final phase), as in any campaign.
// - Predicted sizes: the strategy's pick where its confidence reached the campaign's
//   min_confidence, the default elsewhere. Up to 256 ranks every size is predicted, so each
//   block is exact; above, the predicted sizes are 2^k and 3 x 2^k and a block governs up to the
//   next one.
// - Above the largest size: a block at largest + 1 with only the default (nothing there was
//   measured or is close enough to predict).
// The comments name, per block, measured or predicted (with the confidence range of its tuned
// sizes) and the layout (nodes x ranks per node) it was tuned for: the 4.1.x / 5.0.x file has no
// node dimension, so a block applies whatever the job's layout. Predicted blocks inherit the
// nodes of the nearest measured size, with their own rank count (predicted_layout).
#pragma once

#include <string>
#include <vector>

#include "rules/rules_builder.h"
#include "campaign/store.h"

namespace colltune {

struct ClusterRulesInput {
  std::vector<TunedPoint> points;     // for build_rules_model with comm_coverage_factor = 0
  std::vector<std::string> comments;  // the file's header lines (provenance, layout, policy)
  // Predicted sizes the tracer checks as well (copies of a context of the collective with the
  // predicted comm_size and the layout of the nearest measured size; id = the lead's): per
  // collective the first predicted size with a tuned choice and the first left to the default.
  std::vector<ContextRecord> probes;
};

// `contexts`: every context of a whole-cluster campaign, done. Throws std::invalid_argument when
// a collective's lead has no result.cluster.
ClusterRulesInput cluster_rules_input(const std::vector<ContextRecord>& contexts);

}  // namespace colltune
