#include "campaign/retune.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace colltune {
using json = nlohmann::json;

namespace {

std::string days_text(double days) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", days);
  return buf;
}

json rules_summary(const RulesVersionRecord& r) {
  return {{"id", r.id},
          {"campaign_id", r.campaign_id ? json(*r.campaign_id) : json(nullptr)},
          {"format", r.format},
          {"deployed_to", r.deployed_to},
          {"created_at", r.created_at},
          {"fingerprint_hash",
           r.fingerprint.is_object() ? r.fingerprint.value("hash", json(nullptr)) : json(nullptr)}};
}

}  // namespace

json backend_fingerprint(const std::string& backend_name, const json& settings, Backend& backend,
                         const CommandRunner* runner) {
  const BackendInfo info = backend.describe();
  if (!backend.runs_real_open_mpi()) return model_fingerprint(info);
  FingerprintOptions options;
  const json s = settings.is_object() ? settings : json::object();
  options.ompi_info = s.value("ompi_info", std::string("ompi_info"));
  if (info.extra.is_object() && info.extra.contains("osu_dir") && info.extra["osu_dir"].is_string())
    options.osu_dir = info.extra["osu_dir"].get<std::string>();
  else if (s.contains("osu_dir") && s["osu_dir"].is_string())
    options.osu_dir = s["osu_dir"].get<std::string>();
  if (backend_name == "slurm") {
    options.scheduler = "slurm";
    options.partition = s.value("partition", std::string());
    if (runner) return collect_fingerprint(*runner, options);
    return collect_fingerprint(srun_command_runner(options.partition), options);
  }
  options.scheduler = "none";  // mpirun on this machine: its Slurm, if any, is not the target
  if (runner) return collect_fingerprint(*runner, options);
  return collect_fingerprint(local_command_runner(), options);
}

RetuneOptions RetuneOptions::from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("body must be a JSON object");
  static const std::set<std::string> kKnown = {
      "if_changed", "max_age_days", "force", "reason", "rules_version_id", "dry_run", "sentinel"};
  for (const auto& [k, v] : j.items())
    if (!kKnown.count(k)) throw std::invalid_argument(k + ": unknown field");
  RetuneOptions o;
  auto boolean = [&](const char* key, bool& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_boolean())
      throw std::invalid_argument(std::string(key) + ": must be true or false");
    out = j[key].get<bool>();
  };
  boolean("if_changed", o.if_changed);
  boolean("force", o.force);
  boolean("dry_run", o.dry_run);
  if (j.contains("max_age_days")) {
    if (!j["max_age_days"].is_number() || !(j["max_age_days"].get<double>() >= 0) ||
        j["max_age_days"].get<double>() > 100000)
      throw std::invalid_argument("max_age_days: a number of days between 0 and 100000");
    o.max_age_days = j["max_age_days"].get<double>();
  }
  if (j.contains("reason")) {
    if (!j["reason"].is_string() || j["reason"].get<std::string>().size() > 2000)
      throw std::invalid_argument("reason: a string of at most 2000 characters");
    o.reason = j["reason"].get<std::string>();
  }
  if (j.contains("rules_version_id") && !j["rules_version_id"].is_null()) {
    if (!j["rules_version_id"].is_number_integer() ||
        j["rules_version_id"].get<std::int64_t>() <= 0)
      throw std::invalid_argument("rules_version_id: a positive integer");
    o.rules_version_id = j["rules_version_id"].get<std::int64_t>();
  }
  return o;
}

json RetuneDecision::to_json() const {
  return {{"action", action},
          {"message", message},
          {"reasons", reasons},
          {"rules", rules ? rules_summary(*rules) : json(nullptr)},
          {"source_campaign_id", source ? json(source->id) : json(nullptr)},
          {"age_days", age_days},
          {"changes", changes_json(changes)},
          {"relevant_changes",
           std::count_if(changes.begin(), changes.end(), [](const auto& c) { return c.relevant; })},
          {"current_fingerprint_hash", current_fingerprint.is_object()
                                           ? current_fingerprint.value("hash", json(nullptr))
                                           : json(nullptr)},
          {"campaign", campaign ? json{{"id", campaign->id},
                                       {"name", campaign->name},
                                       {"state", to_string(campaign->state)},
                                       {"spec", campaign->spec}}
                                : json(nullptr)}};
}

std::optional<RulesVersionRecord> rules_version_to_check(Store& store,
                                                         std::optional<std::int64_t> id) {
  if (id) return store.rules_version(*id);
  std::optional<RulesVersionRecord> newest, deployed;
  for (auto& r : store.rules_versions()) {
    if (!newest || r.id > newest->id) newest = r;
    if (!r.deployed_to.empty() && (!deployed || r.id > deployed->id)) deployed = r;
  }
  return deployed ? deployed : newest;
}

json retune_campaign_spec(const CampaignRecord& source) {
  json spec = source.spec;
  std::string name = source.name;
  // "x (re-tune of 12)" stays one level deep however often it is re-tuned.
  if (const auto pos = name.find(" (re-tune of "); pos != std::string::npos)
    name = name.substr(0, pos);
  spec["name"] = name + " (re-tune of " + std::to_string(source.id) + ")";
  spec["warm_start_from"] = source.id;
  return spec;
}

RetuneDecision retune(Store& store, const RetuneOptions& options,
                      const std::function<json(const std::string& backend)>& current_fingerprint,
                      const std::function<CampaignRecord(const json& spec)>& create, double now) {
  if (now <= 0) now = unix_time_now();
  RetuneDecision d;
  d.rules = rules_version_to_check(store, options.rules_version_id);
  if (!d.rules) {
    d.action = "no_rules";
    d.message = options.rules_version_id
                    ? "no rules version " + std::to_string(*options.rules_version_id)
                    : "no rules version yet: run a campaign first";
    return d;
  }
  const std::string which =
      "rules version " + std::to_string(d.rules->id) +
      (d.rules->deployed_to.empty() ? " (not deployed)"
                                    : " (deployed to " + d.rules->deployed_to + ")");
  d.age_days = std::max(0.0, (now - d.rules->created_at) / 86400.0);
  if (d.rules->campaign_id) d.source = store.campaign(*d.rules->campaign_id);
  if (!d.source) {
    d.action = "no_source";
    d.message = which + " came from no campaign colltune has: there is nothing to re-run";
    return d;
  }
  const std::string backend = d.source->spec.value("backend", std::string());

  if (options.force)
    d.reasons.push_back(options.reason.empty() ? "re-tune requested" : options.reason);
  if (options.max_age_days > 0 && d.age_days > options.max_age_days)
    d.reasons.push_back("the rules are " + days_text(d.age_days) + " days old (limit " +
                        days_text(options.max_age_days) + ")");
  bool no_baseline = false;
  if (options.if_changed) {
    if (!d.rules->fingerprint.is_object()) {
      no_baseline = true;
    } else {
      d.current_fingerprint = current_fingerprint(backend);
      d.changes = diff_fingerprints(d.rules->fingerprint, d.current_fingerprint);
      std::size_t relevant = 0;
      for (const auto& c : d.changes) relevant += c.relevant;
      if (relevant)
        d.reasons.push_back(std::to_string(relevant) +
                            " relevant change(s) since the rules were tuned");
    }
  }

  if (d.reasons.empty()) {
    if (no_baseline) {
      d.action = "no_baseline";
      d.message = which +
                  " has no recorded fingerprint: cannot tell whether the cluster changed "
                  "(re-tune once, or use --max-age)";
    } else {
      d.action = "nothing";
      d.message = options.if_changed
                      ? "no relevant change since " + which + " was tuned"
                      : which + " is " + days_text(d.age_days) + " days old: nothing to do";
    }
    return d;
  }

  // Only the fingerprint asks for it, and a re-tuning campaign of the same source already made
  // rules under the current conditions: they wait for a deploy, not for another campaign.
  if (!options.force && !(options.max_age_days > 0 && d.age_days > options.max_age_days) &&
      d.current_fingerprint.is_object())
    for (const auto& c : store.campaigns(CampaignState::done, 1000, 0)) {
      if (!c.spec.is_object() || c.spec.value("warm_start_from", std::int64_t{0}) != d.source->id)
        continue;
      for (const auto& r : store.rules_versions(c.id)) {
        if (!r.fingerprint.is_object() ||
            any_relevant(diff_fingerprints(r.fingerprint, d.current_fingerprint)))
          continue;
        d.action = "awaiting_deploy";
        d.campaign = c;
        d.message = "re-tuning campaign " + std::to_string(c.id) + " already made rules version " +
                    std::to_string(r.id) +
                    " under the current conditions: deploy it (POST /api/v1/rules/" +
                    std::to_string(r.id) + "/deploy)";
        return d;
      }
    }

  // A re-tuning campaign of the same source still queued, running or paused: not another one.
  for (const CampaignState state :
       {CampaignState::queued, CampaignState::running, CampaignState::paused})
    for (const auto& c : store.campaigns(state, 1000, 0))
      if (c.spec.is_object() && c.spec.value("warm_start_from", std::int64_t{0}) == d.source->id) {
        d.action = "running";
        d.campaign = c;
        d.message = "re-tuning campaign " + std::to_string(c.id) + " of campaign " +
                    std::to_string(d.source->id) + " is already " + to_string(c.state);
        return d;
      }

  d.action = "retune";
  std::string why;
  for (const auto& r : d.reasons) why += (why.empty() ? "" : "; ") + r;
  if (options.dry_run) {
    d.message =
        "would re-tune " + which + " (campaign " + std::to_string(d.source->id) + "): " + why;
    return d;
  }
  d.campaign = create(retune_campaign_spec(*d.source));
  d.message = "started re-tuning campaign " + std::to_string(d.campaign->id) + " from campaign " +
              std::to_string(d.source->id) + " (" + which + "): " + why;
  return d;
}

}  // namespace colltune
