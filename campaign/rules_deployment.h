// Deploying a stored rules version (CLI `rules deploy --db` and POST /api/v1/rules/{id}/deploy):
// the guard that keeps unverified rules off the machine, the record of where each version is
// live, kept all or nothing with the live file, and the MCA snippet that makes jobs load it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "campaign/store.h"
#include "rules/rules_deploy.h"

namespace colltune {

// Why `r` must not be deployed without force (nullopt: it may). A version is deployable when
// it passed validation and its verification on the real Open MPI proved that every tested
// (collective, size) runs what the file says. Sim and replay campaigns, a skipped or failed
// verification, and a stage that has not finished are not verified; the reason says which.
std::optional<std::string> unverified_reason(const RulesVersionRecord& r);
// Whether the refusal can be forced: a file that fails validation never can (Open MPI would
// ignore it or abort jobs with it).
bool validation_failed(const RulesVersionRecord& r);

// The lines that make every job load the rules, and the file they go into: the system-wide
// MCA parameter file of the installed Open MPI, <sysconfdir>/openmpi-mca-params.conf, with
// sysconfdir from `ompi_info --path sysconfdir` (e.g. /etc/openmpi on Debian). When ompi_info
// cannot tell, params_file says "$prefix/etc/openmpi-mca-params.conf" and detected is false.
struct McaSnippet {
  std::string params_file;
  bool detected = false;
  std::string text;
  std::vector<std::string> warnings;
};
void to_json(nlohmann::json& j, const McaSnippet& s);
McaSnippet mca_snippet(const std::filesystem::path& rules_path,
                       const std::string& ompi_info = "ompi_info");

// deploy_rules() of `r`'s content with its database record in one step (Store::
// record_deployment): a database that cannot be written (locked past its wait, full)
// leaves the live file and its history as they were. The guard is the caller's.
DeployResult deploy_recorded(Store& store, const RulesVersionRecord& r,
                             const std::filesystem::path& target, DeployProvenance provenance);

// rollback_rules() with the record, all or nothing likewise. `live` receives the rules
// version now live at `target` (nullopt: a file that is not one of this database's).
DeployResult rollback_recorded(Store& store, const std::filesystem::path& target,
                               std::optional<std::int64_t>& live);

}  // namespace colltune
