// Comparing fingerprints: which fields matter for the rules, the hash over those, and the
// field-by-field difference of two fingerprints (as JSON for the API).
#include <algorithm>
#include <set>

#include "campaign/fingerprint.h"
#include "core/sha256.h"
#include "core/text.h"

namespace colltune {
using json = nlohmann::json;

namespace {

bool is_unknown(const json& v) {
  return v.is_string() && v.get<std::string>() == kFingerprintUnknown;
}

const std::set<std::string>& skipped_top_keys() {
  static const std::set<std::string> k = {"hash", "unknown", "collected_at", "schema"};
  return k;
}

void diff_into(const json& a, const json& b, const std::string& path,
               std::vector<FingerprintChange>& out) {
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    for (const auto& k : keys) {
      if (path.empty() && skipped_top_keys().count(k)) continue;
      const std::string p = path.empty() ? k : path + "." + k;
      const bool in_a = a.contains(k), in_b = b.contains(k);
      if (in_a && in_b)
        diff_into(a[k], b[k], p, out);
      else
        out.push_back({p, in_a ? a[k] : json(nullptr), in_b ? b[k] : json(nullptr), false});
    }
    return;
  }
  // Lists of objects of the same length (e.g. a model's pieces) compare element by element.
  if (a.is_array() && b.is_array() && a.size() == b.size() && !a.empty() &&
      std::all_of(a.begin(), a.end(), [](const json& x) { return x.is_object(); }) &&
      std::all_of(b.begin(), b.end(), [](const json& x) { return x.is_object(); })) {
    for (std::size_t i = 0; i < a.size(); ++i)
      diff_into(a[i], b[i], path + "." + std::to_string(i), out);
    return;
  }
  if (a != b) out.push_back({path, a, b, false});
}

void flatten_relevant(const json& v, const std::string& path, std::vector<std::string>& lines) {
  if (v.is_object() && !v.empty()) {
    for (const auto& [k, child] : v.items()) {
      if (path.empty() && skipped_top_keys().count(k)) continue;
      flatten_relevant(child, path.empty() ? k : path + "." + k, lines);
    }
    return;
  }
  if (path.empty() || is_unknown(v) || !is_relevant_field(path)) return;
  lines.push_back(path + "=" + v.dump());
}

}  // namespace

std::string fingerprint_hash(const json& fingerprint) {
  std::vector<std::string> lines;
  flatten_relevant(fingerprint, "", lines);
  std::sort(lines.begin(), lines.end());
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  return to_hex(sha256(text));
}

bool is_relevant_field(const std::string& path) {
  const auto parts = split(path, '.');
  if (parts.empty()) return false;
  const std::string_view top = parts[0];
  if (top == "open_mpi") return parts.size() == 1 || parts[1] == "version";
  if (top == "coll_tuned" || top == "coll_components" || top == "coll_selection" ||
      top == "tuned_preempted_by" || top == "network" || top == "model")
    return true;
  if (top == "cluster") return parts.size() >= 2 && parts[1] == "node_count";
  if (top == "node_types") {
    if (parts.size() <= 2) return true;  // a node type appeared or disappeared
    static const std::set<std::string, std::less<>> kFields = {
        "nodes", "cpus", "sockets_cores_threads", "cpu_model", "features", "topology"};
    return kFields.count(parts[2]) > 0;
  }
  return false;
}

std::vector<FingerprintChange> diff_fingerprints(const json& before, const json& after) {
  std::vector<FingerprintChange> out;
  diff_into(before.is_object() ? before : json::object(),
            after.is_object() ? after : json::object(), "", out);
  for (auto& c : out) {
    bool unknown_side = is_unknown(c.before) || is_unknown(c.after);
    // A whole subtree on one side whose counterpart is unknown (e.g. "network.ucx").
    c.relevant = !unknown_side && is_relevant_field(c.field);
  }
  std::sort(out.begin(), out.end(), [](const FingerprintChange& a, const FingerprintChange& b) {
    return a.field < b.field;
  });
  return out;
}

bool any_relevant(const std::vector<FingerprintChange>& changes) {
  return std::any_of(changes.begin(), changes.end(), [](const auto& c) { return c.relevant; });
}

json changes_json(const std::vector<FingerprintChange>& changes) {
  json out = json::array();
  for (const auto& c : changes)
    out.push_back(
        {{"field", c.field}, {"before", c.before}, {"after", c.after}, {"relevant", c.relevant}});
  return out;
}

}  // namespace colltune
