#include "core/collective.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace colltune {
namespace {

constexpr std::array<std::pair<Collective, std::string_view>, 12> kNames{{
    {Collective::allgather, "allgather"},
    {Collective::allgatherv, "allgatherv"},
    {Collective::allreduce, "allreduce"},
    {Collective::alltoall, "alltoall"},
    {Collective::alltoallv, "alltoallv"},
    {Collective::barrier, "barrier"},
    {Collective::bcast, "bcast"},
    {Collective::gather, "gather"},
    {Collective::reduce, "reduce"},
    {Collective::reduce_scatter, "reduce_scatter"},
    {Collective::reduce_scatter_block, "reduce_scatter_block"},
    {Collective::scatter, "scatter"},
}};

}  // namespace

std::string_view name(Collective c) {
  for (const auto& [coll, text] : kNames)
    if (coll == c) return text;
  return "unknown";
}

std::optional<Collective> parse_collective(std::string_view text) {
  for (const auto& [coll, name_text] : kNames)
    if (name_text == text) return coll;
  return std::nullopt;
}

std::optional<Collective> collective_from_ompi_id(int id) {
  for (const auto& [coll, text] : kNames)
    if (ompi_id(coll) == id) return coll;
  return std::nullopt;
}

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> all = [] {
    std::vector<Collective> v;
    for (const auto& entry : kNames) v.push_back(entry.first);
    return v;
  }();
  return all;
}

std::vector<Collective> parse_collective_list(std::string_view text) {
  std::vector<Collective> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      auto c = parse_collective(item);
      if (!c) throw std::invalid_argument("unknown collective '" + std::string(item) + "'");
      out.push_back(*c);
    }
    start = comma + 1;
  }
  if (out.empty()) throw std::invalid_argument("empty collective list");
  return out;
}

bool has_message_size(Collective c) { return c != Collective::barrier; }

bool is_reduction(Collective c) {
  return c == Collective::allreduce || c == Collective::reduce || c == Collective::reduce_scatter;
}

std::int64_t rules_key_for_osu_size(Collective c, std::int64_t osu_size, int comm_size) {
  switch (c) {
    case Collective::allgather:
    case Collective::alltoall:
    case Collective::gather:
    case Collective::scatter:
    case Collective::reduce_scatter_block:
      return osu_size * comm_size;
    case Collective::barrier:
    case Collective::alltoallv:
      return 0;
    default:
      return osu_size;
  }
}

std::int64_t osu_size_for_rules_key(Collective c, std::int64_t key, int comm_size) {
  switch (c) {
    case Collective::allgather:
    case Collective::alltoall:
    case Collective::gather:
    case Collective::scatter:
    case Collective::reduce_scatter_block:
      return comm_size > 0 ? key / comm_size : key;
    case Collective::barrier:
    case Collective::alltoallv:
      return 0;
    default:
      return key;
  }
}

}  // namespace colltune
