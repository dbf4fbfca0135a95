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
    std::set<int> unpaid_at;
    int unpaid = 0;
    for (const auto& r : report.value("results", nlohmann::json::array()))
      if (r.value("collective", std::string()) == coll && r.value("untested_for_money", false)) {
        unpaid_at.insert(r.at("comm_size").get<int>());
        ++unpaid;
      }
    if (unpaid > 0)
      std::fprintf(out,
                   "    %d cell%s at P=%s kept Open MPI's default untested: the total "
                   "node-seconds could not pay to test %s candidate%s (a larger "
                   "--total-node-seconds, or a search budget with the final phases on top, "
                   "tests them)\n",
                   unpaid, unpaid == 1 ? "" : "s", join(unpaid_at).c_str(),
                   unpaid == 1 ? "its" : "their", unpaid == 1 ? "" : "s");
  }
}

}  // namespace colltune
