#include "core/tuning_config.h"

#include <nlohmann/json.hpp>

namespace colltune {

std::string to_string(const TuningConfig& config) {
  if (config.is_default()) return "default";
  return "alg=" + std::to_string(config.algorithm) + " seg=" + std::to_string(config.segsize) +
         " fanout=" + std::to_string(config.fanout);
}

void to_json(nlohmann::json& j, const TuningConfig& config) {
  j = nlohmann::json{{"algorithm", config.algorithm},
                     {"segsize", config.segsize},
                     {"fanout", config.fanout}};
}

void from_json(const nlohmann::json& j, TuningConfig& config) {
  config.algorithm = j.at("algorithm").get<int>();
  config.segsize = j.value("segsize", 0);
  config.fanout = j.value("fanout", 0);
}

}  // namespace colltune
