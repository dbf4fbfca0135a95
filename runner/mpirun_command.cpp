#include "runner/mpirun_command.h"

#include <sched.h>

#include <thread>

extern char** environ;

namespace colltune {

MpirunLaunch mpirun_launch(const MpirunSettings& settings,
                           const std::map<std::string, std::string>& mca,
                           const std::map<std::string, std::string>& env,
                           const std::vector<std::string>& program_argv) {
  MpirunLaunch launch;
  launch.mca = mca;
  if (settings.yield_when_idle) launch.mca["mpi_yield_when_idle"] = "1";
  auto& a = launch.argv;
  a = {settings.mpirun, "-np", std::to_string(settings.np)};
  if (settings.ppn > 0) {
    a.push_back("--map-by");
    a.push_back("ppr:" + std::to_string(settings.ppn) + ":node");
  }
  if (settings.oversubscribe) a.push_back("--oversubscribe");
  for (const auto& [k, v] : launch.mca) {
    a.push_back("--mca");
    a.push_back(k);
    a.push_back(v);
  }
  launch.env = env;
  for (const auto& [k, v] : env) {
    a.push_back("-x");
    a.push_back(k);
  }
  if (settings.allow_run_as_root) {
    launch.env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
    launch.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
  }
  for (const auto& extra : settings.extra_args) a.push_back(extra);
  for (const auto& p : program_argv) a.push_back(p);
  return launch;
}

std::vector<std::string> interfering_environment() {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    if (entry.rfind("OMPI_MCA_coll", 0) != 0) continue;
    names.push_back(entry.substr(0, entry.find('=')));
  }
  return names;
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace colltune
