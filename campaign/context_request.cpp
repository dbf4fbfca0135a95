#include "campaign/context_request.h"

#include <utility>

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

}  // namespace colltune
