// The command runners of the fingerprint probes: this machine, a Slurm node through srun, and
// recorded outputs (tests and offline analysis).
#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "campaign/fingerprint.h"
#include "core/file_text.h"
#include "core/text.h"
#include "runner/process.h"

namespace colltune {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string read_manifest_file(const fs::path& path) {
  auto text = read_file_text(path);
  if (!text) throw std::runtime_error("cannot read " + path.string());
  return std::move(*text);
}

}  // namespace

// ---- Runners -------------------------------------------------------------------------------

std::string CommandOutput::failure() const {
  if (!found) return error.empty() ? "not found" : error;
  if (!error.empty()) return error;
  const auto lines = lines_of(stderr_text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!trim_copy(*it).empty())
      return trim_copy(*it) + " (exit " + std::to_string(exit_code) + ")";
  return "exit status " + std::to_string(exit_code);
}

namespace {
CommandOutput from_process(const ProcessResult& r, const std::string& program, double timeout_s) {
  CommandOutput out;
  out.stdout_text = r.stdout_text;
  out.stderr_text = r.stderr_text;
  out.exit_code = r.status_code();
  if (!r.spawn_error.empty()) {
    out.found = false;
    out.error = program + ": not found (" + r.spawn_error + ")";
  } else if (r.timed_out) {
    out.error = "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s";
  }
  return out;
}

ProcessOptions command_options(double timeout_s) {
  ProcessOptions o;
  o.timeout_s = timeout_s;
  o.max_output_bytes = 4 << 20;
  // osu_bcast --version initialises MPI as a singleton; root needs these to be allowed.
  o.env = {
      {"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}, {"LC_ALL", "C"}};
  return o;
}
}  // namespace

CommandRunner local_command_runner(double timeout_s) {
  return [timeout_s](const std::vector<std::string>& argv, const std::string&) {
    if (argv.empty()) return CommandOutput{false, -1, "", "", "empty command"};
    if (argv[0].find('/') == std::string::npos && !find_in_path(argv[0]))
      return CommandOutput{false, 127, "", "", argv[0] + ": not found"};
    return from_process(run_process(argv, command_options(timeout_s)), argv[0], timeout_s);
  };
}

CommandRunner srun_command_runner(const std::string& partition, double timeout_s) {
  auto local = local_command_runner(timeout_s);
  return
      [partition, timeout_s, local](const std::vector<std::string>& argv, const std::string& node) {
        if (node.empty()) return local(argv, node);
        std::vector<std::string> full = {"srun", "-N1", "-n1", "-w", node, "--quiet"};
        if (!partition.empty()) full.insert(full.end(), {"-p", partition});
        full.push_back("--");
        full.insert(full.end(), argv.begin(), argv.end());
        auto out = from_process(run_process(full, command_options(timeout_s)), "srun", timeout_s);
        // srun reports a missing program as exit 2 with "execve(): ...: No such file".
        if (out.exit_code != 0 && out.stderr_text.find("No such file") != std::string::npos)
          out.found = false, out.error = argv[0] + ": not found on " + node;
        return out;
      };
}

CommandRunner recorded_command_runner(const std::vector<fs::path>& folders) {
  struct Entry {
    std::vector<std::string> argv;
    std::string node;
    bool any_node = true;
    CommandOutput output;
  };
  std::vector<Entry> entries;  // overlay folders first
  for (const auto& folder : folders) {
    const auto manifest = json::parse(read_manifest_file(folder / "manifest.json"), nullptr, false);
    if (manifest.is_discarded() || !manifest.contains("commands") ||
        !manifest["commands"].is_array())
      throw std::runtime_error((folder / "manifest.json").string() + ": not a command manifest");
    for (const auto& c : manifest["commands"]) {
      Entry e;
      e.argv = c.at("argv").get<std::vector<std::string>>();
      if (c.contains("node")) e.node = c["node"].get<std::string>(), e.any_node = false;
      e.output.exit_code = c.value("exit_code", 0);
      if (c.value("missing", false)) {
        e.output.found = false;
        e.output.exit_code = 127;
        e.output.error = e.argv.at(0) + ": not found";
      }
      if (c.contains("stdout"))
        e.output.stdout_text = read_manifest_file(folder / c["stdout"].get<std::string>());
      if (c.contains("stderr"))
        e.output.stderr_text = read_manifest_file(folder / c["stderr"].get<std::string>());
      entries.push_back(std::move(e));
    }
  }
  return [entries](const std::vector<std::string>& argv, const std::string& node) {
    for (const auto& e : entries) {
      if (e.argv.size() != argv.size() || argv.empty()) continue;
      const bool by_name = e.argv[0].find('/') == std::string::npos;
      const std::string program = by_name ? fs::path(argv[0]).filename().string() : argv[0];
      if (program != e.argv[0]) continue;
      if (!std::equal(e.argv.begin() + 1, e.argv.end(), argv.begin() + 1)) continue;
      if (!e.any_node && e.node != node) continue;
      return e.output;
    }
    return CommandOutput{false, 127, "", "",
                         argv.empty() ? "empty command" : argv[0] + ": not found"};
  };
}

}  // namespace colltune
