// Quoting and validation of every value that goes into a generated Slurm batch script, so that
// no user text is ever interpreted by the shell or by sbatch's directive parser.
#pragma once

#include <string>
#include <string_view>

namespace colltune::slurm {

// The value as one shell word: wrapped in single quotes, each ' written as '\''. Safe for any
// byte string without NUL (sh and bash); the empty string becomes ''.
std::string shell_quote(std::string_view value);

// True for partition, account and QoS names: [A-Za-z0-9_.-]+ (no leading '-').
bool is_valid_slurm_name(std::string_view name);

// True for an environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool is_shell_identifier(std::string_view name);

// True for a path that can go into an #SBATCH directive unquoted: absolute and made of
// [A-Za-z0-9_./+,=@%:-] only (sbatch splits directives at spaces and has its own quoting).
bool is_directive_safe_path(std::string_view path);

// `text` with every character outside [A-Za-z0-9_.-] replaced by '_', cut to max_length
// (for job names built from user-chosen tags).
std::string sanitize_name(std::string_view text, std::size_t max_length = 64);

// Throws std::invalid_argument("<what> '<name>' ...") unless is_valid_slurm_name(name).
void require_valid_slurm_name(std::string_view what, std::string_view name);

}  // namespace colltune::slurm
