#include "runner/sim/cluster_profile.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "core/install_layout.h"

namespace colltune::sim {

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw std::invalid_argument("profile " + where + ": " + what);
}

// Unknown keys are errors (a typo would otherwise silently keep a default); "notes" documents.
void check_keys(const nlohmann::json& j, const std::set<std::string>& allowed,
                const std::string& where) {
  if (!j.is_object()) bad(where, "expected a JSON object");
  for (const auto& [key, value] : j.items())
    if (!allowed.contains(key) && key != "notes") bad(where, "unknown field \"" + key + "\"");
}

template <typename T>
T get_or(const nlohmann::json& j, const char* key, T fallback, const std::string& where) {
  if (!j.contains(key)) return fallback;
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    bad(where, std::string("field \"") + key + "\" has the wrong type");
  }
}

std::string to_string(Protocol p) { return p == Protocol::eager ? "eager" : "rendezvous"; }

LinkLevel level_from_json(const nlohmann::json& j, const std::string& where) {
  check_keys(j, {"contention", "pieces"}, where);
  LinkLevel level;
  level.contention = get_or(j, "contention", 0.0, where);
  if (level.contention < 0 || level.contention > 1) bad(where, "contention must be in [0, 1]");
  if (!j.contains("pieces") || !j.at("pieces").is_array() || j.at("pieces").empty())
    bad(where, "needs a non-empty \"pieces\" array");
  std::int64_t previous = -1;
  const auto& pieces = j.at("pieces");
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const std::string pw = where + ".pieces[" + std::to_string(i) + "]";
    const auto& pj = pieces[i];
    check_keys(pj, {"up_to_bytes", "latency_us", "overhead_us", "bandwidth_gbps", "protocol"}, pw);
    LinkPiece p;
    const bool last = i + 1 == pieces.size();
    if (pj.contains("up_to_bytes") && !pj.at("up_to_bytes").is_null())
      p.up_to_bytes = get_or<std::int64_t>(pj, "up_to_bytes", -1, pw);
    if (last && p.up_to_bytes != -1) bad(pw, "the last piece must be unbounded (up_to_bytes null)");
    if (!last && p.up_to_bytes <= previous) bad(pw, "up_to_bytes must increase");
    if (!last) previous = p.up_to_bytes;
    p.latency_us = get_or(pj, "latency_us", p.latency_us, pw);
    p.overhead_us = get_or(pj, "overhead_us", p.overhead_us, pw);
    p.bandwidth_gbps = get_or(pj, "bandwidth_gbps", p.bandwidth_gbps, pw);
    const auto protocol = get_or<std::string>(pj, "protocol", "eager", pw);
    if (protocol == "eager") {
      p.protocol = Protocol::eager;
    } else if (protocol == "rendezvous") {
      p.protocol = Protocol::rendezvous;
    } else {
      bad(pw, "protocol must be \"eager\" or \"rendezvous\"");
    }
    if (p.latency_us < 0 || p.overhead_us < 0) bad(pw, "times must be >= 0");
    if (!(p.bandwidth_gbps > 0)) bad(pw, "bandwidth_gbps must be > 0");
    level.pieces.push_back(p);
  }
  return level;
}

nlohmann::json level_to_json(const LinkLevel& level) {
  nlohmann::json pieces = nlohmann::json::array();
  for (const auto& p : level.pieces)
    pieces.push_back({{"up_to_bytes",
                       p.up_to_bytes < 0 ? nlohmann::json(nullptr) : nlohmann::json(p.up_to_bytes)},
                      {"latency_us", p.latency_us},
                      {"overhead_us", p.overhead_us},
                      {"bandwidth_gbps", p.bandwidth_gbps},
                      {"protocol", to_string(p.protocol)}});
  return {{"contention", level.contention}, {"pieces", pieces}};
}

}  // namespace

const LinkPiece& LinkLevel::piece_for(std::int64_t bytes) const {
  for (const auto& p : pieces)
    if (p.up_to_bytes < 0 || bytes <= p.up_to_bytes) return p;
  return pieces.back();
}

int Placement::node_of(int rank) const {
  return mapping == RankMapping::block ? rank / ppn : rank % nodes;
}

ClusterProfile ClusterProfile::from_json(const nlohmann::json& j) {
  const std::string top = "(top level)";
  check_keys(
      j,
      {"name", "description", "nodes", "cores_per_node", "placement", "mapping",
       "reduce_ns_per_byte", "oversubscription_penalty", "intra_node", "inter_node", "noise",
       "ompi_version", "osu_version", "knomial_radix", "forced_chain_fanout", "launch_overhead_s"},
      top);
  ClusterProfile p;
  p.name = get_or<std::string>(j, "name", "", top);
  if (p.name.empty()) bad(top, "needs a \"name\"");
  p.description = get_or<std::string>(j, "description", "", top);
  p.nodes = get_or(j, "nodes", 0, top);
  p.cores_per_node = get_or(j, "cores_per_node", 0, top);
  if (p.nodes < 1) bad(top, "nodes must be >= 1");
  if (p.cores_per_node < 1) bad(top, "cores_per_node must be >= 1");
  const auto policy = get_or<std::string>(j, "placement", "packed", top);
  if (policy == "packed") {
    p.placement_policy = PlacementPolicy::packed;
  } else if (policy == "spread") {
    p.placement_policy = PlacementPolicy::spread;
  } else {
    bad(top, "placement must be \"packed\" or \"spread\"");
  }
  const auto mapping = get_or<std::string>(j, "mapping", "block", top);
  if (mapping == "block") {
    p.mapping = RankMapping::block;
  } else if (mapping == "cyclic") {
    p.mapping = RankMapping::cyclic;
  } else {
    bad(top, "mapping must be \"block\" or \"cyclic\"");
  }
  p.reduce_ns_per_byte = get_or(j, "reduce_ns_per_byte", p.reduce_ns_per_byte, top);
  p.oversubscription_penalty =
      get_or(j, "oversubscription_penalty", p.oversubscription_penalty, top);
  if (p.reduce_ns_per_byte < 0 || p.oversubscription_penalty < 0)
    bad(top, "reduce_ns_per_byte and oversubscription_penalty must be >= 0");
  if (!j.contains("intra_node")) bad(top, "needs \"intra_node\"");
  p.intra_node = level_from_json(j.at("intra_node"), "intra_node");
  if (j.contains("inter_node")) {
    p.inter_node = level_from_json(j.at("inter_node"), "inter_node");
  } else if (p.nodes > 1) {
    bad(top, "a profile with several nodes needs \"inter_node\"");
  } else {
    p.inter_node = p.intra_node;  // never used with one node
  }
  if (j.contains("noise")) {
    try {
      p.noise = NoiseModel::from_json(j.at("noise"));
    } catch (const std::invalid_argument& e) {
      bad(top, e.what());
    }
  }
  p.ompi_version = get_or<std::string>(j, "ompi_version", p.ompi_version, top);
  p.osu_version = get_or<std::string>(j, "osu_version", p.osu_version, top);
  p.knomial_radix = get_or(j, "knomial_radix", p.knomial_radix, top);
  p.forced_chain_fanout = get_or(j, "forced_chain_fanout", p.forced_chain_fanout, top);
  p.launch_overhead_s = get_or(j, "launch_overhead_s", p.launch_overhead_s, top);
  if (p.knomial_radix < 2) bad(top, "knomial_radix must be >= 2");
  if (p.forced_chain_fanout < 1) bad(top, "forced_chain_fanout must be >= 1");
  if (p.launch_overhead_s < 0) bad(top, "launch_overhead_s must be >= 0");
  return p;
}

nlohmann::json ClusterProfile::to_json() const {
  return {{"name", name},
          {"description", description},
          {"nodes", nodes},
          {"cores_per_node", cores_per_node},
          {"placement", placement_policy == PlacementPolicy::packed ? "packed" : "spread"},
          {"mapping", mapping == RankMapping::block ? "block" : "cyclic"},
          {"reduce_ns_per_byte", reduce_ns_per_byte},
          {"oversubscription_penalty", oversubscription_penalty},
          {"intra_node", level_to_json(intra_node)},
          {"inter_node", level_to_json(inter_node)},
          {"noise", noise.to_json()},
          {"ompi_version", ompi_version},
          {"osu_version", osu_version},
          {"knomial_radix", knomial_radix},
          {"forced_chain_fanout", forced_chain_fanout},
          {"launch_overhead_s", launch_overhead_s}};
}

Placement ClusterProfile::default_placement(int comm_size) const {
  if (comm_size < 1) throw std::invalid_argument("comm_size must be >= 1");
  int used_nodes = 1;
  if (placement_policy == PlacementPolicy::packed) {
    used_nodes = std::min(nodes, (comm_size + cores_per_node - 1) / cores_per_node);
  } else {
    used_nodes = std::min(nodes, comm_size);
  }
  return placement(comm_size, used_nodes, 0);
}

Placement ClusterProfile::placement(int comm_size, int used_nodes, int ppn) const {
  if (comm_size < 1) throw std::invalid_argument("comm_size must be >= 1");
  if (used_nodes < 1) throw std::invalid_argument("nodes must be >= 1");
  if (used_nodes > nodes)
    throw std::invalid_argument("profile \"" + name + "\" has " + std::to_string(nodes) +
                                " nodes; the request asks for " + std::to_string(used_nodes));
  if (used_nodes > comm_size)
    throw std::invalid_argument("more nodes (" + std::to_string(used_nodes) + ") than ranks (" +
                                std::to_string(comm_size) + ")");
  Placement p;
  p.comm_size = comm_size;
  p.nodes = used_nodes;
  p.mapping = mapping;
  p.ppn = ppn > 0 ? ppn : (comm_size + used_nodes - 1) / used_nodes;
  if (static_cast<long long>(p.ppn) * used_nodes < comm_size)
    throw std::invalid_argument("nodes x ppn is smaller than comm_size");
  return p;
}

std::filesystem::path builtin_profile_dir() { return install_layout::sim_profile_dir(); }

namespace {

std::vector<std::filesystem::path> profile_dirs(const std::vector<std::filesystem::path>& extra) {
  std::vector<std::filesystem::path> dirs = extra;
  if (const char* env = std::getenv("COLLTUNE_SIM_PROFILE_DIR"); env && *env)
    dirs.emplace_back(env);
  dirs.push_back(builtin_profile_dir());
  return dirs;
}

ClusterProfile load_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot open profile " + path.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument("profile " + path.string() + " is not valid JSON: " + e.what());
  }
  try {
    return ClusterProfile::from_json(j);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path.string() + ": " + e.what());
  }
}

}  // namespace

ClusterProfile load_profile(std::string_view name_or_path,
                            const std::vector<std::filesystem::path>& search_dirs) {
  const std::string text(name_or_path);
  if (text.empty()) throw std::invalid_argument("empty profile name");
  const std::filesystem::path as_path(text);
  std::error_code ec;
  if (std::filesystem::is_regular_file(as_path, ec) || as_path.extension() == ".json" ||
      text.find('/') != std::string::npos)
    return load_file(as_path);
  std::string searched;
  for (const auto& dir : profile_dirs(search_dirs)) {
    const auto candidate = dir / (text + ".json");
    if (std::filesystem::is_regular_file(candidate, ec)) return load_file(candidate);
    searched += " " + candidate.string();
  }
  throw std::invalid_argument("no simulated cluster profile \"" + text + "\" (looked for" +
                              searched + ")");
}

std::vector<std::string> available_profiles(const std::vector<std::filesystem::path>& search_dirs) {
  std::set<std::string> names;
  for (const auto& dir : profile_dirs(search_dirs)) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".json")
        names.insert(entry.path().stem().string());
  }
  return {names.begin(), names.end()};
}

}  // namespace colltune::sim
