#include "server/backend_factory.h"

#include <stdexcept>

#include "runner/local_backend.h"

namespace colltune {

std::vector<std::string> backend_names() { return {"local"}; }

std::unique_ptr<Backend> make_backend(const std::string& name, const nlohmann::json& settings) {
  if (!settings.is_object() && !settings.is_null())
    throw std::invalid_argument("backend settings must be an object");
  const nlohmann::json s = settings.is_null() ? nlohmann::json::object() : settings;
  if (name == "local") {
    LocalBackendOptions o;
    if (s.contains("osu_dir")) o.osu_dir = s.at("osu_dir").get<std::string>();
    if (s.contains("mpirun")) o.mpirun = s.at("mpirun").get<std::string>();
    if (s.contains("ompi_info")) o.ompi_info = s.at("ompi_info").get<std::string>();
    if (s.contains("mpirun_args")) o.mpirun_extra_args = s.at("mpirun_args").get<std::vector<std::string>>();
    if (s.contains("cores")) o.cores = s.at("cores").get<int>();
    return std::make_unique<LocalBackend>(std::move(o));
  }
  throw std::invalid_argument("unknown backend '" + name + "'");
}

}  // namespace colltune
