#include "runner/osu_probe.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <system_error>

#include "osu/osu_output.h"
#include "runner/mpirun_command.h"

namespace colltune {
namespace {

constexpr double kProbeTimeoutS = 60;

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

OsuOptions osu_options_for(const BenchmarkRequest& request) {
  OsuOptions osu;
  osu.collective = request.collective;
  osu.min_size = request.min_size;
  osu.max_size = request.max_size;
  osu.iterations = request.iterations;
  osu.warmup = request.warmup;
  osu.full = true;
  return osu;
}

OsuProbe::OsuProbe(ProcessOptions base) : base_(std::move(base)) {
  for (auto& name : interfering_environment()) base_.unset_env.push_back(name);
  base_.timeout_s = kProbeTimeoutS;
  base_.should_stop = nullptr;
  base_.kill_leftovers = true;
}

std::string OsuProbe::cache_key(const std::filesystem::path& binary) const {
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(binary, ec);
  return binary.string() + "@" +
         (ec ? std::string("?") : std::to_string(mtime.time_since_epoch().count()));
}

OsuCapabilities OsuProbe::capabilities(const std::filesystem::path& binary) {
  const std::string key = cache_key(binary);
  {
    std::lock_guard lock(mutex_);
    if (auto it = capabilities_.find(key); it != capabilities_.end()) return it->second;
  }
  const auto help = run_process({binary.string(), "-h"}, base_);
  const auto version = run_process({binary.string(), "-v"}, base_);
  OsuCapabilities caps = parse_osu_capabilities(help.stdout_text, version.stdout_text);
  if (!caps.major) caps.major = detect_omb_major_version(binary);
  if (!caps.help_read())
    spdlog::warn(
        "{}: no option list from -h ({}); assuming by version {}", binary.string(),
        help.spawn_error.empty() ? "exit " + std::to_string(help.status_code()) : help.spawn_error,
        caps.version.empty() ? "unknown" : caps.version);
  std::lock_guard lock(mutex_);
  capabilities_[key] = caps;
  return caps;
}

std::vector<std::string> OsuProbe::command(const std::filesystem::path& binary,
                                           const OsuOptions& options) {
  std::vector<std::string> argv{binary.string()};
  for (auto& a : osu_arguments(options, capabilities(binary))) argv.push_back(std::move(a));
  return argv;
}

OsuArgumentCheck OsuProbe::check(const std::filesystem::path& binary, const OsuOptions& options) {
  const std::vector<std::string> argv = command(binary, options);
  const std::string key = cache_key(binary) + " " + join(argv);
  {
    std::lock_guard lock(mutex_);
    if (auto it = checks_.find(key); it != checks_.end()) return it->second;
  }
  const auto run = run_process(argv, base_);
  OsuArgumentCheck check;
  const std::string shown = binary.filename().string() + " " +
                            join(std::vector<std::string>(argv.begin() + 1, argv.end()));
  if (!run.spawn_error.empty()) {
    check.unknown = true;
    check.message = run.spawn_error;
  } else if (auto bad = find_osu_bad_usage(run.stderr_text + "\n" + run.stdout_text)) {
    check.rejected = true;
    const std::string version =
        capabilities(binary).version.empty() ? "" : " (v" + capabilities(binary).version + ")";
    check.message = binary.string() + version + " rejects the arguments '" + shown + "': " + *bad;
  } else if (run.status_code() != 0 &&
             run.stderr_text.find("This test requires at least") == std::string::npos) {
    check.unknown = true;
    check.message = "'" + shown + "' alone ended with status " + std::to_string(run.status_code()) +
                    ": " + tail_lines(run.stderr_text, 3, 400);
  }
  std::lock_guard lock(mutex_);
  checks_[key] = check;
  return check;
}

std::string osu_benchmark_problem(OsuProbe& probe, const std::filesystem::path& osu_dir,
                                  const BenchmarkRequest& request, const std::string& backend) {
  const auto binary = find_osu_binary(osu_dir, request.collective);
  if (!binary)
    return "no osu_" + std::string(name(request.collective)) + " under " + osu_dir.string();
  // The benchmark must take the arguments every run will give it: one singleton run now,
  // instead of every run of the campaign failing on "Invalid Option".
  const OsuArgumentCheck check = probe.check(*binary, osu_options_for(request));
  if (check.rejected) return check.message;
  if (check.unknown)
    spdlog::warn("{}: cannot check {} alone: {}", backend, binary->string(), check.message);
  return {};
}

}  // namespace colltune
