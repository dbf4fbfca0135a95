// JSON mapping of Evaluation (optimizer/strategy.h): the one home of the strategies' saved runs.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "optimizer/strategy.h"

namespace colltune {

void to_json(nlohmann::json& j, const Evaluation& e) {
  nlohmann::json latencies = nlohmann::json::array();
  for (double v : e.latency_us)
    latencies.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
  j = {{"config", e.config},
       {"msg_sizes", e.msg_sizes},
       {"latency_us", latencies},
       {"failed", e.failed},
       {"seconds", e.seconds}};
}

void from_json(const nlohmann::json& j, Evaluation& e) {
  e = Evaluation{};
  e.config = j.at("config").get<TuningConfig>();
  e.msg_sizes = j.at("msg_sizes").get<std::vector<std::int64_t>>();
  for (const auto& v : j.at("latency_us"))
    e.latency_us.push_back(v.is_number() ? v.get<double>()
                                         : std::numeric_limits<double>::quiet_NaN());
  e.failed = j.value("failed", false);
  e.seconds = j.value("seconds", 0.0);  // absent in states written before it existed
  if (e.msg_sizes.size() != e.latency_us.size())
    throw std::invalid_argument("malformed evaluation: " + std::to_string(e.msg_sizes.size()) +
                                " message sizes but " + std::to_string(e.latency_us.size()) +
                                " latencies");
}

}  // namespace colltune
