#include "rules/version_tables.h"

#include <string>
#include <vector>

namespace colltune {
namespace {

// Builds a table through the public ompi_info parser: the enumerator lines of the collectives
// that differ from 4.1, in ompi_info's parsable format.
AlgorithmTable table_with(const std::vector<std::pair<Collective, std::vector<std::string>>>& lists,
                          const OmpiVersion& version) {
  std::string text = "mca:coll:tuned:version:\"component:" + version.to_string() + "\"\n";
  for (const auto& [coll, names] : lists) {
    for (std::size_t id = 0; id < names.size(); ++id)
      text += "mca:coll:tuned:param:coll_tuned_" + std::string(name(coll)) +
              "_algorithm:enumerator:value:" + std::to_string(id) + ":" + names[id] + "\n";
  }
  return AlgorithmTable::from_ompi_info(text);
}

std::vector<std::string> names_of(Collective coll) {
  std::vector<std::string> names{"ignore"};
  for (const auto& a : AlgorithmTable::builtin_4_1().at(coll).algorithms) names.push_back(a.name);
  return names;
}

}  // namespace

const AlgorithmTable& algorithm_table_5_0() {
  static const AlgorithmTable table = [] {
    auto allgather = names_of(Collective::allgather);
    allgather.push_back("sparbit");
    auto allgatherv = names_of(Collective::allgatherv);
    allgatherv.push_back("sparbit");
    return table_with({{Collective::allgather, allgather}, {Collective::allgatherv, allgatherv}},
                      OmpiVersion{5, 0, 0});
  }();
  return table;
}

const AlgorithmTable& algorithm_table_main() {
  static const AlgorithmTable table = [] {
    auto allgather = names_of(Collective::allgather);
    allgather.push_back("sparbit");
    allgather.push_back("direct-messaging");
    auto allgatherv = names_of(Collective::allgatherv);
    allgatherv.push_back("sparbit");
    auto allreduce = names_of(Collective::allreduce);
    allreduce.push_back("allgather_reduce");
    auto reduce = names_of(Collective::reduce);
    reduce.push_back("knomial");
    return table_with({{Collective::allgather, allgather},
                       {Collective::allgatherv, allgatherv},
                       {Collective::allreduce, allreduce},
                       {Collective::reduce, reduce}},
                      OmpiVersion{6, 0, 0});
  }();
  return table;
}

const AlgorithmTable& algorithm_table_for(const OmpiVersion& version) {
  if (version.major >= 6) return algorithm_table_main();
  if (version.major == 5) return algorithm_table_5_0();
  return AlgorithmTable::builtin_4_1();
}

}  // namespace colltune
