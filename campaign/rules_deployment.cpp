#include "campaign/rules_deployment.h"

#include "runner/ompi_info.h"

namespace colltune {

namespace fs = std::filesystem;

bool validation_failed(const RulesVersionRecord& r) {
  return r.validation.is_object() && r.validation.value("deployable", true) == false;
}

std::optional<std::string> unverified_reason(const RulesVersionRecord& r) {
  const std::string id = "rules version " + std::to_string(r.id);
  if (validation_failed(r)) return id + " did not pass validation";
  const auto& v = r.verification;
  if (!v.is_object()) return id + " has no verification record";
  if (v.value("verified", false) == true) return std::nullopt;
  const std::string reason = v.contains("reason") && v.at("reason").is_string()
                                 ? v.at("reason").get<std::string>()
                                 : std::string();
  if (v.value("skipped", false) == true)
    return id + " was not verified on the real Open MPI (" +
           (reason.empty() ? "verification skipped" : reason) + ")";
  if (v.contains("contexts") && v.at("contexts").is_array()) {
    std::string failed;
    for (const auto& c : v.at("contexts"))
      if (c.value("run_ok", false) == false || c.value("matches", 0) != c.value("sizes", 0))
        failed += (failed.empty() ? "" : ", ") + c.value("collective", std::string("?")) +
                  " P=" + std::to_string(c.value("comm_size", 0));
    return id + " failed verification on the real Open MPI: it does not run what the file says" +
           (failed.empty() ? std::string() : " (" + failed + ")");
  }
  return id + " has not been verified on the real Open MPI" +
         (reason.empty() ? std::string(" (verification has not finished)") : " (" + reason + ")");
}

void to_json(nlohmann::json& j, const McaSnippet& s) {
  j = {{"params_file", s.params_file},
       {"detected", s.detected},
       {"text", s.text},
       {"warnings", s.warnings}};
}

McaSnippet mca_snippet(const fs::path& rules_path, const std::string& ompi_info) {
  McaSnippet s;
  const std::string sysconfdir = query_ompi_sysconfdir(ompi_info);
  s.detected = !sysconfdir.empty();
  s.params_file = s.detected ? mca_params_file(sysconfdir).string()
                             : std::string("$prefix/etc/openmpi-mca-params.conf");
  s.text = mca_params_snippet(rules_path, s.params_file);
  s.warnings = mca_params_warnings();
  return s;
}

DeployResult deploy_recorded(Store& store, const RulesVersionRecord& r, const fs::path& target,
                             DeployProvenance provenance) {
  provenance.extra["rules_version_id"] = r.id;
  std::optional<DeployResult> done;
  try {
    store.record_deployment(target.string(), [&]() -> std::optional<std::int64_t> {
      done = deploy_rules(r.content, target, provenance);
      return r.id;
    });
  } catch (...) {
    if (done) undo_deploy(*done);  // the record failed after the file went live
    throw;
  }
  return *done;
}

namespace {

// The rules version a history entry holds, when it came from this daemon's store.
std::optional<std::int64_t> version_id_of(const fs::path& target, int version) {
  for (const auto& e : deploy_history(target))
    if (e.version == version && e.provenance.extra.is_object() &&
        e.provenance.extra.contains("rules_version_id") &&
        e.provenance.extra.at("rules_version_id").is_number_integer())
      return e.provenance.extra.at("rules_version_id").get<std::int64_t>();
  return std::nullopt;
}

}  // namespace

DeployResult rollback_recorded(Store& store, const fs::path& target,
                               std::optional<std::int64_t>& live) {
  const std::optional<int> was_active = active_version(target);
  std::optional<DeployResult> done;
  try {
    store.record_deployment(target.string(), [&] {
      done = rollback_rules(target);
      live = version_id_of(target, done->version);
      return live;
    });
  } catch (...) {
    if (done && was_active) activate_version(target, *was_active);
    throw;
  }
  return *done;
}

}  // namespace colltune
