// The mpirun command line of one benchmark run, shared by the local backend and by the Slurm
// backend's batch scripts (mpirun inside an allocation).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace colltune {

struct MpirunSettings {
  std::string mpirun = "mpirun";
  int np = 4;
  int ppn = 0;                   // ranks per node (--map-by ppr:N:node); 0 = mpirun's default
  bool oversubscribe = false;    // more ranks than cores
  bool yield_when_idle = false;  // ranks > cores: docs/reference/slurm-single-node.md §5
  bool allow_run_as_root = false;
  std::vector<std::string> extra_args;  // admin-provided, passed verbatim as separate argv items
};

struct MpirunLaunch {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // to set in mpirun's environment
  std::map<std::string, std::string> mca;  // every MCA parameter on the command line
};

// mpirun -np N [--map-by ppr:K:node] [--oversubscribe] --mca k v ... [-x NAME ...] program...
// `env` is exported to every rank with -x; MCA parameters go on the command line (they win over
// the environment and the system file).
MpirunLaunch mpirun_launch(const MpirunSettings& settings,
                           const std::map<std::string, std::string>& mca,
                           const std::map<std::string, std::string>& env,
                           const std::vector<std::string>& program_argv);

// Environment variables of the caller that would change what a benchmark run measures
// (OMPI_MCA_coll*: a user's own rules file or forced algorithm); removed for every run.
std::vector<std::string> interfering_environment();

// Usable cores of this process (sched_getaffinity), at least 1.
int available_cores();

}  // namespace colltune
