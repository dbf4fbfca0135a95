// Subcommands of the colltune binary. Each add_* registers its options and callback.
#pragma once

#include <CLI/CLI.hpp>

namespace colltune {

void add_tune_command(CLI::App& app);

}  // namespace colltune
