#include "core/algorithm_table.h"

#include <algorithm>
#include <stdexcept>

#include "core/text.h"

namespace colltune {

const AlgorithmInfo* CollectiveAlgorithms::find(int id) const {
  for (const auto& a : algorithms)
    if (a.id == id) return &a;
  return nullptr;
}

const AlgorithmInfo* CollectiveAlgorithms::find(std::string_view algorithm_name) const {
  for (const auto& a : algorithms)
    if (a.name == algorithm_name) return &a;
  return nullptr;
}

namespace {

struct Flags {
  bool seg = false, fan = false, two = false, comm = false;
};

AlgorithmInfo alg(int id, std::string name, Flags f = {}) {
  return AlgorithmInfo{id, std::move(name), f.seg, f.fan, f.two, f.comm};
}

}  // namespace

const AlgorithmTable& AlgorithmTable::builtin_4_1() {
  static const AlgorithmTable table = [] {
    AlgorithmTable t;
    auto& e = t.entries_;
    const Flags seg{.seg = true};
    const Flags seg_fan{.seg = true, .fan = true};
    const Flags two{.two = true};
    const Flags comm{.comm = true};
    e[Collective::bcast] = {
        10,
        {alg(1, "basic_linear"), alg(2, "chain", seg_fan), alg(3, "pipeline", seg),
         alg(4, "split_binary_tree", seg), alg(5, "binary_tree", seg), alg(6, "binomial", seg),
         alg(7, "knomial", seg), alg(8, "scatter_allgather"), alg(9, "scatter_allgather_ring")}};
    e[Collective::reduce] = {
        8,
        {alg(1, "linear"), alg(2, "chain", {.seg = true, .fan = true, .comm = true}),
         alg(3, "pipeline", {.seg = true, .comm = true}),
         alg(4, "binary", {.seg = true, .comm = true}),
         alg(5, "binomial", {.seg = true, .comm = true}), alg(6, "in-order_binary", seg),
         alg(7, "rabenseifner", comm)}};
    e[Collective::allreduce] = {
        7,
        {alg(1, "basic_linear"), alg(2, "nonoverlapping"), alg(3, "recursive_doubling"),
         alg(4, "ring", comm), alg(5, "segmented_ring", {.seg = true, .comm = true}),
         alg(6, "rabenseifner")}};
    e[Collective::gather] = {
        4, {alg(1, "basic_linear"), alg(2, "binomial"), alg(3, "linear_sync", seg)}};
    e[Collective::scatter] = {4, {alg(1, "basic_linear"), alg(2, "binomial"), alg(3, "linear_nb")}};
    e[Collective::allgather] = {7,
                                {alg(1, "linear"), alg(2, "bruck"), alg(3, "recursive_doubling"),
                                 alg(4, "ring"), alg(5, "neighbor"), alg(6, "two_proc", two)}};
    e[Collective::allgatherv] = {6,
                                 {alg(1, "default"), alg(2, "bruck"), alg(3, "ring"),
                                  alg(4, "neighbor"), alg(5, "two_proc", two)}};
    e[Collective::alltoall] = {6,
                               {alg(1, "linear"), alg(2, "pairwise"), alg(3, "modified_bruck"),
                                alg(4, "linear_sync"), alg(5, "two_proc", two)}};
    e[Collective::alltoallv] = {3, {alg(1, "basic_linear"), alg(2, "pairwise")}};
    e[Collective::barrier] = {
        7,
        {alg(1, "linear"), alg(2, "double_ring"), alg(3, "recursive_doubling"), alg(4, "bruck"),
         alg(5, "two_proc", two), alg(6, "tree")}};
    e[Collective::reduce_scatter] = {5,
                                     {alg(1, "non-overlapping"), alg(2, "recursive_halving", comm),
                                      alg(3, "ring", comm), alg(4, "butterfly")}};
    e[Collective::reduce_scatter_block] = {
        5,
        {alg(1, "basic_linear"), alg(2, "recursive_doubling"), alg(3, "recursive_halving", comm),
         alg(4, "butterfly")}};
    t.version = OmpiVersion{4, 1, 4};
    return t;
  }();
  return table;
}

AlgorithmTable AlgorithmTable::from_ompi_info(std::string_view text) {
  constexpr int kMaxAlgorithmId = 255;
  const AlgorithmTable& builtin = builtin_4_1();
  std::map<Collective, std::map<int, std::string>> found;
  std::optional<OmpiVersion> version;

  for (const std::string_view line : lines_of(text)) {
    // mca:coll:tuned:version:"component:4.1.4"  -> the component's (= Open MPI's) version
    if (line.rfind("mca:coll:tuned:version:\"component:", 0) == 0) {
      auto colon = line.rfind(':');
      version = parse_ompi_version(line.substr(colon + 1));
      continue;
    }
    static constexpr std::string_view kPrefix = "mca:coll:tuned:param:coll_tuned_";
    if (line.rfind(kPrefix, 0) != 0) continue;
    std::string_view rest = line.substr(kPrefix.size());
    static constexpr std::string_view kMarker = "_algorithm:enumerator:value:";
    auto marker = rest.find(kMarker);
    if (marker == std::string_view::npos) continue;
    auto coll = parse_collective(rest.substr(0, marker));
    if (!coll) continue;
    std::string_view tail = rest.substr(marker + kMarker.size());
    auto colon = tail.find(':');
    if (colon == std::string_view::npos) continue;
    int id = 0;
    try {
      id = std::stoi(std::string(tail.substr(0, colon)));
    } catch (const std::exception&) {
      continue;
    }
    // Open MPI's enumerator values are small non-negative ids; anything else is not one of its
    // lines (and INT_MAX would overflow algorithm_count below).
    if (id < 0 || id > kMaxAlgorithmId) continue;
    found[*coll][id] = std::string(tail.substr(colon + 1));
  }
  if (found.empty())
    throw std::runtime_error("ompi_info output lists no coll_tuned algorithm enumerators");

  AlgorithmTable t = builtin;
  t.version = version;
  for (const auto& [coll, ids] : found) {
    CollectiveAlgorithms entry;
    int max_id = 0;
    for (const auto& [id, alg_name] : ids) {
      max_id = std::max(max_id, id);
      if (id == 0) continue;
      AlgorithmInfo info{id, alg_name};
      if (const auto* known = builtin.find(coll)) {
        if (const auto* k = known->find(alg_name)) {
          info.uses_segsize = k->uses_segsize;
          info.uses_fanout = k->uses_fanout;
          info.only_two_procs = k->only_two_procs;
          info.commutative_only = k->commutative_only;
        }
      }
      if (alg_name.find("two_proc") != std::string::npos) info.only_two_procs = true;
      entry.algorithms.push_back(std::move(info));
    }
    entry.algorithm_count = max_id + 1;
    t.entries_[coll] = std::move(entry);
  }
  return t;
}

const CollectiveAlgorithms* AlgorithmTable::find(Collective c) const {
  auto it = entries_.find(c);
  return it == entries_.end() ? nullptr : &it->second;
}

const CollectiveAlgorithms& AlgorithmTable::at(Collective c) const {
  const auto* entry = find(c);
  if (!entry) throw std::out_of_range("no algorithm table for collective " + std::string(name(c)));
  return *entry;
}

std::vector<AlgorithmInfo> AlgorithmTable::usable(Collective c, int comm_size) const {
  std::vector<AlgorithmInfo> out;
  for (const auto& a : at(c).algorithms)
    if (!a.only_two_procs || comm_size == 2) out.push_back(a);
  return out;
}

std::string AlgorithmTable::algorithm_name(Collective c, int id) const {
  if (id == 0) return "default";
  if (const auto* entry = find(c))
    if (const auto* a = entry->find(id)) return a->name;
  return "alg" + std::to_string(id);
}

}  // namespace colltune
