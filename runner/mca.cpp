#include "runner/mca.h"

namespace colltune {

std::map<std::string, std::string> base_mca() {
  return {{"coll", "^hcoll"}, {"coll_tuned_use_dynamic_rules", "1"}};
}

std::map<std::string, std::string> mca_for_config(Collective collective,
                                                  const TuningConfig& config) {
  auto mca = base_mca();
  if (config.is_default()) return mca;
  const std::string prefix = "coll_tuned_" + std::string(name(collective)) + "_algorithm";
  mca[prefix] = std::to_string(config.algorithm);
  // Forced mode reads these for every algorithm; set them explicitly so no stale value from
  // the user's environment leaks in. 0 = unsegmented; chain fan-out only matters for chain.
  if (collective != Collective::barrier && collective != Collective::alltoallv)
    mca[prefix + "_segmentsize"] = std::to_string(config.segsize);
  if (config.fanout > 0 && collective != Collective::reduce_scatter_block)
    mca[prefix + "_chain_fanout"] = std::to_string(config.fanout);
  return mca;
}

std::map<std::string, std::string> mca_for_rules_file(const std::string& path) {
  auto mca = base_mca();
  mca["coll_tuned_dynamic_rules_filename"] = path;
  return mca;
}

}  // namespace colltune
