#include "cli/cluster_summary.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace colltune {
namespace {

std::string join(const std::set<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

}  // namespace

void print_cluster_summary(std::FILE* out, const nlohmann::json& report) {
  if (!report.contains("cluster") || !report.at("cluster").is_array()) return;
  std::fprintf(out, "\nwhole cluster:\n");
  for (const auto& c : report.at("cluster")) {
    const std::string coll = c.value("collective", std::string());
    std::set<int> measured;
    for (const auto& p : c.value("measured", nlohmann::json::array()))
      measured.insert(p.get<int>());
    std::set<int> predicted;
    int cells = 0, tuned = 0;
    double lo = 1, hi = 0;
    for (const auto& p : report.value("predicted", nlohmann::json::array())) {
      if (p.value("collective", std::string()) != coll) continue;
      predicted.insert(p.at("comm_size").get<int>());
      ++cells;
      if (p.at("best").at("algorithm").get<int>() == 0) continue;
      ++tuned;
      lo = std::min(lo, p.value("confidence", 0.0));
      hi = std::max(hi, p.value("confidence", 0.0));
    }
    const std::string stop = c.value("stop_reason", std::string());
    std::fprintf(out, "  %s: measured P=%s%s; ", coll.c_str(), join(measured).c_str(),
                 stop.empty() ? "" : (" (search stopped by: " + stop + ")").c_str());
    if (predicted.empty()) {
      std::fprintf(out, "nothing predicted (no size in the range was left unmeasured)");
    } else {
      std::fprintf(out, "predicted P=%s: %d of %d cells tuned", join(predicted).c_str(), tuned,
                   cells);
      if (tuned > 0) std::fprintf(out, " (confidence %.2f-%.2f)", lo, hi);
      std::fprintf(out, ", the rest default");
    }
    std::fprintf(out, "; above P=%d: Open MPI's default\n", c.value("max_comm_size", 0));
  }
}

}  // namespace colltune
