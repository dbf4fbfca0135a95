// Installing a rules file where Open MPI reads it, with history and rollback.
//
// Layout next to the target PATH:
//   PATH                  the live file (replaced atomically: temp file + fsync + rename +
//                         fsync of the directory, mode 0644 so every rank's user can read it)
//   PATH.history/0001.conf, 0001.json, 0002.conf, ...   every version ever deployed, with
//                         its provenance; 0000.json (+ 0000.conf) records what was there
//                         before the first deploy ("absent" when nothing was)
//   PATH.history/active   number of the version PATH currently holds
//   PATH.history/lock     flock()ed during a deploy or rollback
// rollback() makes the version that was active before the current one live again (walking
// back one deploy per call); deploying after a rollback starts a new version whose
// predecessor is the rolled-back-to one.
//
// Open MPI reads the file once per process at MPI_Init: a deploy affects jobs started after it.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace colltune {

struct DeployProvenance {
  std::string campaign;      // campaign id / name the rules came from
  std::string ompi_version;  // Open MPI release the file was written for
  std::string fingerprint;   // machine / software-stack fingerprint of the tuning
  std::string source;        // e.g. "colltune rules write --campaign 12", a file path
  double time = 0;           // seconds since the epoch; 0 = now
  nlohmann::json extra = nlohmann::json::object();  // anything else worth keeping
};
void to_json(nlohmann::json& j, const DeployProvenance& p);
void from_json(const nlohmann::json& j, DeployProvenance& p);

struct HistoryEntry {
  int version = 0;
  bool absent = false;                    // the target did not exist (version 0 only)
  std::optional<int> previous;            // version active before this one was deployed
  std::filesystem::path rules_path;       // PATH.history/NNNN.conf (empty when absent)
  std::filesystem::path provenance_path;  // PATH.history/NNNN.json
  DeployProvenance provenance;
};

struct DeployResult {
  std::filesystem::path target;
  int version = 0;  // now active
  std::optional<int> previous;
};

class DeployError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The target or its history is something colltune will not write through: a symbolic link
// (the target, the history folder or any entry in it), a directory, a FIFO, a device, a
// socket. Nothing was changed.
class DeployRefused : public DeployError {
 public:
  using DeployError::DeployError;
};

// The one safety check of every deploy, rollback and undo (CLI and daemon): the folder of
// `target` exists; `target` is absent or a regular file (checked with lstat, so never a
// link); PATH.history is absent or a real folder holding only regular files. Throws
// DeployRefused (or DeployError on I/O failure). Files are opened with O_NOFOLLOW|O_NONBLOCK
// and checked with fstat, so a FIFO planted later never blocks and a link is never followed.
// The folder holding the target may itself be reached through links (the admin chose it).
void check_deploy_target(const std::filesystem::path& target);

// Writes `content` to `target` atomically and records it as a new history version. The
// directory of `target` must exist. The new live file keeps the permissions (and, for root,
// the owner) of the file it replaces; a new file is 0644. Throws DeployRefused when
// check_deploy_target() refuses, DeployError on I/O failure (the live file is then unchanged).
DeployResult deploy_rules(const std::string& content, const std::filesystem::path& target,
                          const DeployProvenance& provenance);

// The content of a rules file given by the user: a regular file (a link to one is fine),
// never a FIFO or device (opened non-blocking and checked with fstat). Throws DeployError.
std::string read_rules_source(const std::filesystem::path& source);

// deploy_rules() with the content of the file `source` (read_rules_source).
DeployResult deploy_rules_file(const std::filesystem::path& source,
                               const std::filesystem::path& target,
                               const DeployProvenance& provenance);

// Restores the version that was active before the current one (atomically). Throws
// DeployError when there is no history or nothing to go back to. Going back to version 0
// "absent" removes the live file.
DeployResult rollback_rules(const std::filesystem::path& target);

// Makes the recorded `version` live again as it is (no new version; the target's history
// says it is active). Used to take a rollback back. Throws DeployError when it is missing.
DeployResult activate_version(const std::filesystem::path& target, int version);

// Takes back a deploy that just happened (e.g. its database record failed): the previous
// version is live again and version `deployed.version` is removed from the history. Throws
// DeployError when another deploy or rollback has happened since.
void undo_deploy(const DeployResult& deployed);

// Every recorded version, oldest first, and the active one (nullopt without history).
std::vector<HistoryEntry> deploy_history(const std::filesystem::path& target);
std::optional<int> active_version(const std::filesystem::path& target);
std::filesystem::path history_dir(const std::filesystem::path& target);

// Lines for $prefix/etc/openmpi-mca-params.conf (system-wide) that make every job load the
// file: coll_tuned_use_dynamic_rules = 1, coll_tuned_dynamic_rules_filename = <absolute path>.
// Throws std::invalid_argument for a path the MCA file syntax cannot carry (newline, '#').
// A non-empty `params_file` is named in a first comment line ("# add to <params_file>").
std::string mca_params_snippet(const std::filesystem::path& rules_path,
                               const std::string& params_file = "");

// The system-wide MCA parameter file Open MPI reads at MPI_Init:
// <sysconfdir>/openmpi-mca-params.conf (sysconfdir from `ompi_info --path sysconfdir`).
std::filesystem::path mca_params_file(const std::filesystem::path& sysconfdir);

// What overrides the system file and how the rules can silently stop applying; shown next to
// the snippet.
std::vector<std::string> mca_params_warnings();

}  // namespace colltune
