#include "runner/slurm_backend.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/file_text.h"
#include "core/host_name.h"
#include "core/ompi_version.h"
#include "osu/osu_command.h"
#include "runner/local_backend.h"
#include "runner/mca.h"
#include "runner/mpirun_command.h"
#include "runner/ompi_info.h"
#include "runner/process.h"
#include "runner/slurm_batch.h"
#include "slurm/job_folder.h"
#include "slurm/shell_quote.h"
#include "slurm/slurm_output.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

fs::path default_job_root() {
  if (const char* root = std::getenv("COLLTUNE_SLURM_JOB_ROOT"); root && *root) return root;
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".colltune" / "slurm-jobs";
  return "/tmp/colltune-slurm-jobs";
}

// A unique folder name for one batch: the tag (sanitized), the time, the process and a counter.
std::string job_folder_name(const std::string& tag) {
  static std::atomic<unsigned> counter{0};
  char stamp[32] = {};
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::string base = slurm::sanitize_name(tag.empty() ? "batch" : tag, 48);
  return base + "-" + stamp + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
}
}  // namespace

slurm::CommandRunner process_command_runner() {
  return [](const std::vector<std::string>& argv, double timeout_s) {
    ProcessOptions options;
    options.timeout_s = timeout_s;
    options.max_output_bytes = 4 << 20;
    auto process = run_process(argv, options);
    slurm::CommandOutput out;
    out.exit_code = process.exit_code;
    out.stdout_text = std::move(process.stdout_text);
    out.stderr_text = std::move(process.stderr_text);
    out.timed_out = process.timed_out;
    out.spawn_error = std::move(process.spawn_error);
    return out;
  };
}

SlurmBackend::SlurmBackend(SlurmBackendOptions options)
    : options_(std::move(options)),
      client_(options_.commands, process_command_runner(), options_.command_timeout_s),
      host_(this_host_name()) {
  auto optional_name = [](std::string_view what, const std::string& value) {
    if (!value.empty()) slurm::require_valid_slurm_name(what, value);
  };
  optional_name("partition", options_.partition);
  optional_name("account", options_.account);
  optional_name("QoS", options_.qos);
  if (!slurm::is_valid_slurm_name(options_.srun_mpi))
    throw std::invalid_argument("srun --mpi value '" + options_.srun_mpi + "' is not valid");
  if (options_.attempts < 1) throw std::invalid_argument("attempts must be at least 1");
  if (options_.max_resubmits < 0) throw std::invalid_argument("max resubmits must not be negative");
  if (!(options_.poll_initial_s > 0)) throw std::invalid_argument("poll interval must be positive");
  if (options_.osu_dir.empty()) options_.osu_dir = LocalBackend::bundled_osu_dir();
  if (options_.job_root.empty()) options_.job_root = default_job_root();
  options_.job_root = fs::absolute(options_.job_root).lexically_normal();
  if (!slurm::is_directive_safe_path(options_.job_root.string()))
    throw std::invalid_argument("Slurm job root '" + options_.job_root.string() +
                                "' must be an absolute path of letters, digits and _ . / + , = @ "
                                "% : - only (it goes into #SBATCH directives)");
  if (options_.script_template.empty()) {
    template_text_ = std::string(slurm::default_batch_template());
  } else {
    auto text = read_file_text(options_.script_template);
    if (!text)
      throw std::invalid_argument("cannot read batch template " +
                                  options_.script_template.string());
    template_text_ = std::move(*text);
  }
  slurm::validate_batch_template(template_text_);
}

std::string SlurmBackend::local_ompi_version() {
  if (!ompi_version_) ompi_version_ = query_ompi_version(options_.ompi_info);
  return *ompi_version_;
}

std::string SlurmBackend::ompi_info_parsable() {
  return query_coll_tuned_params(options_.ompi_info);
}

bool SlurmBackend::controller_up(std::string* detail) { return client_.ping(detail); }

BackendInfo SlurmBackend::describe() {
  BackendInfo info;
  info.backend = name();
  info.host = host_;
  info.ompi_version = local_ompi_version();
  info.benchmark = options_.osu_dir.string();
  std::string ping_detail;
  const bool up = client_.ping(&ping_detail);
  nlohmann::json nodes = nlohmann::json::array();
  std::string error;
  if (up) {
    if (auto list = client_.nodes(options_.partition, &error)) {
      for (const auto& n : *list) {
        nodes.push_back(
            {{"name", n.name}, {"state", n.state}, {"cpus", n.cpus}, {"reason", n.reason}});
        if (info.cores == 0) info.cores = n.cpus;
      }
    }
  }
  info.extra = {{"controller_up", up},
                {"controller", ping_detail},
                {"partition", options_.partition},
                {"launcher", std::string(to_string(options_.launcher))},
                {"job_root", options_.job_root.string()},
                {"osu_dir", options_.osu_dir.string()},
                {"nodes", nodes}};
  if (!error.empty()) info.extra["error"] = error;
  return info;
}

std::string SlurmBackend::admit(const BenchmarkRequest& request) {
  if (!find_osu_binary(options_.osu_dir, request.collective))
    return "no osu_" + std::string(colltune::name(request.collective)) + " under " +
           options_.osu_dir.string() + ": the slurm backend cannot benchmark " +
           std::string(colltune::name(request.collective));
  // More nodes than the partition has would wait in the queue forever (whole-cluster campaigns
  // name many layouts at once: refuse them before anything is submitted).
  if (request.nodes > 1 && !partition_nodes_asked_) {
    partition_nodes_asked_ = true;
    if (auto nodes = client_.nodes(options_.partition)) {
      std::set<std::string> names;
      for (const auto& n : *nodes) names.insert(n.name);
      partition_nodes_ = names.size();
    }
  }
  if (partition_nodes_ && static_cast<std::size_t>(request.nodes) > *partition_nodes_)
    return std::to_string(request.nodes) + " nodes asked, but the " +
           (options_.partition.empty() ? std::string("cluster (sinfo)")
                                       : "partition '" + options_.partition + "'") +
           " has " + std::to_string(*partition_nodes_);
  return {};
}

std::string SlurmBackend::preflight(const BenchmarkRequest& request) {
  if (std::string problem = request_problem(request); !problem.empty()) return problem;
  // Checked on the submitting host: a binary that cannot start here is only warned about.
  return osu_benchmark_problem(osu_probe_, options_.osu_dir, request, "slurm");
}

void SlurmBackend::run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) {
  validate_request(request);
  if (request.nodes > request.comm_size)
    throw std::invalid_argument("more nodes (" + std::to_string(request.nodes) + ") than ranks (" +
                                std::to_string(request.comm_size) + ")");
  for (const auto& [k, v] : request.extra_env)
    if (!slurm::is_shell_identifier(k))
      throw std::invalid_argument("environment variable name '" + k + "' is not valid");
  for (const auto& [k, v] : request.extra_mca)
    if (!slurm::is_shell_identifier(k))
      throw std::invalid_argument("MCA parameter name '" + k + "' is not valid");

  const std::string version = local_ompi_version();
  auto binary = find_osu_binary(options_.osu_dir, request.collective);
  std::vector<std::string> osu_argv;
  if (binary) osu_argv = osu_probe_.command(*binary, osu_options_for(request));

  auto fail_all = [&](const std::string& error) {
    for (const auto& [index, repeat] : run_order(request)) {
      RunResult result;
      result.tag = request.tag;
      result.config_index = index;
      result.config = request.configs[index];
      result.repeat = repeat;
      result.outcome = RunOutcome::failed;
      result.error = error;
      result.provenance.backend = name();
      result.provenance.host = host_;
      result.provenance.ompi_version = version;
      sink.on_result(result);
    }
  };
  if (!binary) {
    fail_all("no osu_" + std::string(colltune::name(request.collective)) + " under " +
             options_.osu_dir.string());
    return;
  }

  std::error_code ec;
  const fs::path job_dir =
      request.recorded_at > 0
          ? slurm::recorded_job_folder(options_.job_root, request.tag, request.recorded_at)
          : options_.job_root / job_folder_name(request.tag);
  if (!request.resume && fs::exists(job_dir, ec)) {
    // A fresh call must not mistake an earlier call's files for its own results.
    const fs::path aside = job_dir.string() + ".old-" + job_folder_name("");
    spdlog::warn("slurm: batch {}: moving the existing folder {} aside to {}", request.tag,
                 job_dir.string(), aside.string());
    fs::rename(job_dir, aside, ec);
    if (ec) {
      fail_all("cannot move the earlier Slurm job folder " + job_dir.string() +
               " aside: " + ec.message());
      return;
    }
  }
  fs::create_directories(job_dir / slurm::kRunsSubdir, ec);
  if (ec) {
    fail_all("cannot create the Slurm job folder " + job_dir.string() + ": " + ec.message());
    return;
  }
  last_job_dir_ = job_dir;

  const bool all_ok = run_slurm_batch(options_, template_text_, client_, request, sink, cancel,
                                      job_dir, version, osu_argv);
  if (all_ok && !options_.keep_job_dirs) fs::remove_all(job_dir, ec);
}

}  // namespace colltune
