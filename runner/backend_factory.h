// Builds a backend by name from its JSON settings: the one place that knows every backend, used
// by the CLI and the daemon. Settings per backend:
//   local:  {"osu_dir", "mpirun", "ompi_info", "mpirun_args": [..], "cores", "max_ranks_per_core"}
//   slurm:  see runner/slurm_backend.h       sim: {"profile", "seed", "max_memory_mb", ...} replay:
//   {"dataset", "seed"}
// Any backend also takes "faults": {FaultInjectionOptions fields} (runner/fault_injection.h).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/backend.h"

namespace colltune {

// Throws std::invalid_argument for an unknown backend or bad settings.
std::unique_ptr<Backend> make_backend(const std::string& name, const nlohmann::json& settings);

// Backends this build knows.
std::vector<std::string> backend_names();

}  // namespace colltune
