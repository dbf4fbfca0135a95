#include "runner/backend_factory.h"

#include <algorithm>
#include <stdexcept>

#include "core/json_number.h"
#include "runner/fault_injection.h"
#include "runner/local_backend.h"
#include "runner/replay_backend.h"
#include "runner/sim_backend.h"
#include "runner/slurm_backend.h"

namespace colltune {

std::vector<std::string> backend_names() { return {"local", "slurm", "sim", "replay"}; }

std::unique_ptr<Backend> make_backend(const std::string& name, const nlohmann::json& settings) {
  if (!settings.is_object() && !settings.is_null())
    throw std::invalid_argument("backend settings must be an object");
  const nlohmann::json s = settings.is_null() ? nlohmann::json::object() : settings;
  // Any backend can be wrapped in fault injection (runner/fault_injection.h) for the fault
  // suite: "faults": {"seed", "failure_rate", "hang_rate", "crash_rate", "garble_rate",
  // "slow_node_rate", "slow_factor", "crash_aborts_batch"}.
  if (s.contains("faults")) {
    const auto& f = s.at("faults");
    if (!f.is_object()) throw std::invalid_argument(name + " backend: faults must be an object");
    FaultInjectionOptions o;
    try {
      for (const auto& [key, value] : f.items()) {
        if (key == "seed")
          o.seed = whole_number<std::uint64_t>(value, name + " backend: faults.seed");
        else if (key == "failure_rate")
          o.failure_rate = value.get<double>();
        else if (key == "hang_rate")
          o.hang_rate = value.get<double>();
        else if (key == "crash_rate")
          o.crash_rate = value.get<double>();
        else if (key == "garble_rate")
          o.garble_rate = value.get<double>();
        else if (key == "slow_node_rate")
          o.slow_node_rate = value.get<double>();
        else if (key == "slow_factor")
          o.slow_factor = value.get<double>();
        else if (key == "crash_aborts_batch")
          o.crash_aborts_batch = value.get<bool>();
        else
          throw std::invalid_argument(name + " backend: unknown faults setting '" + key + "'");
      }
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(name + " backend faults: " + e.what());
    }
    nlohmann::json inner = s;
    inner.erase("faults");
    return std::make_unique<FaultInjectingBackend>(make_backend(name, inner), o);
  }
  // Deterministic backends (sim: a cost model; replay: a recorded landscape). Unknown settings
  // are rejected so that a typo does not silently fall back to a default.
  auto only = [&](std::initializer_list<const char*> known) {
    for (const auto& item : s.items()) {  // no structured binding: clang 14 cannot capture one
      const std::string& key = item.key();
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; }))
        throw std::invalid_argument(name + " backend: unknown setting '" + key + "'");
    }
  };
  try {
    if (name == "local") {
      only({"osu_dir", "mpirun", "ompi_info", "mpirun_args", "cores", "max_ranks_per_core"});
      LocalBackendOptions o;
      if (s.contains("osu_dir")) o.osu_dir = s.at("osu_dir").get<std::string>();
      if (s.contains("mpirun")) o.mpirun = s.at("mpirun").get<std::string>();
      if (s.contains("ompi_info")) o.ompi_info = s.at("ompi_info").get<std::string>();
      if (s.contains("mpirun_args"))
        o.mpirun_extra_args = s.at("mpirun_args").get<std::vector<std::string>>();
      if (s.contains("cores")) o.cores = whole_number<int>(s.at("cores"), "local backend: cores");
      if (s.contains("max_ranks_per_core"))
        o.max_ranks_per_core =
            whole_number<int>(s.at("max_ranks_per_core"), "local backend: max_ranks_per_core");
      return std::make_unique<LocalBackend>(std::move(o));
    }
    if (name == "slurm") return std::make_unique<SlurmBackend>(slurm_backend_options_from_json(s));
    if (name == "sim") {
      only({"profile", "profile_dirs", "seed", "noise", "virtual_clock", "pace", "max_memory_mb"});
      SimBackendOptions o;
      if (s.contains("profile")) o.profile = s.at("profile").get<std::string>();
      if (s.contains("profile_dirs"))
        for (const auto& d : s.at("profile_dirs").get<std::vector<std::string>>())
          o.profile_dirs.push_back(d);
      if (s.contains("seed"))
        o.seed = whole_number<std::uint64_t>(s.at("seed"), "sim backend: seed");
      if (s.contains("noise")) {
        const auto& n = s.at("noise");
        if (n.is_string() && n.get<std::string>() == "none")
          o.noise = sim::NoiseModel::none();
        else if (n.is_object())
          o.noise = sim::NoiseModel::from_json(n);
        else
          throw std::invalid_argument("sim backend: noise must be \"none\" or an object");
      }
      if (s.contains("virtual_clock")) o.virtual_clock = s.at("virtual_clock").get<bool>();
      if (s.contains("pace")) o.pace = s.at("pace").get<double>();
      if (o.pace < 0 || o.pace > 100)
        throw std::invalid_argument("sim backend: pace must be in [0, 100]");
      if (s.contains("max_memory_mb")) {
        if (!s.at("max_memory_mb").is_number())
          throw std::invalid_argument("sim backend: max_memory_mb must be a number");
        o.max_memory_mb = s.at("max_memory_mb").get<double>();
        if (!(o.max_memory_mb >= 1 && o.max_memory_mb <= 1e7))
          throw std::invalid_argument("sim backend: max_memory_mb must be in [1, 1e7]");
      }
      return std::make_unique<SimBackend>(std::move(o));
    }
    if (name == "replay") {
      only({"dataset", "where", "seed", "launch_overhead_s", "ompi_version"});
      if (!s.contains("dataset"))
        throw std::invalid_argument("replay backend: setting 'dataset' (CSV file) required");
      ReplayDataset::Filter where;
      if (s.contains("where")) where = s.at("where").get<ReplayDataset::Filter>();
      ReplayBackendOptions o;
      if (s.contains("seed"))
        o.seed = whole_number<std::uint64_t>(s.at("seed"), "replay backend: seed");
      if (s.contains("launch_overhead_s"))
        o.launch_overhead_s = s.at("launch_overhead_s").get<double>();
      if (s.contains("ompi_version")) o.ompi_version = s.at("ompi_version").get<std::string>();
      return std::make_unique<ReplayBackend>(
          ReplayDataset::load_csv(s.at("dataset").get<std::string>(), where), std::move(o));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(name + " backend settings: " + e.what());
  }
  throw std::invalid_argument("unknown backend '" + name + "'");
}

}  // namespace colltune
