// Open MPI's scratch files of one launch, in directories of that launch's own, removed when the
// launch is over however it ended.
//
// mpirun keeps a session directory (PMIx's data store, contact files, up to 8 MB) under the
// temp folder, and the ranks on a node keep their shared-memory segments (btl/vader, 4 MB a rank)
// in /dev/shm, which is memory. Open MPI removes both on a clean exit; an mpirun killed with
// SIGKILL (a run whose ranks ignore SIGTERM past the grace period, the OOM killer, kill -9)
// removes nothing, so a daemon would fill the temp folder and the machine's memory over its life
// (one test machine had 49 session directories, 163 MB, and 42 segments left). A launch given an
// OmpiScratch puts both in its own directories; the destructor removes them, and
// sweep_orphans() removes those of a process that died before its destructor ran.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace colltune {

class OmpiScratch {
 public:
  // Makes `<temp_base>/colltune-ompi-XXXXXX` (with an `owner` file naming this process) and,
  // when `shm_base` is an existing directory, `<shm_base>/colltune-ompi-XXXXXX` (the same
  // name). A directory that cannot be made is logged and left to Open MPI's default: the
  // launch still runs; only the clean-up after a kill is lost.
  OmpiScratch(const std::filesystem::path& temp_base, const std::filesystem::path& shm_base);
  // Removes both directories with everything in them. Call only once no process of the launch
  // is left (run_process returns after it killed the launch's whole session); a failure is
  // logged, never thrown.
  ~OmpiScratch();
  OmpiScratch(const OmpiScratch&) = delete;
  OmpiScratch& operator=(const OmpiScratch&) = delete;

  // OMPI_MCA_orte_tmpdir_base, OMPI_MCA_btl_vader_backing_directory and their Open MPI 5 names,
  // naming the directories made, for mpirun's environment (its local ranks inherit it). Not part
  // of a run's provenance: where Open MPI keeps its scratch files changes nothing it measures
  // (both stay on the same file systems as Open MPI's defaults).
  std::map<std::string, std::string> environment() const;

  const std::filesystem::path& session_base() const { return session_base_; }  // empty if none
  const std::filesystem::path& shm_dir() const { return shm_dir_; }            // empty if none

  // Removes the scratch directories under the two bases whose owner process is gone (a daemon
  // or `tune` killed while a run was going: no destructor ran). Those of live processes, and
  // directories without an owner file, are left alone. Returns how many were removed.
  static int sweep_orphans(const std::filesystem::path& temp_base,
                           const std::filesystem::path& shm_base);

  // Where Open MPI would keep them for a process with this environment: the folder the
  // admin named with OMPI_MCA_orte_tmpdir_base (PRTE_MCA_prte_tmpdir_base for Open MPI 5), else
  // the system temp folder; OMPI_MCA_btl_vader_backing_directory (btl_sm_ for Open MPI 5), else
  // /dev/shm. A run's folder goes under these, so an admin's choice of place still holds.
  static std::filesystem::path default_temp_base();  // this process's environment
  static std::filesystem::path default_shm_base();
  // The same, for a launch whose own environment (a request's extra_env) may name the folders;
  // a name there wins over `fallback` (the backend's base).
  static std::filesystem::path temp_base_in(const std::map<std::string, std::string>& env,
                                            const std::filesystem::path& fallback);
  static std::filesystem::path shm_base_in(const std::map<std::string, std::string>& env,
                                           const std::filesystem::path& fallback);

 private:
  std::filesystem::path session_base_;
  std::filesystem::path shm_dir_;
};

}  // namespace colltune
