// Fingerprints and their differences as text for people (`colltune fingerprint`, retune).
#include <sstream>

#include "campaign/fingerprint.h"

namespace colltune {
using json = nlohmann::json;

namespace {

std::string show(const json& v) {
  if (v.is_null()) return "(absent)";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

}  // namespace

std::string format_changes(const std::vector<FingerprintChange>& changes) {
  std::string out;
  for (const auto& c : changes) {
    out += c.field + ": " + show(c.before) + " -> " + show(c.after);
    if (!c.relevant) out += " (not relevant)";
    out += "\n";
  }
  return out;
}

std::string format_fingerprint(const json& fp) {
  auto get = [&](const json::json_pointer& p) -> std::string {
    if (!fp.contains(p)) return kFingerprintUnknown;
    const auto& v = fp.at(p);
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  std::ostringstream out;
  if (fp.contains("model")) {
    out << "model backend:  " << get(json::json_pointer("/model/backend")) << " ("
        << get(json::json_pointer("/collected_on")) << ")\n";
    out << "Open MPI:       " << get(json::json_pointer("/open_mpi/version")) << "\n";
  } else {
    out << "Open MPI:       " << get(json::json_pointer("/open_mpi/version")) << "\n";
    std::string algs = kFingerprintUnknown;
    if (fp.contains("coll_tuned") && fp["coll_tuned"].is_object() &&
        fp["coll_tuned"].contains("algorithms")) {
      algs.clear();
      for (const auto& [coll, ids] : fp["coll_tuned"]["algorithms"].items())
        algs += (algs.empty() ? "" : " ") + coll + ":" + std::to_string(ids.size());
    }
    out << "coll_tuned:     " << algs << "\n";
    std::string comps = kFingerprintUnknown;
    if (fp.contains("coll_components") && fp["coll_components"].is_object()) {
      comps.clear();
      for (const auto& [name, c] : fp["coll_components"].items())
        if (c.value("active", false))
          comps += (comps.empty() ? "" : ", ") + name + " " + c["priority"].dump();
    }
    out << "coll active:    " << comps << "\n";
    out << "tuned pre-empted by: " << get(json::json_pointer("/tuned_preempted_by")) << "\n";
    out << "OSU:            " << get(json::json_pointer("/osu/version")) << " ("
        << get(json::json_pointer("/osu/path")) << ")\n";
    out << "nodes:          " << get(json::json_pointer("/cluster/node_count")) << " ("
        << get(json::json_pointer("/cluster/scheduler")) << ")\n";
    if (fp.contains("node_types") && fp["node_types"].is_object())
      for (const auto& [t, n] : fp["node_types"].items()) {
        out << "  type " << t << ": " << (n.is_object() ? n.value("nodes", 0) : 0) << " node(s)";
        if (n.is_object()) {
          out << ", " << (n.contains("cpus") ? show(n["cpus"]) : kFingerprintUnknown) << " CPUs";
          out << ", " << (n.contains("cpu_model") ? show(n["cpu_model"]) : kFingerprintUnknown);
          out << ", kernel " << (n.contains("kernel") ? show(n["kernel"]) : kFingerprintUnknown);
        }
        out << "\n";
      }
    out << "network:        ";
    if (fp.contains("network") && fp["network"].is_object()) {
      const auto& n = fp["network"];
      out << "verbs "
          << (n.contains("ibverbs")
                  ? (n["ibverbs"].is_object() ? std::to_string(n["ibverbs"].size()) + " device(s)"
                                              : show(n["ibverbs"]))
                  : kFingerprintUnknown)
          << ", UCX "
          << (n.contains("ucx") && n["ucx"].is_object()
                  ? show(n["ucx"].value("version", json(kFingerprintUnknown)))
                  : kFingerprintUnknown)
          << ", libfabric "
          << (n.contains("libfabric") && n["libfabric"].is_array()
                  ? std::to_string(n["libfabric"].size()) + " endpoint(s)"
                  : kFingerprintUnknown);
      if (n.contains("interfaces") && n["interfaces"].is_object()) {
        out << ", interfaces";
        for (const auto& [name, i] : n["interfaces"].items())
          out << " " << name << " (mtu "
              << (i.is_object() ? show(i.value("mtu", json(kFingerprintUnknown)))
                                : kFingerprintUnknown)
              << ")";
      }
    }
    out << "\n";
  }
  if (fp.contains("unknown") && fp["unknown"].is_object() && !fp["unknown"].empty()) {
    out << "unknown:\n";
    for (const auto& [k, v] : fp["unknown"].items()) out << "  " << k << ": " << show(v) << "\n";
  }
  out << "hash:           " << get(json::json_pointer("/hash")) << "\n";
  return out.str();
}

}  // namespace colltune
