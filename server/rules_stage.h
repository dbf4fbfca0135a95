// The end of a campaign: turn its per-size picks into a rules file for the target's Open MPI,
// validate it exactly as Open MPI reads it, prove on the real library (with the algorithm
// tracer) that every tuned (collective, size) runs what the file says, and re-measure tuned vs
// default with the file loaded — the speed-up colltune reports is that re-measured one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/algorithm_table.h"
#include "runner/backend.h"
#include "server/job_executor.h"
#include "server/store.h"

namespace colltune {

struct RulesStageOptions {
  // Where the rules file is written; it must be readable by every rank (shared file system).
  std::filesystem::path rules_path;
  // Scratch space for tracer output (per-rank trace files).
  std::filesystem::path work_dir;
  std::string format = "auto";  // auto | classic | v2 | json
  bool verify = true;
  int verify_iterations = 20;
  int remeasure_rounds = 3;     // interleaved (tuned, default) pairs per context
  // The conditions the campaign was tuned under (server/fingerprint.h), stored with the rules
  // version so that `colltune retune --if-changed` can compare; null = not recorded.
  nlohmann::json fingerprint = nullptr;
};

struct RulesStageResult {
  std::int64_t rules_version_id = 0;
  std::string content;
  std::string format;
  bool deployable = false;   // loads in Open MPI and no lint error
  std::string validation_text;
  bool verified = false;     // every tested (collective, size) ran what the file says
  bool verification_skipped = false;
  std::string verification_text;  // human tables
  std::string error;         // why the stage failed; empty on success
  bool interrupted = false;
};

// The run that proves which algorithms Open MPI applies with a rules file loaded: OSU with the
// file, nothing forced, the algorithm tracer writing into `trace_dir`; read the trace with
// read_trace_dir(trace_dir) and compare with verify_trace().
BenchmarkRequest verification_request(const std::string& tag, Collective collective,
                                      int comm_size, int nodes, int ppn, std::int64_t min_size,
                                      std::int64_t max_size, int iterations,
                                      const std::filesystem::path& rules_file,
                                      const std::filesystem::path& trace_dir);

// Runs the stage for a campaign whose contexts are all done. Jobs (purposes "verify",
// "remeasure-tuned", "remeasure-default") go through the store like every other job, so an
// interrupted stage resumes without repeating recorded runs.
RulesStageResult finish_campaign_rules(Store& store, JobExecutor& executor,
                                       const AlgorithmTable& table, std::int64_t campaign_id,
                                       const RulesStageOptions& options, const CancelFlag& cancel);

}  // namespace colltune
