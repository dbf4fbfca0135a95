// The end of a campaign: turn its per-size picks into a rules file for the target's Open MPI,
// validate it exactly as Open MPI reads it, prove on the real library (with the algorithm
// tracer) that every tuned (collective, size) runs what the file says, and re-measure tuned vs
// default with the file loaded — the speed-up colltune reports is that re-measured one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "campaign/campaign_spec.h"
#include "campaign/job_executor.h"
#include "campaign/store.h"
#include "core/algorithm_table.h"
#include "runner/backend.h"

namespace colltune {

struct RulesStageOptions {
  // Where the rules file is written; it must be readable by every rank (shared file system).
  std::filesystem::path rules_path;
  // Scratch space for tracer output (per-rank trace files).
  std::filesystem::path work_dir;
  std::string format = "auto";  // auto | classic | v2 | json
  bool verify = true;
  int verify_iterations = 20;
  int remeasure_rounds = 3;  // (tuned, default) pairs per context and look, A B / B A order
  // Looks of the re-measurement (docs/final-choice.md, section 4): a second look of
  // remeasure_rounds more rounds runs only when a size the file changes measured slower with it
  // than without but not significantly; the looks share alpha (Bonferroni), as the final
  // phase's do.
  int remeasure_looks = 2;
  // Re-measuring passes: a size measured significantly slower with the file is reverted and the
  // rewritten file is validated, verified and re-measured again, at most this many times; the
  // pass after the last one only proves (trace) the rewritten file.
  int remeasure_passes = 2;
  // The conditions the campaign was tuned under (campaign/fingerprint.h), stored with the rules
  // version so that `colltune retune --if-changed` can compare; null = not recorded.
  nlohmann::json fingerprint = nullptr;
  // The campaign's spec as the caller parsed it (run_campaign parses it once); unset = parsed
  // from the store.
  std::optional<CampaignSpec> spec;
};

struct RulesStageResult {
  std::int64_t rules_version_id = 0;
  std::string content;
  std::string format;
  bool deployable = false;  // loads in Open MPI and no lint error (see the record's
                            // verification.deployable for "safe to deploy")
  std::string validation_text;
  bool verified = false;  // every tested (collective, size) ran what the file says
  bool verification_skipped = false;
  std::string verification_text;                      // human tables
  nlohmann::json reverted = nlohmann::json::array();  // sizes reverted to the default, why
  std::string error;                                  // why the stage failed; empty on success
  bool interrupted = false;
};

// The run that proves which algorithms Open MPI applies with a rules file loaded: OSU with the
// file, nothing forced, the algorithm tracer writing into `trace_dir`; read the trace with
// read_trace_dir(trace_dir) and compare with verify_trace().
BenchmarkRequest verification_request(const std::string& tag, Collective collective, int comm_size,
                                      int nodes, int ppn, std::int64_t min_size,
                                      std::int64_t max_size, int iterations,
                                      const std::filesystem::path& rules_file,
                                      const std::filesystem::path& trace_dir);

// The verification record of a rules version (Store: rules_versions.verification), which the
// deploy guard reads:
//   verified    bool    every context's trace run showed Open MPI running what the file says,
//                       on the real library (false when skipped or when a row mismatched)
//   skipped     bool    no verification was made (--no-verify, or a sim / replay backend)
//   deployable  bool    safe to deploy: verified on the real library, and no size of this file
//                       measured significantly slower than the default left in it
//   reason      string  why not deployable ("" when deployable)
//   pass        int     the stage's pass that wrote this record (1 = first file)
//   remeasured  bool    this pass re-measured tuned vs default with the file loaded
//   contexts    [ {collective, comm_size, matches, sizes, run_ok, rows: [trace rows],
//                  remeasure: [{msg_size, changed, pairs, ratio, ratio_low, ratio_high,
//                               confidence, verdict (faster | tie | slower)}],
//                  remeasure_looks: the looks re-measured (1, or 2 when a changed size
//                  measured slower, not significantly, after the first)} ]
//   reverted    [ {collective, comm_size, msg_size, from, from_name, ratio, ratio_low,
//                  ratio_high, pairs, pass, reason} ]  sizes this pass found slower (the next
//                  version has them at the default)
//   reverted_before  every reverted size of this stage up to this pass
// A version superseded by a reverted rewrite keeps deployable = false with its reason.
//
// Runs the stage for a campaign whose contexts are all done. Jobs (purposes "verify",
// "remeasure-tuned", "remeasure-default") go through the store like every other job, so an
// interrupted stage resumes without repeating recorded runs.
RulesStageResult finish_campaign_rules(Store& store, JobExecutor& executor,
                                       const AlgorithmTable& table, std::int64_t campaign_id,
                                       const RulesStageOptions& options, const CancelFlag& cancel);

}  // namespace colltune
