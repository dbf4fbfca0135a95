// The colltune command tree: every subcommand, its options and callbacks, on one CLI::App.
// main.cpp parses argv with it; colltune-docgen (cli/docgen_main.cpp) walks the same tree to
// write the man pages and the bash completion, so they cannot drift from `--help`.
#pragma once

#include <CLI/CLI.hpp>

namespace colltune {

// Adds the global options (-v, --version) and every subcommand to `app`, which must be empty.
void configure_app(CLI::App& app);

}  // namespace colltune
