#include "cli/report_table.h"

#include <string>

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
  for (const auto& r : report.at("results")) {
    const std::string key = r.at("collective").get<std::string>() + " P=" +
                            std::to_string(r.at("comm_size").get<int>());
    if (key != current) {
      current = key;
      std::fprintf(out, "\n%s\n", key.c_str());
      std::fprintf(out, "  %-10s %12s  %-34s %12s %8s\n", "size", "default us", "best configuration",
                   "tuned us", "speedup");
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
    std::string verdict = r.value("default_within_noise", false) ? " ~" : "";
    std::fprintf(out, "  %-10s %12s  %-34s %12.2f %7s%s\n",
                 human_bytes(r.at("msg_size").get<std::int64_t>()).c_str(),
                 d.is_number() ? fixed(d.get<double>(), 2).c_str() : "-",
                 config.c_str(), r.at("best_us").get<double>(),
                 s.is_number() ? fixed(s.get<double>(), 2, "x").c_str() : "-",
                 verdict.c_str());
  }
  const auto& cost = report.at("cost");
  std::fprintf(out, "\ncost: %d jobs, %d runs, %.1f s of benchmarks  (~ = default within noise)\n",
               cost.value("jobs", 0), cost.value("runs", 0),
               cost.value("benchmark_seconds", 0.0));
}

}  // namespace colltune
