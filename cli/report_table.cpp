#include "cli/report_table.h"

#include <string>

#include "campaign/campaign_states.h"
#include "rules/rules_writer.h"

namespace colltune {
namespace {

std::string fixed(double value, int decimals, const char* suffix = "") {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, value, suffix);
  return buf;
}

}  // namespace

void print_report_table(std::FILE* out, const nlohmann::json& report) {
  std::string current;
  int reverted = 0;
  for (const auto& r : report.at("results")) {
    const std::string key = r.at("collective").get<std::string>() +
                            " P=" + std::to_string(r.at("comm_size").get<int>());
    if (key != current) {
      current = key;
      std::fprintf(out, "\n%s\n", key.c_str());
      std::fprintf(out, "  %-10s %12s  %-34s %12s %8s   %-13s %5s\n", "size", "default us",
                   "best configuration", "tuned us", "speedup", "95% interval", "pairs");
    }
    const auto& best = r.at("best");
    std::string config = r.value("best_name", std::string("?"));
    if (best.value("algorithm", 0) != 0) {
      config += " (" + std::to_string(best.value("algorithm", 0)) + ")";
      if (best.value("segsize", 0) > 0) config += " seg " + human_bytes(best.value("segsize", 0));
      if (best.value("fanout", 0) > 0) config += " fan " + std::to_string(best.value("fanout", 0));
    }
    const auto& d = r.at("default_us");
    const auto& s = r.at("speedup");
    const auto& b = r.at("best_us");
    const bool tie =
        r.contains("tie") ? r.value("tie", true) : r.value("default_within_noise", false);
    std::string mark = tie ? "~" : " ";
    if (r.contains("reverted") && r.at("reverted").is_object()) {
      mark += "R";
      ++reverted;
    }
    const auto& lo = r.contains("speedup_low") ? r.at("speedup_low") : nlohmann::json();
    const auto& hi = r.contains("speedup_high") ? r.at("speedup_high") : nlohmann::json();
    const std::string interval = lo.is_number() && hi.is_number()
                                     ? fixed(lo.get<double>(), 2) + "-" + fixed(hi.get<double>(), 2)
                                     : "-";
    std::fprintf(out, "  %-10s %12s  %-34s %12s %7s%-3s %-13s %5d\n",
                 human_bytes(r.at("msg_size").get<std::int64_t>()).c_str(),
                 d.is_number() ? fixed(d.get<double>(), 2).c_str() : "-", config.c_str(),
                 b.is_number() ? fixed(b.get<double>(), 2).c_str() : "-",
                 s.is_number() ? fixed(s.get<double>(), 2, "x").c_str() : "-", mark.c_str(),
                 interval.c_str(), r.value("pairs", 0));
  }
  const auto& cost = report.at("cost");
  std::fprintf(out,
               "\ncost: %d jobs, %d runs, %.1f s of benchmarks  (~ = tie: the default, or an "
               "interval that does not exclude 1.00x)\n",
               cost.value("jobs", 0), cost.value("runs", 0), cost.value("benchmark_seconds", 0.0));
  // Where the node time went (a node-second budget limits the search only).
  if (const auto parts = cost.value("by_purpose", nlohmann::json::object());
      parts.is_object() && !parts.empty()) {
    std::string line;
    for (const JobPurpose purpose : kJobPurposes)
      if (const char* key = to_string(purpose); parts.contains(key))
        line += std::string(line.empty() ? "" : ", ") + purpose_label(purpose) + " " +
                fixed(parts.at(key).value("node_seconds", 0.0), 1) + " s";
    std::fprintf(out, "node time by purpose: %s\n", line.c_str());
  }
  if (reverted > 0)
    std::fprintf(out,
                 "R = reverted to the default: measured significantly slower with the file "
                 "loaded (%d sizes; the report's \"reverted\" says why)\n",
                 reverted);
}

}  // namespace colltune
