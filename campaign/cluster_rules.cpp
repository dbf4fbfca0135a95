#include "campaign/cluster_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "campaign/cluster_search.h"

namespace colltune {
namespace {

std::string layout_text(int nodes, int ppn) {
  return std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") + " x " + std::to_string(ppn) +
         " ranks";
}

std::string layout_text(const ContextRecord& c) {
  return layout_text(c.nodes, c.ppn > 0 ? c.ppn : c.comm_size / std::max(1, c.nodes));
}

// A predicted block's layout: the one it inherits, and how `comm_size` ranks sit on it.
std::string layout_text(const std::vector<ContextRecord>& group, int comm_size) {
  const PredictedLayout layout = predicted_layout(group, comm_size);
  const ContextRecord& from = nearest_measured(group, comm_size);
  return "layout of P=" + std::to_string(from.comm_size) + " (" + layout_text(from) + "), here " +
         (layout.ppn > 0
              ? layout_text(layout.nodes, layout.ppn)
              : std::to_string(comm_size) + " ranks on " + std::to_string(layout.nodes) + " nodes");
}

}  // namespace

ClusterRulesInput cluster_rules_input(const std::vector<ContextRecord>& contexts) {
  ClusterRulesInput out;
  for (const auto& group : cluster_groups(contexts)) {
    const Collective coll = group.front().collective;
    const std::string cname(name(coll));
    const ContextRecord* lead = &cluster_lead(group);
    if (!lead->result.is_object() || !lead->result.contains("cluster"))
      throw std::invalid_argument(cname + ": the whole-cluster predictions are missing");
    const nlohmann::json& cluster = lead->result.at("cluster");
    const int max_comm_size = cluster.at("max_comm_size").get<int>();
    const double min_confidence = cluster.value("min_confidence", 0.8);
    std::map<int, std::string> lines;  // per comm size, ascending

    // Measured blocks.
    for (const auto& c : group) {
      int tuned = 0, sizes = 0, not_run = 0;
      for (const auto& pick : c.result.at("picks")) {
        const auto best = pick.at("best").get<TuningConfig>();
        out.points.push_back({coll, c.comm_size, pick.at("msg_size").get<std::int64_t>(), best});
        ++sizes;
        tuned += best.is_default() ? 0 : 1;
        not_run += pick.value("source", std::string()) == "not_run";
      }
      lines[c.comm_size] =
          not_run == sizes
              ? cname + " P=" + std::to_string(c.comm_size) +
                    ": NOT RUN (the search's node-second budget ran out first; the model is not "
                    "confident of a gain here): Open MPI's default"
              : cname + " P=" + std::to_string(c.comm_size) + ": measured on " + layout_text(c) +
                    ", " + std::to_string(tuned) + " of " + std::to_string(sizes) +
                    " message sizes tuned";
    }
    // Predicted blocks.
    std::map<int, std::vector<const nlohmann::json*>> predicted;
    for (const auto& p : cluster.at("predicted"))
      predicted[p.at("comm_size").get<int>()].push_back(&p);
    bool probed_tuned = false, probed_default = false;
    for (const auto& [p, choices] : predicted) {
      int tuned = 0;
      double lo = 1, hi = 0;
      for (const auto* choice : choices) {
        const auto best = choice->at("best").get<TuningConfig>();
        out.points.push_back({coll, p, choice->at("msg_size").get<std::int64_t>(), best});
        if (best.is_default()) continue;
        ++tuned;
        const double conf = choice->value("confidence", 0.0);
        lo = std::min(lo, conf);
        hi = std::max(hi, conf);
      }
      const ContextRecord& near = nearest_measured(group, p);
      const PredictedLayout layout = predicted_layout(group, p);
      char conf_text[96] = "";
      if (tuned > 0) std::snprintf(conf_text, sizeof conf_text, " (confidence %.2f-%.2f)", lo, hi);
      lines[p] =
          (cname + " P=" + std::to_string(p) + ": PREDICTED by " +
           cluster.value("strategy", std::string("the model")) + ", " + std::to_string(tuned) +
           " of " + std::to_string(choices.size()) + " message sizes tuned" + conf_text +
           ", the rest default (confidence below " + std::to_string(min_confidence).substr(0, 4) +
           " or no proven gain next to it); " + layout_text(group, p));
      if ((tuned > 0 && !probed_tuned) || (tuned == 0 && !probed_default)) {
        ContextRecord probe = near;
        probe.id = lead->id;
        probe.comm_size = p;
        probe.nodes = layout.nodes;
        probe.ppn = 0;  // the backend places the ranks
        probe.result = nullptr;
        probe.optimizer_state = nullptr;
        out.probes.push_back(probe);
        (tuned > 0 ? probed_tuned : probed_default) = true;
      }
    }
    for (const auto& [p, line] : lines) out.comments.push_back(line);
    // Above the largest size: the default.
    out.points.push_back(
        {coll, max_comm_size + 1,
         group.front().result.at("picks").empty()
             ? 0
             : group.front().result.at("picks")[0].at("msg_size").get<std::int64_t>(),
         TuningConfig::default_decision()});
    out.comments.push_back(cname + " above " + std::to_string(max_comm_size) +
                           " ranks (the end of the campaign's range): Open MPI's default");
  }
  return out;
}

}  // namespace colltune
