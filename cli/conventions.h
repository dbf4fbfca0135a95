// The conventions every colltune subcommand follows, in one place: the names of the shared
// options (--db, --backend-config and its deprecated spellings), the exit codes and their
// --help footer, and the checks on a store that must already exist.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace colltune {

// Exit codes shared by every command (docs/cli.md). Command-specific codes (3, 4, 10, 11 ...)
// are listed in each command's --help footer.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // an error, with a message on stderr
inline constexpr int kExitUsage = 64;   // bad command line (unknown option, invalid value)
inline constexpr int kExitBackendUnavailable = 69;  // the backend cannot be reached
inline constexpr int kExitInterrupted = 130;

// Thrown when the backend cannot be reached at all (no Slurm controller): exit 69.
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Sets `cmd`'s --help footer to its exit codes: `specific` (code, meaning), then the shared
// ones (1, 64). A command that can be interrupted passes `interruptible`.
void set_exit_codes(CLI::App* cmd, std::vector<std::pair<int, std::string>> specific,
                    bool interruptible = false);

// `--db FILE` (the SQLite store) with `default_path` shown in --help.
CLI::Option* add_db_option(CLI::App* cmd, std::string& db, const std::string& what);

// `--backend-config FILE|JSON`: backend settings as a JSON file, or an inline JSON object
// (a value starting with '{'). Also registers the older spellings (--backend-settings) as hidden
// aliases that warn on stderr and set the same value. Returns the main option.
CLI::Option* add_backend_config_option(CLI::App* cmd, std::string& value);

// Whether the command line gave --backend-config (under any spelling).
bool backend_config_given(const CLI::App* cmd);

// The settings `value` names: {} when empty, the parsed object otherwise. Throws
// std::runtime_error naming the file or the inline text when it is not a JSON object.
nlohmann::json read_backend_config(const std::string& value);

// Throws std::runtime_error("no store at PATH ...") when `db` does not exist, before anything
// would create it (commands that only read a store).
void require_existing_db(const std::string& db);

}  // namespace colltune
