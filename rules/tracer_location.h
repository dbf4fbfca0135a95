// Where the algorithm tracer (libcolltune_tracer.so, rules/tracer/colltune_tracer.c) is, and
// the environment that activates it in MPI ranks.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace colltune {

// The tracer for LD_PRELOAD, first that exists of: $COLLTUNE_TRACER; the one of the install
// layout (core/install_layout.h: <root>/<libdir>/colltune/libcolltune_tracer.so, installed or
// mirrored in the build tree).
std::optional<std::filesystem::path> tracer_library_path();

// Environment for every rank: LD_PRELOAD=<tracer>, COLLTUNE_TRACE_DIR=<trace_dir> (each rank
// writes trace.<pid>.<rank> there at MPI_Finalize). Throws std::runtime_error when the tracer
// cannot be found.
std::map<std::string, std::string> tracer_environment(const std::filesystem::path& trace_dir);

}  // namespace colltune
