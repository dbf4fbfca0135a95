#include "runner/backend.h"

#include <set>
#include <stdexcept>

#include "core/rng.h"

namespace colltune {

std::string_view to_string(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::ok:
      return "ok";
    case RunOutcome::failed:
      return "failed";
    case RunOutcome::timeout:
      return "timeout";
    case RunOutcome::parse_error:
      return "parse_error";
    case RunOutcome::cancelled:
      return "cancelled";
    case RunOutcome::unavailable:
      return "unavailable";
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
  const std::size_t n = request.configs.size();
  for (int r = 0; r < request.repeats; ++r)
    for (std::size_t i = 0; i < n; ++i)
      order.emplace_back(request.alternating && r % 2 == 1 ? n - 1 - i : i, r);
  if (!request.alternating) {
    Rng rng(request.order_seed);
    rng.shuffle(order);
  }
  if (!request.only_runs.empty()) {
    const std::set<std::pair<std::size_t, int>> wanted(request.only_runs.begin(),
                                                       request.only_runs.end());
    std::erase_if(order, [&](const auto& run) { return !wanted.count(run); });
  }
  return order;
}

void validate_request(const BenchmarkRequest& r) {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (r.comm_size < 2)
    fail("comm_size must be at least 2 (got " + std::to_string(r.comm_size) + ")");
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
  for (const auto& [index, repeat] : r.only_runs)
    if (index >= r.configs.size() || repeat < 0 || repeat >= r.repeats)
      fail("only_runs names a run outside the batch");
  for (const auto& c : r.configs)
    if (c.algorithm < 0 || c.segsize < 0 || c.fanout < 0)
      fail("negative value in configuration " + to_string(c));
}

std::string request_problem(const BenchmarkRequest& request) {
  try {
    validate_request(request);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

void to_json(nlohmann::json& j, const Provenance& p) {
  j = {{"backend", p.backend},
       {"argv", p.argv},
       {"mca", p.mca},
       {"env", p.env},
       {"host", p.host},
       {"hosts", p.hosts},
       {"ompi_version", p.ompi_version},
       {"benchmark", p.benchmark},
       {"job_id", p.job_id},
       {"start_time", p.start_time},
       {"end_time", p.end_time},
       {"exit_status", p.exit_status},
       {"stderr_excerpt", p.stderr_excerpt}};
  if (p.benchmark_seconds > 0) j["benchmark_seconds"] = p.benchmark_seconds;
}

double observed_seconds(const Provenance& p) {
  if (p.benchmark_seconds > 0) return p.benchmark_seconds;
  return p.end_time > p.start_time ? p.end_time - p.start_time : 0.0;
}

void from_json(const nlohmann::json& j, Provenance& p) {
  p.backend = j.value("backend", "");
  p.argv = j.value("argv", std::vector<std::string>{});
  p.mca = j.value("mca", std::map<std::string, std::string>{});
  p.env = j.value("env", std::map<std::string, std::string>{});
  p.host = j.value("host", "");
  p.hosts = j.value("hosts", std::vector<std::string>{});
  p.ompi_version = j.value("ompi_version", "");
  p.benchmark = j.value("benchmark", "");
  p.job_id = j.value("job_id", "");
  p.start_time = j.value("start_time", 0.0);
  p.end_time = j.value("end_time", 0.0);
  p.benchmark_seconds = j.value("benchmark_seconds", 0.0);
  p.exit_status = j.value("exit_status", 0);
  p.stderr_excerpt = j.value("stderr_excerpt", "");
}

void to_json(nlohmann::json& j, const BenchmarkRequest& r) {
  j = {{"tag", r.tag},
       {"collective", std::string(name(r.collective))},
       {"comm_size", r.comm_size},
       {"nodes", r.nodes},
       {"ppn", r.ppn},
       {"min_size", r.min_size},
       {"max_size", r.max_size},
       {"iterations", r.iterations},
       {"warmup", r.warmup},
       {"configs", r.configs},
       {"repeats", r.repeats},
       {"order_seed", r.order_seed},
       {"alternating", r.alternating},
       {"run_timeout_s", r.run_timeout_s},
       {"extra_mca", r.extra_mca},
       {"extra_env", r.extra_env},
       {"only_runs", r.only_runs}};
}

void from_json(const nlohmann::json& j, BenchmarkRequest& r) {
  r.tag = j.at("tag").get<std::string>();
  auto c = parse_collective(j.at("collective").get<std::string>());
  if (!c) throw std::invalid_argument("unknown collective in request");
  r.collective = *c;
  r.comm_size = j.at("comm_size").get<int>();
  r.nodes = j.value("nodes", 1);
  r.ppn = j.value("ppn", 0);
  r.min_size = j.at("min_size").get<std::int64_t>();
  r.max_size = j.at("max_size").get<std::int64_t>();
  r.iterations = j.at("iterations").get<int>();
  r.warmup = j.at("warmup").get<int>();
  r.configs = j.at("configs").get<std::vector<TuningConfig>>();
  r.repeats = j.at("repeats").get<int>();
  r.order_seed = j.value("order_seed", std::uint64_t{0});
  r.alternating = j.value("alternating", false);
  r.run_timeout_s = j.value("run_timeout_s", 120.0);
  r.extra_mca = j.value("extra_mca", std::map<std::string, std::string>{});
  r.extra_env = j.value("extra_env", std::map<std::string, std::string>{});
  r.only_runs = j.value("only_runs", std::vector<std::pair<std::size_t, int>>{});
}

}  // namespace colltune
