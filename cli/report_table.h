// The end-of-campaign table: per collective and message size, Open MPI's default latency, the
// best configuration, its latency and the speed-up.
#pragma once

#include <cstdio>

#include <nlohmann/json.hpp>

namespace colltune {

// `report` is the JSON of campaign_report().
void print_report_table(std::FILE* out, const nlohmann::json& report);

}  // namespace colltune
