#include "runner/backend.h"

#include <stdexcept>

#include "core/rng.h"

namespace colltune {

std::string_view to_string(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::ok: return "ok";
    case RunOutcome::failed: return "failed";
    case RunOutcome::timeout: return "timeout";
    case RunOutcome::parse_error: return "parse_error";
    case RunOutcome::cancelled: return "cancelled";
    case RunOutcome::unavailable: return "unavailable";
  }
  return "unknown";
}

std::optional<RunOutcome> parse_run_outcome(std::string_view text) {
  for (RunOutcome o : {RunOutcome::ok, RunOutcome::failed, RunOutcome::timeout,
                       RunOutcome::parse_error, RunOutcome::cancelled, RunOutcome::unavailable})
    if (to_string(o) == text) return o;
  return std::nullopt;
}

std::vector<std::pair<std::size_t, int>> run_order(const BenchmarkRequest& request) {
  std::vector<std::pair<std::size_t, int>> order;
  for (int r = 0; r < request.repeats; ++r)
    for (std::size_t i = 0; i < request.configs.size(); ++i) order.emplace_back(i, r);
  Rng rng(request.order_seed);
  rng.shuffle(order);
  return order;
}

void validate_request(const BenchmarkRequest& r) {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (r.comm_size < 2) fail("comm_size must be at least 2 (got " + std::to_string(r.comm_size) + ")");
  if (r.nodes < 1) fail("nodes must be at least 1");
  if (r.ppn < 0) fail("ppn must not be negative");
  if (r.ppn > 0 && r.ppn * r.nodes != r.comm_size)
    fail("nodes x ppn (" + std::to_string(r.nodes) + " x " + std::to_string(r.ppn) +
         ") differs from comm_size " + std::to_string(r.comm_size));
  if (has_message_size(r.collective)) {
    if (r.min_size < 1) fail("min message size must be at least 1 byte");
    if (r.max_size < r.min_size) fail("max message size is below min message size");
    if (r.max_size > (std::int64_t{1} << 30)) fail("max message size above 1 GiB");
  }
  if (r.iterations < 1) fail("iterations must be at least 1");
  if (r.warmup < 0) fail("warmup must not be negative");
  if (r.repeats < 1) fail("repeats must be at least 1");
  if (r.configs.empty()) fail("a batch needs at least one configuration");
  if (!(r.run_timeout_s > 0)) fail("run timeout must be positive");
  for (const auto& c : r.configs)
    if (c.algorithm < 0 || c.segsize < 0 || c.fanout < 0)
      fail("negative value in configuration " + to_string(c));
}

void to_json(nlohmann::json& j, const Provenance& p) {
  j = {{"backend", p.backend},       {"argv", p.argv},
       {"mca", p.mca},               {"env", p.env},
       {"host", p.host},             {"ompi_version", p.ompi_version},
       {"benchmark", p.benchmark},   {"job_id", p.job_id},
       {"start_time", p.start_time}, {"end_time", p.end_time},
       {"exit_status", p.exit_status}, {"stderr_excerpt", p.stderr_excerpt}};
}

void from_json(const nlohmann::json& j, Provenance& p) {
  p.backend = j.value("backend", "");
  p.argv = j.value("argv", std::vector<std::string>{});
  p.mca = j.value("mca", std::map<std::string, std::string>{});
  p.env = j.value("env", std::map<std::string, std::string>{});
  p.host = j.value("host", "");
  p.ompi_version = j.value("ompi_version", "");
  p.benchmark = j.value("benchmark", "");
  p.job_id = j.value("job_id", "");
  p.start_time = j.value("start_time", 0.0);
  p.end_time = j.value("end_time", 0.0);
  p.exit_status = j.value("exit_status", 0);
  p.stderr_excerpt = j.value("stderr_excerpt", "");
}

}  // namespace colltune
