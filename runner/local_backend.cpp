#include "runner/local_backend.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <stdexcept>

#include "core/host_name.h"
#include "core/install_layout.h"
#include "core/iso_time.h"
#include "osu/osu_command.h"
#include "runner/mca.h"
#include "runner/mpirun_command.h"
#include "runner/ompi_info.h"
#include "runner/ompi_scratch.h"
#include "runner/process.h"

namespace colltune {

std::filesystem::path LocalBackend::bundled_osu_dir() { return install_layout::osu_bench_dir(); }

LocalBackend::LocalBackend(LocalBackendOptions options)
    : options_(std::move(options)), host_(this_host_name()) {
  if (options_.osu_dir.empty()) options_.osu_dir = bundled_osu_dir();
  if (options_.cores <= 0) options_.cores = available_cores();
  if (options_.max_ranks_per_core < 1)
    throw std::invalid_argument("local backend: max_ranks_per_core must be at least 1");
  if (options_.ompi_temp_base.empty()) options_.ompi_temp_base = OmpiScratch::default_temp_base();
  if (options_.ompi_shm_base.empty()) options_.ompi_shm_base = OmpiScratch::default_shm_base();
  // Runs of an earlier process killed mid-run (a daemon's crash) left theirs.
  sweep_once(options_.ompi_temp_base, options_.ompi_shm_base);
}

void LocalBackend::sweep_once(const std::filesystem::path& temp, const std::filesystem::path& shm) {
  const std::lock_guard lock(swept_mutex_);
  if (swept_.emplace(temp, shm).second) OmpiScratch::sweep_orphans(temp, shm);
}

std::string LocalBackend::ompi_version() {
  if (!ompi_version_) ompi_version_ = query_ompi_version(options_.ompi_info);
  return *ompi_version_;
}

std::string LocalBackend::ompi_info_parsable() {
  return query_coll_tuned_params(options_.ompi_info);
}

BackendInfo LocalBackend::describe() {
  BackendInfo info;
  info.backend = name();
  info.host = host_;
  info.ompi_version = ompi_version();
  info.cores = options_.cores;
  info.benchmark = options_.osu_dir.string();
  info.extra = {{"osu_dir", options_.osu_dir.string()},
                {"mpirun", options_.mpirun},
                {"max_ranks_per_core", options_.max_ranks_per_core}};
  return info;
}

void classify_osu_run(const ProcessResult& process, RunResult& result) {
  auto parsed = parse_osu_output(process.stdout_text, process.stderr_text);
  result.rows = parsed.output.rows;
  result.provenance.benchmark =
      parsed.output.benchmark.empty()
          ? std::string()
          : parsed.output.benchmark +
                (parsed.output.version.empty() ? "" : " v" + parsed.output.version);
  result.provenance.exit_status = process.status_code();
  result.provenance.stderr_excerpt = tail_lines(process.stderr_text);
  if (!process.spawn_error.empty()) {
    result.outcome = RunOutcome::failed;
    result.error = process.spawn_error;
  } else if (process.stopped) {
    result.outcome = RunOutcome::cancelled;
    result.error = "cancelled while running";
  } else if (process.timed_out) {
    result.outcome = RunOutcome::timeout;
    result.error =
        "killed after " + std::to_string(static_cast<int>(process.elapsed_s)) + " s (run timeout)";
  } else if (process.status_code() != 0) {
    result.outcome = RunOutcome::failed;
    result.error = "exit status " + std::to_string(process.status_code());
    if (parsed.error)
      result.error += ": " + parsed.error->message;
    else if (!result.provenance.stderr_excerpt.empty())
      result.error += ": " + tail_lines(process.stderr_text, 3, 400);
  } else if (parsed.error) {
    const auto kind = parsed.error->kind;
    result.outcome = (kind == OsuErrorKind::mpi_error || kind == OsuErrorKind::benchmark_error ||
                      kind == OsuErrorKind::validation_failed)
                         ? RunOutcome::failed
                         : RunOutcome::parse_error;
    result.error = std::string(to_string(kind)) + " at line " + std::to_string(parsed.error->line) +
                   ": " + parsed.error->message;
  } else if (result.rows.empty()) {
    result.outcome = RunOutcome::parse_error;
    result.error = "benchmark printed no measurement";
  } else {
    result.outcome = RunOutcome::ok;
  }
}

bool LocalBackend::first_warning(Collective collective, int comm_size) {
  std::lock_guard lock(warned_mutex_);
  return warned_.emplace(collective, comm_size).second;
}

std::string LocalBackend::admit(const BenchmarkRequest& request) {
  if (request.nodes != 1)
    return "the local backend runs on one node (got nodes = " + std::to_string(request.nodes) + ")";
  const long long limit = static_cast<long long>(options_.cores) * options_.max_ranks_per_core;
  if (request.comm_size > limit)
    return std::to_string(request.comm_size) + " ranks on " + std::to_string(options_.cores) +
           " core(s) is more than the local backend's limit of " +
           std::to_string(options_.max_ranks_per_core) + " ranks per core (" +
           std::to_string(limit) + " ranks; setting max_ranks_per_core)";
  // Within the limit, but said: oversubscribed ranks share cores, so latencies are slower and
  // noisier than on a core per rank, and the tuned choice fits this oversubscription, not the
  // cluster. Once per (collective, ranks) and backend.
  if (request.comm_size > options_.cores && first_warning(request.collective, request.comm_size))
    spdlog::warn(
        "{} {} ranks on {} core(s): the local backend oversubscribes (ranks share cores and "
        "yield when idle); latencies are slower and noisier than with a core per rank",
        colltune::name(request.collective), request.comm_size, options_.cores);
  return missing_benchmark(request.collective);
}

std::string LocalBackend::missing_benchmark(Collective collective) const {
  if (find_osu_binary(options_.osu_dir, collective)) return {};
  const std::string name(colltune::name(collective));
  return "no osu_" + name + " under " + options_.osu_dir.string() +
         ": the local backend cannot benchmark " + name;
}

std::string LocalBackend::preflight(const BenchmarkRequest& request) {
  if (std::string problem = request_problem(request); !problem.empty()) return problem;
  if (std::string missing = missing_benchmark(request.collective); !missing.empty()) return missing;
  if (!find_in_path(options_.mpirun)) return "mpirun not found: " + options_.mpirun;
  return osu_benchmark_problem(osu_probe_, options_.osu_dir, request, "local");
}

void LocalBackend::run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) {
  validate_request(request);
  if (request.nodes != 1)
    throw std::invalid_argument(
        "the local backend runs on one node (got nodes = " + std::to_string(request.nodes) + ")");
  auto binary = find_osu_binary(options_.osu_dir, request.collective);
  const std::string version = ompi_version();

  std::vector<std::string> osu_argv;
  if (binary) osu_argv = osu_probe_.command(*binary, osu_options_for(request));

  MpirunSettings settings;
  settings.mpirun = options_.mpirun;
  settings.np = request.comm_size;
  settings.oversubscribe = request.comm_size > options_.cores;
  settings.yield_when_idle = settings.oversubscribe;
  settings.allow_run_as_root = ::geteuid() == 0;
  settings.extra_args = options_.mpirun_extra_args;

  const auto unset = interfering_environment();
  for (const auto& [index, repeat] : run_order(request)) {
    RunResult result;
    result.tag = request.tag;
    result.config_index = index;
    result.config = request.configs[index];
    result.repeat = repeat;
    result.provenance.backend = name();
    result.provenance.host = host_;
    result.provenance.ompi_version = version;

    if (!binary) {
      result.outcome = RunOutcome::failed;
      result.error = "no osu_" + std::string(colltune::name(request.collective)) + " under " +
                     options_.osu_dir.string();
      sink.on_result(result);
      continue;
    }
    if (cancel.cancelled()) {
      result.outcome = RunOutcome::cancelled;
      result.error = "cancelled before it started";
      sink.on_result(result);
      continue;
    }

    auto mca = mca_for_config(request.collective, result.config);
    for (const auto& [k, v] : request.extra_mca) mca[k] = v;
    auto launch = mpirun_launch(settings, mca, request.extra_env, osu_argv);
    result.provenance.argv = launch.argv;
    result.provenance.mca = launch.mca;
    result.provenance.env = launch.env;

    ProcessOptions process_options;
    process_options.env = launch.env;
    process_options.unset_env = unset;
    process_options.timeout_s = request.run_timeout_s;
    process_options.should_stop = [&cancel] { return cancel.cancelled(); };
    process_options.kill_leftovers = true;  // ranks must not outlive their mpirun
    // Removed when this iteration ends: run_process has killed the launch's whole session then.
    // Under the folders the request's own environment names, if it names them.
    // A base of the request's own may hold the folders of an earlier process killed mid-run on
    // it (a daemon's crash): swept on first use, as the backend's own are when it is made.
    const auto temp_base = OmpiScratch::temp_base_in(launch.env, options_.ompi_temp_base);
    const auto shm_base = OmpiScratch::shm_base_in(launch.env, options_.ompi_shm_base);
    sweep_once(temp_base, shm_base);
    const OmpiScratch scratch(temp_base, shm_base);
    for (auto& [name, value] : scratch.environment()) process_options.env[name] = value;

    result.provenance.start_time = unix_time_now();
    auto process = run_process(launch.argv, process_options);
    result.provenance.end_time = unix_time_now();
    classify_osu_run(process, result);
    if (process.leftovers_killed > 0 || process.survivors > 0)
      spdlog::warn("local run {}: {} process(es) outlived mpirun and were killed, {} survived",
                   request.tag, process.leftovers_killed, process.survivors);
    if (result.outcome != RunOutcome::ok)
      spdlog::debug("local run {} {} repeat {}: {} ({})", colltune::name(request.collective),
                    to_string(result.config), repeat, to_string(result.outcome), result.error);
    sink.on_result(result);
  }
}

}  // namespace colltune
