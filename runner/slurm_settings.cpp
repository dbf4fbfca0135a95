// The Slurm backend's settings: JSON (as the CLI, the daemon and stored campaigns give them)
// -> SlurmBackendOptions.
#include <filesystem>
#include <map>
#include <stdexcept>

#include "core/json_number.h"
#include "runner/slurm_backend.h"

namespace colltune {

namespace fs = std::filesystem;

std::string_view to_string(SlurmLauncher launcher) {
  return launcher == SlurmLauncher::srun ? "srun" : "mpirun";
}

std::optional<SlurmLauncher> parse_slurm_launcher(std::string_view text) {
  if (text == "srun") return SlurmLauncher::srun;
  if (text == "mpirun") return SlurmLauncher::mpirun;
  return std::nullopt;
}

SlurmBackendOptions slurm_backend_options_from_json(const nlohmann::json& settings) {
  SlurmBackendOptions o;
  if (settings.is_null()) return o;
  if (!settings.is_object())
    throw std::invalid_argument("slurm backend settings must be an object");
  try {
    // A folder for all the binaries first, so that "commands" can still override one of them.
    if (settings.contains("slurm_bin_dir")) {
      const fs::path dir = settings.at("slurm_bin_dir").get<std::string>();
      auto& c = o.commands;
      for (auto* command :
           {&c.sbatch, &c.squeue, &c.sacct, &c.scancel, &c.sinfo, &c.scontrol, &c.srun})
        *command = (dir / *command).string();
    }
    for (const auto& [key, value] : settings.items()) {
      if (key == "osu_dir")
        o.osu_dir = value.get<std::string>();
      else if (key == "launcher") {
        auto launcher = parse_slurm_launcher(value.get<std::string>());
        if (!launcher)
          throw std::invalid_argument("slurm backend: launcher must be srun or mpirun");
        o.launcher = *launcher;
      } else if (key == "srun_mpi")
        o.srun_mpi = value.get<std::string>();
      else if (key == "srun_step_wait_s")
        o.srun_step_wait_s = whole_number<int>(value, "slurm backend: srun_step_wait_s");
      else if (key == "mpirun")
        o.mpirun = value.get<std::string>();
      else if (key == "launcher_args")
        o.launcher_extra_args = value.get<std::vector<std::string>>();
      else if (key == "ompi_info")
        o.ompi_info = value.get<std::string>();
      else if (key == "partition")
        o.partition = value.get<std::string>();
      else if (key == "account")
        o.account = value.get<std::string>();
      else if (key == "qos")
        o.qos = value.get<std::string>();
      else if (key == "exclusive")
        o.exclusive = value.get<bool>();
      else if (key == "sbatch_args")
        o.sbatch_extra_args = value.get<std::vector<std::string>>();
      else if (key == "job_root")
        o.job_root = value.get<std::string>();
      else if (key == "keep_job_dirs")
        o.keep_job_dirs = value.get<bool>();
      else if (key == "script_template")
        o.script_template = value.get<std::string>();
      else if (key == "attempts")
        o.attempts = whole_number<int>(value, "slurm backend: attempts");
      else if (key == "kill_after_s")
        o.kill_after_s = whole_number<int>(value, "slurm backend: kill_after_s");
      else if (key == "yield") {
        const auto text = value.get<std::string>();
        if (text == "auto")
          o.yield = slurm::YieldPolicy::automatic;
        else if (text == "always")
          o.yield = slurm::YieldPolicy::always;
        else if (text == "never")
          o.yield = slurm::YieldPolicy::never;
        else
          throw std::invalid_argument("slurm backend: yield must be auto, always or never");
      } else if (key == "time_limit_minutes")
        o.time_limit_minutes = whole_number<int>(value, "slurm backend: time_limit_minutes");
      else if (key == "max_time_limit_minutes")
        o.max_time_limit_minutes =
            whole_number<int>(value, "slurm backend: max_time_limit_minutes");
      else if (key == "time_limit_margin")
        o.time_limit_margin = value.get<double>();
      else if (key == "time_limit_allowance_s")
        o.time_limit_allowance_s = value.get<double>();
      else if (key == "max_resubmits")
        o.max_resubmits = whole_number<int>(value, "slurm backend: max_resubmits");
      else if (key == "poll_initial_s")
        o.poll_initial_s = value.get<double>();
      else if (key == "poll_max_s")
        o.poll_max_s = value.get<double>();
      else if (key == "command_timeout_s")
        o.command_timeout_s = value.get<double>();
      else if (key == "controller_timeout_s")
        o.controller_timeout_s = value.get<double>();
      else if (key == "pending_timeout_s")
        o.pending_timeout_s = value.get<double>();
      else if (key == "cancel_wait_s")
        o.cancel_wait_s = value.get<double>();
      else if (key == "slurm_bin_dir")
        continue;  // applied before the loop
      else if (key == "commands") {
        if (!value.is_object())
          throw std::invalid_argument("slurm backend: commands must be an object");
        auto& c = o.commands;
        const std::map<std::string, std::string*> fields = {
            {"sbatch", &c.sbatch},   {"squeue", &c.squeue}, {"sacct", &c.sacct},
            {"scancel", &c.scancel}, {"sinfo", &c.sinfo},   {"scontrol", &c.scontrol},
            {"srun", &c.srun}};
        for (const auto& [name, path] : value.items()) {
          auto it = fields.find(name);
          if (it == fields.end())
            throw std::invalid_argument("slurm backend: unknown command '" + name + "'");
          *it->second = path.get<std::string>();
        }
      } else {
        throw std::invalid_argument("slurm backend: unknown setting '" + key + "'");
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("slurm backend settings: ") + e.what());
  }
  return o;
}

}  // namespace colltune
