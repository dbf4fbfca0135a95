#include "campaign/fingerprint.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/ompi_version.h"
#include "runner/process.h"
#include "core/sha256.h"
#include "campaign/store.h"

namespace colltune {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kUnknown = "unknown";
constexpr int kSchema = 1;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!text.empty() && text.back() == sep) out.emplace_back();
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A key usable as one component of a dotted path.
std::string path_key(std::string s) {
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

// The fingerprint under construction: values and the reasons of unknown ones.
class Builder {
 public:
  json doc = json::object();

  void unknown(const std::string& path, const std::string& reason) {
    set(path, kUnknown);
    doc["unknown"][path] = reason;
  }
  void set(const std::string& path, json value) {
    json* node = &doc;
    const auto parts = split(path, '.');
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      if (!node->contains(parts[i]) || !(*node)[parts[i]].is_object())
        (*node)[parts[i]] = json::object();
      node = &(*node)[parts[i]];
    }
    (*node)[parts.back()] = std::move(value);
  }
};

// ---- Open MPI ------------------------------------------------------------------------------

struct OmpiInfoParams {
  // component -> parameter -> value
  std::map<std::string, std::map<std::string, std::string>> values;
  // collective -> id -> name, from coll_tuned_<coll>_algorithm enumerators
  std::map<std::string, std::map<std::string, std::string>> algorithms;
};

// `ompi_info --param coll all --level 9 --parsable`: mca:coll:<comp>:param:<name>:value:<v> and
// mca:coll:tuned:param:coll_tuned_<coll>_algorithm:enumerator:value:<id>:<name>.
OmpiInfoParams parse_ompi_info_params(const std::string& text) {
  OmpiInfoParams out;
  for (const auto& line : lines_of(text)) {
    if (!starts_with(line, "mca:coll:")) continue;
    const auto f = split(line, ':');
    if (f.size() < 7 || f[3] != "param") continue;
    const std::string& component = f[2];
    const std::string& name = f[4];
    if (f[5] == "value") {
      // The value may itself hold ':' (paths): everything after the 6th field.
      std::size_t pos = 0;
      for (int i = 0; i < 6; ++i) pos = line.find(':', pos) + 1;
      out.values[component][name] = line.substr(pos);
    } else if (f[5] == "enumerator" && f.size() >= 9 && f[6] == "value" && component == "tuned") {
      const std::string prefix = "coll_tuned_", suffix = "_algorithm";
      if (!starts_with(name, prefix) || name.size() <= prefix.size() + suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const std::string coll =
          name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
      if (f[7] == "0") continue;  // "ignore"
      out.algorithms[coll][f[7]] = f[8];
    }
  }
  return out;
}

bool truthy(const std::string& v) {
  const std::string s = trim(v);
  return !(s == "0" || s == "false" || s == "no" || s.empty());
}

// Components that never handle the collectives tuned handles on an intra-communicator of
// several ranks (self: MPI_COMM_SELF; inter: inter-communicators; sync: only with
// barrier_before/after; libnbc: non-blocking; cuda, monitoring: wrappers; basic: fallback).
bool special_component(const std::string& name) {
  static const std::set<std::string> kSpecial = {"self", "inter",      "sync", "libnbc",
                                                 "cuda", "monitoring", "basic"};
  return kSpecial.count(name) > 0;
}

void collect_open_mpi(Builder& b, const CommandRunner& run, const FingerprintOptions& options) {
  const auto version = run({options.ompi_info, "--version"}, "");
  const auto parsed = version.ok() ? parse_ompi_version(version.stdout_text) : std::nullopt;
  if (parsed)
    b.set("open_mpi.version", parsed->to_string());
  else
    b.unknown("open_mpi.version", version.ok() ? "no version in ompi_info --version"
                                               : "ompi_info: " + version.failure());

  const auto params =
      run({options.ompi_info, "--param", "coll", "all", "--level", "9", "--parsable"}, "");
  const OmpiInfoParams p =
      params.ok() ? parse_ompi_info_params(params.stdout_text) : OmpiInfoParams{};
  const std::string why = params.ok() ? "no coll parameters in ompi_info output"
                                      : "ompi_info --param coll all: " + params.failure();
  if (p.algorithms.empty()) {
    b.unknown("coll_tuned", why);
  } else {
    json algorithms = json::object();
    for (const auto& [coll, ids] : p.algorithms) algorithms[coll] = ids;
    b.set("coll_tuned.algorithms", algorithms);
  }
  if (p.values.empty()) {
    b.unknown("coll_components", why);
    b.unknown("coll_selection", why);
    b.unknown("tuned_preempted_by", why);
    return;
  }
  // The "coll" selection parameter: "" = all, "a,b" = only these, "^a,b" = all but these.
  std::string selection;
  if (auto base = p.values.find("base"); base != p.values.end())
    if (auto it = base->second.find("coll"); it != base->second.end()) selection = trim(it->second);
  std::set<std::string> listed;
  const bool exclude = !selection.empty() && selection.front() == '^';
  for (const auto& name : split(exclude ? selection.substr(1) : selection, ','))
    if (!trim(name).empty()) listed.insert(trim(name));
  json components = json::object();
  int tuned_priority = 30;
  for (const auto& [name, values] : p.values) {
    if (name == "base") continue;
    json c = json::object();
    int priority = 0;
    if (auto it = values.find("coll_" + name + "_priority"); it != values.end()) {
      try {
        priority = std::stoi(it->second);
      } catch (const std::exception&) {
      }
      c["priority"] = priority;
    } else {
      c["priority"] = nullptr;
    }
    bool active = priority > 0;
    if (auto it = values.find("coll_" + name + "_enable"); it != values.end()) {
      c["enable"] = it->second;
      active = active && truthy(it->second);
    }
    if (!listed.empty())
      active = active && (exclude ? !listed.count(name) : listed.count(name) > 0);
    c["active"] = active;
    if (name == "tuned") tuned_priority = priority;
    components[name] = c;
  }
  b.set("coll_components", components);
  b.set("coll_selection", selection);
  json preempt = json::array();
  const bool tuned_active = components.contains("tuned") && components["tuned"]["active"] == true;
  for (const auto& [name, c] : components.items()) {
    if (name == "tuned" || special_component(name) || c["active"] != true) continue;
    if (!tuned_active || c["priority"].get<int>() > tuned_priority) preempt.push_back(name);
  }
  b.set("tuned_preempted_by", preempt);
}

// ---- OSU -----------------------------------------------------------------------------------

void collect_osu(Builder& b, const CommandRunner& run, const FingerprintOptions& options) {
  if (options.osu_dir.empty()) {
    b.unknown("osu", "no OSU folder given");
    return;
  }
  b.set("osu.path", options.osu_dir.string());
  const auto out = run({(options.osu_dir / "osu_bcast").string(), "--version"}, "");
  // "# OSU MPI Broadcast Latency Test v5.6.2"
  std::string version;
  for (const auto& line : lines_of(out.stdout_text)) {
    const auto pos = line.find(" v");
    if (starts_with(line, "# OSU") && pos != std::string::npos)
      version = trim(line.substr(pos + 2));
  }
  if (!version.empty())
    b.set("osu.version", version);
  else
    b.unknown("osu.version",
              out.ok() ? "osu_bcast --version printed no version" : "osu_bcast: " + out.failure());
}

// ---- Nodes ---------------------------------------------------------------------------------

struct NodeLine {
  std::string name, cpus, sct, memory_mb, features;
};

// `sinfo -h -N -o %N|%P|%c|%z|%m|%f` -> nodes of `partition` (the default one, marked '*',
// when empty; all nodes when none is marked).
std::vector<NodeLine> parse_sinfo(const std::string& text, const std::string& partition) {
  std::map<std::string, NodeLine> all, chosen;
  bool any_default = false;
  for (const auto& line : lines_of(text)) {
    const auto f = split(trim(line), '|');
    if (f.size() < 6) continue;
    NodeLine n{trim(f[0]), trim(f[2]), trim(f[3]), trim(f[4]), trim(f[5])};
    std::string part = trim(f[1]);
    const bool is_default = !part.empty() && part.back() == '*';
    if (is_default) part.pop_back();
    any_default = any_default || is_default;
    all[n.name] = n;
    if (partition.empty() ? is_default : part == partition) chosen[n.name] = n;
  }
  const auto& source = (partition.empty() && !any_default) ? all : chosen;
  std::vector<NodeLine> out;
  for (const auto& [name, n] : source) out.push_back(n);
  return out;
}

// lscpu -J: {"lscpu": [{"field": "Model name:", "data": "..", "children": [..]}, ..]}
void lscpu_fields(const json& entries, std::map<std::string, std::string>& out) {
  if (!entries.is_array()) return;
  for (const auto& e : entries) {
    if (!e.is_object()) continue;
    std::string field = e.value("field", "");
    if (!field.empty() && field.back() == ':') field.pop_back();
    if (e.contains("data") && e["data"].is_string()) out[field] = e["data"].get<std::string>();
    if (e.contains("children")) lscpu_fields(e["children"], out);
  }
}

// `lstopo-no-graphics --of console`: counts of the CPU-side objects, cache sizes and the
// network / OpenFabrics devices it shows.
json summarize_lstopo(const std::string& text) {
  std::map<std::string, int> counts;
  std::map<std::string, std::set<std::string>> cache_sizes;
  std::set<std::string> net, fabrics;
  static const std::set<std::string> kCounted = {"Package", "Die", "NUMANode", "Group0", "L3",
                                                 "L2",      "L1d", "L1i",      "Core",   "PU"};
  for (const auto& raw : lines_of(text)) {
    std::string line = trim(raw);
    std::size_t start = 0;
    while (start <= line.size()) {
      auto end = line.find(" + ", start);
      const std::string token =
          trim(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
      start = end == std::string::npos ? line.size() + 1 : end + 3;
      const std::string type = token.substr(0, token.find(' '));
      if (kCounted.count(type)) {
        ++counts[type];
        const auto open = token.find('(');
        if (type[0] == 'L' && open != std::string::npos)
          cache_sizes[type].insert(token.substr(open + 1, token.find(')', open) - open - 1));
      } else if (type == "Net" || type == "OpenFabrics") {
        const auto q = token.find('"');
        const std::string name =
            q == std::string::npos ? token : token.substr(q + 1, token.rfind('"') - q - 1);
        (type == "Net" ? net : fabrics).insert(name);
      }
    }
  }
  json out = json::object();
  for (const auto& [type, n] : counts) out[type] = n;
  for (const auto& [type, sizes] : cache_sizes) {
    std::string joined;
    for (const auto& s : sizes) joined += (joined.empty() ? "" : ",") + s;
    out[type + "_size"] = joined;
  }
  out["net_devices"] = std::vector<std::string>(net.begin(), net.end());
  out["openfabrics_devices"] = std::vector<std::string>(fabrics.begin(), fabrics.end());
  return out;
}

// CPU, topology and kernel of one node, into `prefix`.
void collect_node_details(Builder& b, const CommandRunner& run, const std::string& node,
                          const std::string& prefix) {
  const auto lscpu = run({"lscpu", "-J"}, node);
  std::map<std::string, std::string> f;
  if (lscpu.ok()) {
    const auto j = json::parse(lscpu.stdout_text, nullptr, false);
    if (!j.is_discarded() && j.contains("lscpu")) lscpu_fields(j["lscpu"], f);
  }
  if (f.count("Model name"))
    b.set(prefix + ".cpu_model", f["Model name"]);
  else
    b.unknown(prefix + ".cpu_model",
              lscpu.ok() ? "lscpu -J has no model name" : "lscpu: " + lscpu.failure());

  CommandOutput topo = run({"lstopo-no-graphics", "--of", "console"}, node);
  if (!topo.found) topo = run({"hwloc-ls", "--of", "console"}, node);
  if (topo.ok())
    b.set(prefix + ".topology", summarize_lstopo(topo.stdout_text));
  else
    b.unknown(prefix + ".topology", "lstopo-no-graphics: " + topo.failure());

  const auto uname = run({"uname", "-r"}, node);
  if (uname.ok() && !trim(uname.stdout_text).empty())
    b.set(prefix + ".kernel", trim(uname.stdout_text));
  else
    b.unknown(prefix + ".kernel", "uname -r: " + uname.failure());
}

std::string type_name(const std::string& cpus, const std::string& sct,
                      const std::string& features) {
  std::string name = cpus + "cpu " + sct;
  if (!features.empty() && features != "(null)") name += " " + features;
  return path_key(name);
}

void collect_this_machine(Builder& b, const CommandRunner& run) {
  b.set("cluster.scheduler", "none");
  b.set("cluster.node_count", 1);
  const auto lscpu = run({"lscpu", "-J"}, "");
  std::map<std::string, std::string> f;
  if (lscpu.ok()) {
    const auto j = json::parse(lscpu.stdout_text, nullptr, false);
    if (!j.is_discarded() && j.contains("lscpu")) lscpu_fields(j["lscpu"], f);
  }
  const std::string cpus = f.count("CPU(s)") ? f["CPU(s)"] : kUnknown;
  const std::string sct =
      (f.count("Socket(s)") && f.count("Core(s) per socket") && f.count("Thread(s) per core"))
          ? f["Socket(s)"] + ":" + f["Core(s) per socket"] + ":" + f["Thread(s) per core"]
          : kUnknown;
  const std::string type = type_name(cpus, sct, "");
  const std::string prefix = "node_types." + type;
  b.set("cluster.nodes", json{{"localhost", type}});
  b.set(prefix + ".nodes", 1);
  if (cpus != kUnknown)
    b.set(prefix + ".cpus", std::stoi(cpus));
  else
    b.unknown(prefix + ".cpus",
              "lscpu: " + (lscpu.ok() ? std::string("no CPU(s)") : lscpu.failure()));
  if (sct != kUnknown)
    b.set(prefix + ".sockets_cores_threads", sct);
  else
    b.unknown(prefix + ".sockets_cores_threads", "lscpu: no socket/core/thread counts");
  const auto meminfo = run({"cat", "/proc/meminfo"}, "");
  bool memory = false;
  for (const auto& line : lines_of(meminfo.stdout_text))
    if (starts_with(line, "MemTotal:")) {
      try {
        b.set(prefix + ".memory_mb", std::stoll(trim(line.substr(9))) / 1024);
        memory = true;
      } catch (const std::exception&) {
      }
    }
  if (!memory) b.unknown(prefix + ".memory_mb", "/proc/meminfo: " + meminfo.failure());
  b.set(prefix + ".features", "");
  collect_node_details(b, run, "", prefix);
}

// true when Slurm answered (the nodes are then recorded, or unknown).
bool collect_slurm(Builder& b, const CommandRunner& run, const FingerprintOptions& options) {
  std::vector<std::string> argv = {"sinfo", "-h", "-N", "-o", "%N|%P|%c|%z|%m|%f"};
  const auto out = run(argv, "");
  if (!out.ok()) {
    if (options.scheduler != "slurm") return false;
    b.set("cluster.scheduler", "slurm");
    b.unknown("cluster.node_count", "sinfo: " + out.failure());
    b.unknown("node_types", "sinfo: " + out.failure());
    return true;
  }
  const auto nodes = parse_sinfo(out.stdout_text, options.partition);
  b.set("cluster.scheduler", "slurm");
  b.set("cluster.partition", options.partition.empty() ? "(default)" : options.partition);
  if (nodes.empty()) {
    b.set("cluster.node_count", 0);
    b.unknown("node_types", "sinfo lists no node in the partition");
    return true;
  }
  b.set("cluster.node_count", static_cast<int>(nodes.size()));
  std::map<std::string, std::vector<const NodeLine*>> types;
  json names = json::object();
  for (const auto& n : nodes) {
    const std::string t = type_name(n.cpus, n.sct, n.features);
    types[t].push_back(&n);
    names[n.name] = t;
  }
  b.set("cluster.nodes", names);
  for (const auto& [t, members] : types) {
    const std::string prefix = "node_types." + t;
    const NodeLine& first = *members.front();
    b.set(prefix + ".nodes", static_cast<int>(members.size()));
    try {
      b.set(prefix + ".cpus", std::stoi(first.cpus));
    } catch (const std::exception&) {
      b.unknown(prefix + ".cpus", "sinfo CPUs '" + first.cpus + "'");
    }
    b.set(prefix + ".sockets_cores_threads", first.sct);
    try {
      b.set(prefix + ".memory_mb", std::stoll(first.memory_mb));
    } catch (const std::exception&) {
      b.unknown(prefix + ".memory_mb", "sinfo memory '" + first.memory_mb + "'");
    }
    b.set(prefix + ".features", first.features == "(null)" ? "" : first.features);
    b.set(prefix + ".sampled_node", first.name);
    collect_node_details(b, run, first.name, prefix);
  }
  return true;
}

// ---- Network -------------------------------------------------------------------------------

}  // namespace

json parse_ip_links(const std::string& text) {
  json out = json::object();
  for (const auto& line : lines_of(text)) {
    // "2: eth0@if5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc ... link/ether ..."
    const auto first = line.find(": ");
    if (first == std::string::npos) continue;
    const auto second = line.find(": ", first + 2);
    if (second == std::string::npos) continue;
    std::string name = line.substr(first + 2, second - first - 2);
    if (auto at = name.find('@'); at != std::string::npos) name.resize(at);
    const auto flags_open = line.find('<', second), flags_close = line.find('>', second);
    if (flags_open == std::string::npos || flags_close == std::string::npos) continue;
    const std::string flags = "," + line.substr(flags_open + 1, flags_close - flags_open - 1) + ",";
    if (flags.find(",LOOPBACK,") != std::string::npos || flags.find(",UP,") == std::string::npos)
      continue;
    json entry = json::object();
    std::istringstream words(line.substr(flags_close + 1));
    std::string word;
    while (words >> word) {
      if (word == "mtu" && words >> word) {
        try {
          entry["mtu"] = std::stoi(word);
        } catch (const std::exception&) {
        }
      } else if (starts_with(word, "link/")) {
        entry["link"] = word.substr(5);
      }
    }
    out[path_key(name)] = entry;
  }
  return out;
}

namespace {

void collect_network(Builder& b, const CommandRunner& run, const std::string& node) {
  // Verbs devices: hca_id, transport, firmware, per port link layer and MTU.
  const auto ibv = run({"ibv_devinfo"}, node);
  const std::string all = ibv.stdout_text + ibv.stderr_text;
  if (!ibv.found) {
    b.unknown("network.ibverbs", "ibv_devinfo: not found");
  } else if (all.find("No IB devices found") != std::string::npos ||
             all.find("Failed to get IB devices list") != std::string::npos) {
    b.set("network.ibverbs", json::object());
  } else if (!ibv.ok()) {
    b.unknown("network.ibverbs", "ibv_devinfo: " + ibv.failure());
  } else {
    json devices = json::object();
    std::string hca, port;
    for (const auto& raw : lines_of(ibv.stdout_text)) {
      const std::string line = trim(raw);
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
      if (key == "hca_id")
        hca = path_key(value), port.clear();
      else if (hca.empty())
        continue;
      else if (key == "port")
        port = value;
      else if (port.empty() && (key == "transport" || key == "fw_ver" || key == "vendor_part_id"))
        devices[hca][key] = value;
      else if (!port.empty() && (key == "link_layer" || key == "active_mtu" ||
                                 key == "active_width" || key == "active_speed"))
        devices[hca]["ports"][port][key] = value;
    }
    b.set("network.ibverbs", devices);
  }

  const auto ucx = run({"ucx_info", "-v"}, node);
  std::string ucx_version;
  for (const auto& line : lines_of(ucx.stdout_text))
    if (starts_with(line, "# Version ")) ucx_version = trim(line.substr(10));
  if (ucx.ok() && !ucx_version.empty()) {
    b.set("network.ucx.version", ucx_version);
    const auto devices = run({"ucx_info", "-d"}, node);
    std::set<std::string> transports;
    std::string transport;
    for (const auto& raw : lines_of(devices.stdout_text)) {
      const std::string line = trim(raw);
      if (starts_with(line, "#")) {
        const std::string body = trim(line.substr(1));
        if (starts_with(body, "Transport:"))
          transport = trim(body.substr(10));
        else if (starts_with(body, "Device:") && !transport.empty())
          transports.insert(transport + "/" + trim(body.substr(7)));
      }
    }
    if (devices.ok())
      b.set("network.ucx.transports",
            std::vector<std::string>(transports.begin(), transports.end()));
    else
      b.unknown("network.ucx.transports", "ucx_info -d: " + devices.failure());
  } else {
    b.unknown("network.ucx",
              "ucx_info -v: " + (ucx.ok() ? std::string("no version line") : ucx.failure()));
  }

  const auto fi = run({"fi_info"}, node);
  if (fi.ok()) {
    std::set<std::string> endpoints;
    std::string provider;
    for (const auto& raw : lines_of(fi.stdout_text)) {
      const std::string line = trim(raw);
      if (starts_with(line, "provider:"))
        provider = trim(line.substr(9));
      else if (starts_with(line, "domain:") && !provider.empty())
        endpoints.insert(provider + "/" + trim(line.substr(7)));
    }
    b.set("network.libfabric", std::vector<std::string>(endpoints.begin(), endpoints.end()));
  } else {
    b.unknown("network.libfabric", "fi_info: " + fi.failure());
  }

  // IP interfaces that are up (TCP is the inter-node transport when there is no fabric):
  // name -> {mtu, link}. Addresses differ from node to node and are left out.
  const auto links = run({"ip", "-o", "link", "show"}, node);
  if (links.ok()) {
    b.set("network.interfaces", parse_ip_links(links.stdout_text));
  } else {
    b.unknown("network.interfaces", "ip -o link show: " + links.failure());
  }
}

// ---- Diff ----------------------------------------------------------------------------------

bool is_unknown(const json& v) { return v.is_string() && v.get<std::string>() == kUnknown; }

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

std::string show(const json& v) {
  if (v.is_null()) return "(absent)";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

}  // namespace

// ---- Runners -------------------------------------------------------------------------------

std::string CommandOutput::failure() const {
  if (!found) return error.empty() ? "not found" : error;
  if (!error.empty()) return error;
  const auto lines = lines_of(stderr_text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!trim(*it).empty()) return trim(*it) + " (exit " + std::to_string(exit_code) + ")";
  return "exit status " + std::to_string(exit_code);
}

namespace {
CommandOutput from_process(const ProcessResult& r, const std::string& program, double timeout_s) {
  CommandOutput out;
  out.stdout_text = r.stdout_text;
  out.stderr_text = r.stderr_text;
  out.exit_code = r.status_code();
  if (!r.spawn_error.empty()) {
    out.found = false;
    out.error = program + ": not found (" + r.spawn_error + ")";
  } else if (r.timed_out) {
    out.error = "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s";
  }
  return out;
}

ProcessOptions command_options(double timeout_s) {
  ProcessOptions o;
  o.timeout_s = timeout_s;
  o.max_output_bytes = 4 << 20;
  // osu_bcast --version initialises MPI as a singleton; root needs these to be allowed.
  o.env = {
      {"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}, {"LC_ALL", "C"}};
  return o;
}
}  // namespace

CommandRunner local_command_runner(double timeout_s) {
  return [timeout_s](const std::vector<std::string>& argv, const std::string&) {
    if (argv.empty()) return CommandOutput{false, -1, "", "", "empty command"};
    if (argv[0].find('/') == std::string::npos && !find_in_path(argv[0]))
      return CommandOutput{false, 127, "", "", argv[0] + ": not found"};
    return from_process(run_process(argv, command_options(timeout_s)), argv[0], timeout_s);
  };
}

CommandRunner srun_command_runner(const std::string& partition, double timeout_s) {
  auto local = local_command_runner(timeout_s);
  return
      [partition, timeout_s, local](const std::vector<std::string>& argv, const std::string& node) {
        if (node.empty()) return local(argv, node);
        std::vector<std::string> full = {"srun", "-N1", "-n1", "-w", node, "--quiet"};
        if (!partition.empty()) full.insert(full.end(), {"-p", partition});
        full.push_back("--");
        full.insert(full.end(), argv.begin(), argv.end());
        auto out = from_process(run_process(full, command_options(timeout_s)), "srun", timeout_s);
        // srun reports a missing program as exit 2 with "execve(): ...: No such file".
        if (out.exit_code != 0 && out.stderr_text.find("No such file") != std::string::npos)
          out.found = false, out.error = argv[0] + ": not found on " + node;
        return out;
      };
}

CommandRunner recorded_command_runner(const std::vector<fs::path>& folders) {
  struct Entry {
    std::vector<std::string> argv;
    std::string node;
    bool any_node = true;
    CommandOutput output;
  };
  std::vector<Entry> entries;  // overlay folders first
  for (const auto& folder : folders) {
    const auto manifest = json::parse(read_text(folder / "manifest.json"), nullptr, false);
    if (manifest.is_discarded() || !manifest.contains("commands") ||
        !manifest["commands"].is_array())
      throw std::runtime_error((folder / "manifest.json").string() + ": not a command manifest");
    for (const auto& c : manifest["commands"]) {
      Entry e;
      e.argv = c.at("argv").get<std::vector<std::string>>();
      if (c.contains("node")) e.node = c["node"].get<std::string>(), e.any_node = false;
      e.output.exit_code = c.value("exit_code", 0);
      if (c.value("missing", false)) {
        e.output.found = false;
        e.output.exit_code = 127;
        e.output.error = e.argv.at(0) + ": not found";
      }
      if (c.contains("stdout"))
        e.output.stdout_text = read_text(folder / c["stdout"].get<std::string>());
      if (c.contains("stderr"))
        e.output.stderr_text = read_text(folder / c["stderr"].get<std::string>());
      entries.push_back(std::move(e));
    }
  }
  return [entries](const std::vector<std::string>& argv, const std::string& node) {
    for (const auto& e : entries) {
      if (e.argv.size() != argv.size() || argv.empty()) continue;
      const bool by_name = e.argv[0].find('/') == std::string::npos;
      const std::string program = by_name ? fs::path(argv[0]).filename().string() : argv[0];
      if (program != e.argv[0]) continue;
      if (!std::equal(e.argv.begin() + 1, e.argv.end(), argv.begin() + 1)) continue;
      if (!e.any_node && e.node != node) continue;
      return e.output;
    }
    return CommandOutput{false, 127, "", "",
                         argv.empty() ? "empty command" : argv[0] + ": not found"};
  };
}

// ---- Collection ----------------------------------------------------------------------------

json collect_fingerprint(const CommandRunner& run, const FingerprintOptions& options) {
  Builder b;
  b.doc["schema"] = kSchema;
  b.doc["collected_at"] = options.collected_at > 0 ? options.collected_at : unix_time_now();
  const auto host = run({"uname", "-n"}, "");
  b.doc["collected_on"] = host.ok() ? trim(host.stdout_text) : std::string(kUnknown);
  b.doc["unknown"] = json::object();
  collect_open_mpi(b, run, options);
  collect_osu(b, run, options);
  bool slurm = false;
  if (options.scheduler != "none") slurm = collect_slurm(b, run, options);
  if (!slurm) collect_this_machine(b, run);
  // The network of the first node type's sampled node (where the benchmarks run).
  std::string node;
  if (b.doc.contains("node_types") && b.doc["node_types"].is_object() &&
      !b.doc["node_types"].empty())
    node = b.doc["node_types"].begin()->value("sampled_node", "");
  collect_network(b, run, node);
  b.doc["hash"] = fingerprint_hash(b.doc);
  return b.doc;
}

json model_fingerprint(const BackendInfo& info) {
  json fp = {{"schema", kSchema},
             {"collected_at", unix_time_now()},
             {"collected_on", info.host},
             {"unknown", json::object()}};
  if (auto v = parse_ompi_version(info.ompi_version))
    fp["open_mpi"]["version"] = v->to_string();
  else
    fp["open_mpi"]["version"] = kUnknown,
    fp["unknown"]["open_mpi.version"] = "the backend does not say";
  json model = {{"backend", info.backend}, {"benchmark", info.benchmark}};
  // What shapes the landscape; not the noise seed or how the clock is kept.
  static const std::set<std::string> kNotModel = {"seed", "noise", "virtual_clock",
                                                  "launch_overhead_s", "cost_model"};
  if (info.extra.is_object())
    for (const auto& [k, v] : info.extra.items())
      if (!kNotModel.count(k)) model[k] = v;
  fp["model"] = model;
  fp["hash"] = fingerprint_hash(fp);
  return fp;
}

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
  const std::string& top = parts[0];
  if (top == "open_mpi") return parts.size() == 1 || parts[1] == "version";
  if (top == "coll_tuned" || top == "coll_components" || top == "coll_selection" ||
      top == "tuned_preempted_by" || top == "network" || top == "model")
    return true;
  if (top == "cluster") return parts.size() >= 2 && parts[1] == "node_count";
  if (top == "node_types") {
    if (parts.size() <= 2) return true;  // a node type appeared or disappeared
    static const std::set<std::string> kFields = {"nodes",     "cpus",     "sockets_cores_threads",
                                                  "cpu_model", "features", "topology"};
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

std::string format_changes(const std::vector<FingerprintChange>& changes) {
  std::string out;
  for (const auto& c : changes) {
    out += c.field + ": " + show(c.before) + " -> " + show(c.after);
    if (!c.relevant) out += " (not relevant)";
    out += "\n";
  }
  return out;
}

json changes_json(const std::vector<FingerprintChange>& changes) {
  json out = json::array();
  for (const auto& c : changes)
    out.push_back(
        {{"field", c.field}, {"before", c.before}, {"after", c.after}, {"relevant", c.relevant}});
  return out;
}

std::string format_fingerprint(const json& fp) {
  auto get = [&](const json::json_pointer& p) -> std::string {
    if (!fp.contains(p)) return kUnknown;
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
    std::string algs = kUnknown;
    if (fp.contains("coll_tuned") && fp["coll_tuned"].is_object() &&
        fp["coll_tuned"].contains("algorithms")) {
      algs.clear();
      for (const auto& [coll, ids] : fp["coll_tuned"]["algorithms"].items())
        algs += (algs.empty() ? "" : " ") + coll + ":" + std::to_string(ids.size());
    }
    out << "coll_tuned:     " << algs << "\n";
    std::string comps = kUnknown;
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
          out << ", " << (n.contains("cpus") ? show(n["cpus"]) : kUnknown) << " CPUs";
          out << ", " << (n.contains("cpu_model") ? show(n["cpu_model"]) : kUnknown);
          out << ", kernel " << (n.contains("kernel") ? show(n["kernel"]) : kUnknown);
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
                  : kUnknown)
          << ", UCX "
          << (n.contains("ucx") && n["ucx"].is_object()
                  ? show(n["ucx"].value("version", json(kUnknown)))
                  : kUnknown)
          << ", libfabric "
          << (n.contains("libfabric") && n["libfabric"].is_array()
                  ? std::to_string(n["libfabric"].size()) + " endpoint(s)"
                  : kUnknown);
      if (n.contains("interfaces") && n["interfaces"].is_object()) {
        out << ", interfaces";
        for (const auto& [name, i] : n["interfaces"].items())
          out << " " << name << " (mtu "
              << (i.is_object() ? show(i.value("mtu", json(kUnknown))) : kUnknown) << ")";
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
