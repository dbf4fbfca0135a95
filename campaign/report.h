// The report of a campaign, for people (the CLI's table, the HTML report) and machines
// (`colltune report --json`, GET /api/v1/campaigns/{id}/report). One typed struct built from the
// store alone (no backend needed), one JSON mapping (to_json); docs/report.md documents every
// field the JSON carries. Change a field: bump kReportSchemaVersion when the change is not
// purely additive, and update docs/report.md (tests/server/report_test checks both).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "campaign/store.h"
#include "core/algorithm_table.h"
#include "core/tuning_config.h"

namespace colltune {

// Version of the report's JSON layout. 1: the first versioned layout (adds the header fields).
inline constexpr int kReportSchemaVersion = 1;

// Where and with what the measurements were taken, and when.
struct ReportHeader {
  int schema_version = kReportSchemaVersion;
  std::string colltune_version;    // the colltune that built the report
  std::string backend;             // local, slurm, sim, replay
  std::string ompi_version;        // as the campaign's runs reported it; empty = unknown
  std::string host;                // launch host of the campaign's runs; empty = no run yet
  std::vector<std::string> hosts;  // every host a run placed ranks on (sorted, unique)
  std::string created_at;          // ISO-8601 UTC
  std::string finished_at;         // ISO-8601 UTC; empty while the campaign has not ended
  std::string generated_at;        // ISO-8601 UTC, when this report was built
};

struct ReportCampaign {
  std::int64_t id = 0;
  std::string name;
  CampaignState state = CampaignState::queued;
  nlohmann::json spec;  // the campaign spec as stored (docs: the campaign spec)
  std::string error;
};

struct ReportContext {
  std::int64_t id = 0;
  std::string collective;
  int comm_size = 0;
  int nodes = 1;
  int ppn = 0;
  ContextState state = ContextState::pending;
  int evaluations = 0;
  int space = 0;
  nlohmann::json failed_sizes = nlohmann::json::array();  // [{msg_size, reason}]
};

// One (collective, comm_size, msg_size): Open MPI's default against the chosen configuration.
struct ReportResult {
  std::string collective;
  int comm_size = 0;
  std::int64_t msg_size = 0;
  TuningConfig best;
  std::string best_name;
  double noise = 0;
  bool default_within_noise = false;
  std::optional<double> search_default_us;
  std::optional<double> search_best_us;
  std::string final_method;  // paired or median
  // measured at this comm size; not_run: a whole-cluster size its search never reached (the
  // default stands, `note` says why); predicted cells: `predicted`
  std::string source = "measured";
  std::string note;
  // A whole-cluster campaign's total (cluster.total_node_seconds) could not pay for testing
  // `candidate` here: the default stands untested (`note` says so).
  bool untested_for_money = false;
  nlohmann::json reverted;   // null, or why the rules stage put the default back
  nlohmann::json candidate;  // null, or the paired phase's candidate when it was not kept
  bool remeasured = false;
  std::optional<int> remeasure_samples;  // set when remeasured
  std::optional<double> default_us;
  std::optional<double> best_us;
  std::string speedup_source;  // remeasure or final
  int pairs = 0;
  std::optional<double> confidence;
  std::optional<double> speedup;  // default / tuned latency
  std::optional<double> speedup_low;
  std::optional<double> speedup_high;
  bool tie = true;
  // [lowest, highest] latency of the runs behind default_us / best_us (the re-measure runs when
  // remeasured, else the search and final runs); null without runs.
  nlohmann::json default_us_range;
  nlohmann::json best_us_range;
};

struct ReportRules {
  std::int64_t version_id = 0;
  std::string format;
  bool loads = false;
  bool deployable = false;
  std::string verdict;
  bool verified = false;
  bool verification_skipped = false;
  std::string reason;
  nlohmann::json reverted = nlohmann::json::array();
};

struct ReportCostPart {
  std::int64_t jobs = 0;
  std::int64_t runs = 0;
  double benchmark_seconds = 0;
  double node_seconds = 0;  // each run's benchmark time times the nodes it held
};
struct ReportCost : ReportCostPart {
  // The same per job purpose (search, final, verify, remeasure-tuned, remeasure-default): what
  // the search spent (what a budget limits) apart from the final phase's paired tests and the
  // rules stage's checks.
  std::map<JobPurpose, ReportCostPart> by_purpose;
};

struct CampaignReport {
  ReportHeader header;
  ReportCampaign campaign;
  std::vector<ReportContext> contexts;
  std::vector<ReportResult> results;
  std::optional<ReportRules> rules;  // none before the rules stage
  ReportCost cost;
  // Whole-cluster campaigns (docs/whole-cluster.md): per collective what the search did, and the
  // predicted cells (comm sizes not run) with the model's confidence. null / [] otherwise.
  nlohmann::json cluster;
  nlohmann::json predicted = nlohmann::json::array();

  // The report's JSON (docs/report.md): the header's fields at the top level, then campaign,
  // contexts, results, rules (null before the rules stage), cost.
  nlohmann::json to_json() const;
};

// Builds the report of campaign `campaign_id` from `store`. Throws std::invalid_argument when
// there is no such campaign.
CampaignReport build_campaign_report(Store& store, std::int64_t campaign_id,
                                     const AlgorithmTable& table);

// build_campaign_report(...).to_json().
nlohmann::json campaign_report(Store& store, std::int64_t campaign_id, const AlgorithmTable& table);

}  // namespace colltune
