// Collecting a fingerprint: the probes of Open MPI, the OSU benchmark, the nodes (Slurm or this
// machine) and the network, through a CommandRunner (campaign/fingerprint_commands.cpp).
#include "campaign/fingerprint.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

#include "campaign/store.h"
#include "core/ompi_version.h"
#include "core/sha256.h"
#include "core/text.h"

namespace colltune {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kSchema = 1;

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
    set(path, kFingerprintUnknown);
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
    if (!line.starts_with("mca:coll:")) continue;
    const auto f = split(line, ':');
    if (f.size() < 7 || f[3] != "param") continue;
    const std::string component(f[2]);
    const std::string name(f[4]);
    if (f[5] == "value") {
      // The value may itself hold ':' (paths): everything after the 6th field.
      std::size_t pos = 0;
      for (int i = 0; i < 6; ++i) pos = line.find(':', pos) + 1;
      out.values[component][name] = line.substr(pos);
    } else if (f[5] == "enumerator" && f.size() >= 9 && f[6] == "value" && component == "tuned") {
      const std::string prefix = "coll_tuned_", suffix = "_algorithm";
      if (!name.starts_with(prefix) || name.size() <= prefix.size() + suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const std::string coll =
          name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
      if (f[7] == "0") continue;  // "ignore"
      out.algorithms[coll][std::string(f[7])] = f[8];
    }
  }
  return out;
}

bool truthy(const std::string& v) {
  const std::string s = trim_copy(v);
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
    if (auto it = base->second.find("coll"); it != base->second.end())
      selection = trim_copy(it->second);
  std::set<std::string> listed;
  const bool exclude = !selection.empty() && selection.front() == '^';
  const std::string list = exclude ? selection.substr(1) : selection;
  for (const auto& name : split(list, ','))
    if (!trim_copy(name).empty()) listed.insert(trim_copy(name));
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
    if (line.starts_with("# OSU") && pos != std::string::npos)
      version = trim_copy(line.substr(pos + 2));
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
    NodeLine n{trim_copy(f[0]), trim_copy(f[2]), trim_copy(f[3]), trim_copy(f[4]), trim_copy(f[5])};
    std::string part = trim_copy(f[1]);
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
    std::string line = trim_copy(raw);
    std::size_t start = 0;
    while (start <= line.size()) {
      auto end = line.find(" + ", start);
      const std::string token =
          trim_copy(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
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
  if (uname.ok() && !trim_copy(uname.stdout_text).empty())
    b.set(prefix + ".kernel", trim_copy(uname.stdout_text));
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
  const std::string cpus = f.count("CPU(s)") ? f["CPU(s)"] : kFingerprintUnknown;
  const std::string sct =
      (f.count("Socket(s)") && f.count("Core(s) per socket") && f.count("Thread(s) per core"))
          ? f["Socket(s)"] + ":" + f["Core(s) per socket"] + ":" + f["Thread(s) per core"]
          : kFingerprintUnknown;
  const std::string type = type_name(cpus, sct, "");
  const std::string prefix = "node_types." + type;
  b.set("cluster.nodes", json{{"localhost", type}});
  b.set(prefix + ".nodes", 1);
  if (cpus != kFingerprintUnknown)
    b.set(prefix + ".cpus", std::stoi(cpus));
  else
    b.unknown(prefix + ".cpus",
              "lscpu: " + (lscpu.ok() ? std::string("no CPU(s)") : lscpu.failure()));
  if (sct != kFingerprintUnknown)
    b.set(prefix + ".sockets_cores_threads", sct);
  else
    b.unknown(prefix + ".sockets_cores_threads", "lscpu: no socket/core/thread counts");
  const auto meminfo = run({"cat", "/proc/meminfo"}, "");
  bool memory = false;
  for (const auto& line : lines_of(meminfo.stdout_text))
    if (line.starts_with("MemTotal:")) {
      try {
        b.set(prefix + ".memory_mb", std::stoll(trim_copy(line.substr(9))) / 1024);
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
    std::string name(line.substr(first + 2, second - first - 2));
    if (auto at = name.find('@'); at != std::string::npos) name.resize(at);
    const auto flags_open = line.find('<', second), flags_close = line.find('>', second);
    if (flags_open == std::string::npos || flags_close == std::string::npos) continue;
    const std::string flags =
        "," + std::string(line.substr(flags_open + 1, flags_close - flags_open - 1)) + ",";
    if (flags.find(",LOOPBACK,") != std::string::npos || flags.find(",UP,") == std::string::npos)
      continue;
    json entry = json::object();
    std::istringstream words{std::string(line.substr(flags_close + 1))};
    std::string word;
    while (words >> word) {
      if (word == "mtu" && words >> word) {
        try {
          entry["mtu"] = std::stoi(word);
        } catch (const std::exception&) {
        }
      } else if (word.starts_with("link/")) {
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
      const std::string line = trim_copy(raw);
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = trim_copy(line.substr(0, colon)),
                        value = trim_copy(line.substr(colon + 1));
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
    if (line.starts_with("# Version ")) ucx_version = trim_copy(line.substr(10));
  if (ucx.ok() && !ucx_version.empty()) {
    b.set("network.ucx.version", ucx_version);
    const auto devices = run({"ucx_info", "-d"}, node);
    std::set<std::string> transports;
    std::string transport;
    for (const auto& raw : lines_of(devices.stdout_text)) {
      const std::string line = trim_copy(raw);
      if (line.starts_with("#")) {
        const std::string body = trim_copy(line.substr(1));
        if (body.starts_with("Transport:"))
          transport = trim_copy(body.substr(10));
        else if (body.starts_with("Device:") && !transport.empty())
          transports.insert(transport + "/" + trim_copy(body.substr(7)));
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
      const std::string line = trim_copy(raw);
      if (line.starts_with("provider:"))
        provider = trim_copy(line.substr(9));
      else if (line.starts_with("domain:") && !provider.empty())
        endpoints.insert(provider + "/" + trim_copy(line.substr(7)));
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

}  // namespace

// ---- Collection ----------------------------------------------------------------------------

json collect_fingerprint(const CommandRunner& run, const FingerprintOptions& options) {
  Builder b;
  b.doc["schema"] = kSchema;
  b.doc["collected_at"] = options.collected_at > 0 ? options.collected_at : unix_time_now();
  const auto host = run({"uname", "-n"}, "");
  b.doc["collected_on"] =
      host.ok() ? trim_copy(host.stdout_text) : std::string(kFingerprintUnknown);
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
    fp["open_mpi"]["version"] = kFingerprintUnknown,
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

}  // namespace colltune
