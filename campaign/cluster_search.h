// Whole-cluster campaigns (issue #15, docs/whole-cluster.md): the contexts of one collective
// at several communicator sizes are searched together by one ClusterStrategy, each measured
// size then goes through the usual final phase, and the strategy predicts every size from 2
// ranks to the largest one that was not run. The engine calls CampaignEngine::run_cluster_group
// (defined in cluster_search.cpp) once per collective; everything it does goes through the
// Store like a per-context campaign, so kill / resume works the same way.
//
// Where things are stored:
// - the ClusterStrategy's state: optimizer_state of the group's first context (the "lead"),
//   saved with every search job's completion;
// - search jobs: on the context of the size they ran (so every run records its nodes and ppn);
// - the predictions: result.cluster of the lead context once every size of the group is done:
//     {strategy, stop_reason, min_confidence, measured: [P...], max_comm_size,
//      layouts: [{comm_size, nodes, ppn}],
//      predicted: [{comm_size, msg_size, best, confidence, latency_us, default_us}]}
//   (best = the default where confidence < min_confidence). A re-tune (spec.warm_start_from)
//   adds warm_start: {from_campaign, cold, remeasured: [{comm_size, configs}], reused_runs,
//   reused: [{comm_size, runs}], shift: [{comm_size, mean_log_shift}], predictions:
//   {recomputed, changed, unchanged, new}} and, per predicted block, previous_best (the earlier
//   campaign's block, when it had one).
#pragma once

#include <vector>

#include "campaign/store.h"
#include "core/algorithm_table.h"

namespace colltune {

// The contexts of a campaign grouped per collective (store order), each group sorted by
// communicator size; the first context of a group (lowest id) leads it.
std::vector<std::vector<ContextRecord>> cluster_groups(const std::vector<ContextRecord>& contexts);

// The context of a group that leads it (the lowest id): holds the strategy's state and the
// predictions.
const ContextRecord& cluster_lead(const std::vector<ContextRecord>& group);

// The context of `group` nearest to `comm_size` in log2 P (the lower one on a tie): the layout a
// predicted block inherits.
const ContextRecord& nearest_measured(const std::vector<ContextRecord>& group, int comm_size);

// The layout of a predicted block at `comm_size` (not run): the nearest measured size's nodes,
// at most one per rank (min(its nodes, comm_size)); ranks per node comm_size / nodes when that
// divides, else 0 (the backend places them: some nodes hold one rank more). What the tracer
// verifies the block on, what the file's comment and the report name.
struct PredictedLayout {
  int from_comm_size = 0;  // the measured size it comes from (nearest_measured)
  int nodes = 1;
  int ppn = 0;
};
PredictedLayout predicted_layout(const std::vector<ContextRecord>& group, int comm_size);

// The communicator sizes a whole-cluster file predicts: every size from 2 to `max_comm_size`
// not in `measured` when max_comm_size <= 256; above that, the sizes 2^k and 3 x 2^k in range
// (each predicted block then covers up to the next one: a file of a few dozen blocks per
// collective instead of thousands).
std::vector<int> cluster_prediction_sizes(const std::vector<int>& measured, int max_comm_size);

// The whole-cluster part of a campaign's JSON report (campaign_report): null when no context
// carries predictions, else
//   {"collectives": [{collective, strategy, stop_reason, min_confidence, measured, max_comm_size,
//                     layouts, above: "default", warm_start (a re-tune)}],
//    "predicted": [{collective, comm_size, msg_size, source: "predicted", best, best_name,
//                   confidence, best_us (model estimate), default_us, speedup (estimate),
//                   layout_from (the measured size whose layout the block inherits), layout
//                   ({nodes, ppn}: predicted_layout), note,
//                   previous_best (a re-tune: the earlier campaign's block)}]}
nlohmann::json cluster_report(const std::vector<ContextRecord>& contexts,
                              const AlgorithmTable& table);

}  // namespace colltune
