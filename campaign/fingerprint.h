// What a rules file depends on, as a JSON document: the Open MPI version and its coll_tuned
// algorithm table, the coll components that compete with tuned and their priorities, the OSU
// benchmark, the nodes (Slurm partition) and per distinct node type its CPU and hwloc topology,
// the kernel and the network stack (verbs devices, UCX, libfabric). A rules version stores the
// fingerprint it was tuned under; `colltune retune --if-changed` compares it with the current
// one and re-tunes on a relevant difference.
//
// Collection runs commands through a CommandRunner, so that the same code reads this machine
// (local_command_runner), the nodes of a Slurm partition (srun_command_runner) or recorded
// outputs (recorded_command_runner: real text captured once, used by the tests). A command that
// is missing or fails leaves its fields "unknown" (listed under "unknown" with the reason);
// collection itself never fails.
//
// Layout (every key always present; values "unknown" when they could not be read):
//   {"schema": 1, "collected_at": <unix s>, "collected_on": <host>,
//    "open_mpi": {"version"}, "coll_tuned": {"algorithms": {"bcast": {"1": "basic_linear"..}..}},
//    "coll_components": {"tuned": {"priority": 30, "active": true}, ...},
//    "coll_selection": <value of the "coll" MCA parameter>, "tuned_preempted_by": [..],
//    "osu": {"path", "version"},
//    "cluster": {"scheduler": "slurm"|"none", "partition", "node_count", "nodes": {name: type}},
//    "node_types": {<type>: {"nodes", "cpus", "sockets_cores_threads", "cpu_model",
//                            "memory_mb", "features", "topology": {..}, "kernel"}},
//    "network": {"ibverbs": {..}, "ucx": {..}, "libfabric": {..},
//                "interfaces": {<name>: {"mtu", "link"}}},   (of the first node type's sample)
//    "unknown": {<field>: <reason>}, "hash": <hex>}
// The hash covers the relevant fields only (is_relevant_field), so that two fingerprints with
// the same hash describe the same tuning conditions.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/backend.h"

namespace colltune {

// The value of a field that could not be read (the reason is under "unknown", by field path).
inline constexpr const char* kFingerprintUnknown = "unknown";

// What one command printed. `found` is false when the program does not exist (or was not
// recorded); `exit_code` is the exit status (128 + signal when killed).
struct CommandOutput {
  bool found = true;
  int exit_code = 0;
  std::string stdout_text;
  std::string stderr_text;
  std::string error;  // why it could not run (not found, timeout)

  bool ok() const { return found && exit_code == 0 && error.empty(); }
  // A one-line reason for a failure: the error, else the last line of stderr, else the status.
  std::string failure() const;
};

// Runs `argv` on `node` ("" = where colltune runs).
using CommandRunner =
    std::function<CommandOutput(const std::vector<std::string>& argv, const std::string& node)>;

// Runs commands here (any node name is taken as this machine), through run_process (argv,
// never a shell), each with a timeout.
CommandRunner local_command_runner(double timeout_s = 60);

// Runs commands for a named node through `srun -N1 -n1 -w NODE [-p PARTITION] --quiet --`,
// and those for node "" here.
CommandRunner srun_command_runner(const std::string& partition, double timeout_s = 120);

// Answers from recorded outputs. Each folder holds manifest.json:
//   {"commands": [{"argv": ["ompi_info", "--version"], "stdout": "file.txt",
//                  "stderr": "file.err" (optional), "exit_code": 0, "node": "n1" (optional),
//                  "missing": true (optional: the program does not exist)}]}
// A recorded argv[0] without '/' matches any path with that base name; an entry without "node"
// matches every node. Folders are searched in order (later folders overlay earlier ones: list
// the overlay first). A command recorded nowhere is "not found". Throws std::runtime_error for
// an unreadable manifest.
CommandRunner recorded_command_runner(const std::vector<std::filesystem::path>& folders);

struct FingerprintOptions {
  std::string ompi_info = "ompi_info";
  std::filesystem::path osu_dir;  // folder of osu_bcast; empty = not recorded
  // "auto": use Slurm when sinfo answers; "slurm": Slurm expected (its failure is unknown);
  // "none": this machine only.
  std::string scheduler = "auto";
  std::string partition;    // Slurm partition; empty = the default one
  double collected_at = 0;  // 0 = now
};

// `ip -o link show` -> the interfaces that are up, loopback excluded: {name: {"mtu", "link"}}
// (link: "ether", "infiniband", ...). Lines it cannot read are skipped.
nlohmann::json parse_ip_links(const std::string& text);

// Collects the fingerprint (see the layout above), with its hash.
nlohmann::json collect_fingerprint(const CommandRunner& run, const FingerprintOptions& options);

// The fingerprint of a backend that runs a model instead of a machine (sim, replay): what the
// backend says of itself (describe()). Same layout; the model's identity is under "model".
nlohmann::json model_fingerprint(const BackendInfo& info);

// SHA-256 (hex) over the relevant, known fields of a fingerprint.
std::string fingerprint_hash(const nlohmann::json& fingerprint);

// Fields whose change invalidates tuned rules: the Open MPI version, the algorithm table, the
// coll components and their priorities, the node count and node types (CPU, topology,
// features), the network. Not: collection time, host, kernel, memory size, OSU, node names.
bool is_relevant_field(const std::string& path);

struct FingerprintChange {
  std::string field;      // dotted path, e.g. "open_mpi.version", "node_types.x.cpus"
  nlohmann::json before;  // null when the field was added
  nlohmann::json after;   // null when the field was removed
  bool relevant = false;  // relevant field, and both sides known
};

// The fields that differ, sorted by path. A difference where either side is "unknown" is never
// relevant (nothing can be said; a temporarily missing tool must not trigger a re-tune).
std::vector<FingerprintChange> diff_fingerprints(const nlohmann::json& before,
                                                 const nlohmann::json& after);
bool any_relevant(const std::vector<FingerprintChange>& changes);

// One line per change: "open_mpi.version: 4.1.4 -> 4.1.6" (+ " (not relevant)").
std::string format_changes(const std::vector<FingerprintChange>& changes);
nlohmann::json changes_json(const std::vector<FingerprintChange>& changes);

// A human summary of a fingerprint (a few lines).
std::string format_fingerprint(const nlohmann::json& fingerprint);

}  // namespace colltune
