#include "campaign/context_request.h"

#include <utility>

#include "campaign/job_executor.h"

namespace colltune {

BenchmarkRequest context_request(const ContextSpec& context, const CampaignSpec& spec,
                                 std::string tag) {
  ContextRecord record;
  record.collective = context.collective;
  record.comm_size = context.comm_size;
  record.nodes = context.nodes;
  record.ppn = context.ppn;
  return context_request(record, spec, std::move(tag));
}

BenchmarkRequest context_request(const ContextRecord& context, const CampaignSpec& spec,
                                 std::string tag) {
  BenchmarkRequest r;
  r.tag = std::move(tag);
  r.collective = context.collective;
  r.comm_size = context.comm_size;
  r.nodes = context.nodes;
  r.ppn = context.ppn;
  r.min_size = spec.min_size;
  r.max_size = spec.max_size;
  r.iterations = spec.iterations;
  r.warmup = spec.warmup;
  r.configs = {TuningConfig::default_decision()};
  r.repeats = 1;
  r.run_timeout_s = spec.run_timeout_s;
  return r;
}

std::string job_tag(std::int64_t campaign_id, std::int64_t context_id, const std::string& purpose,
                    std::size_t number) {
  return "ct-c" + std::to_string(campaign_id) + "-x" + std::to_string(context_id) + "-" + purpose +
         std::to_string(number);
}

Evaluation evaluation_of(const RunRecord& run) {
  Evaluation e;
  e.config = run.config;
  e.failed = is_failed_outcome(run.outcome);
  e.seconds = observed_seconds(run.provenance);
  for (const auto& row : run.rows) {
    e.msg_sizes.push_back(row.size);
    e.latency_us.push_back(row.avg_us);
  }
  return e;
}

}  // namespace colltune
