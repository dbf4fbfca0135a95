// The end-of-campaign lines of a whole-cluster campaign (docs/whole-cluster.md): per collective
// the sizes measured, the sizes predicted with how many cells got a tuned choice and their
// confidence, and the policy above the range; and, under a budget for the whole campaign, the
// cells whose candidates it could not pay to test (the default stands there, untested).
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>

namespace colltune {

// `report` is the JSON of campaign_report(); prints nothing when it has no "cluster" part.
void print_cluster_summary(std::FILE* out, const nlohmann::json& report);

}  // namespace colltune
