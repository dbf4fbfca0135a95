#include <stdexcept>

#include "optimizer/cluster_bayes_strategy.h"
#include "optimizer/cluster_nearest.h"
#include "optimizer/cluster_strategy.h"

namespace colltune {

std::vector<std::string> cluster_strategy_names() { return {"bo-cluster", "nearest"}; }

std::unique_ptr<ClusterStrategy> make_cluster_strategy(const std::string& name,
                                                       Collective collective,
                                                       const AlgorithmTable& table,
                                                       const ClusterStrategyOptions& options) {
  if (name == "bo-cluster")
    return std::make_unique<ClusterBayesStrategy>(collective, table, options);
  if (name == "nearest")
    return std::make_unique<NearestClusterStrategy>(collective, table, options);
  throw std::invalid_argument("unknown cluster strategy '" + name +
                              "' (known: bo-cluster, nearest)");
}

}  // namespace colltune
