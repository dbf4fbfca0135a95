// What an OSU 5.6.2 collective latency run prints (stdout) and the command that would run it,
// for backends that do not run OSU (sim, replay) or that alter its output (fault injection).
// Their results then go through parse_osu_output like a real run's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective.h"
#include "core/tuning_config.h"
#include "osu/osu_output.h"
#include "runner/backend.h"

namespace colltune::sim {

// The sizes OSU 5.6.2 measures for `-m min:max`, as it prints them: doubling from min (from 1;
// reductions: count = min/4 floats, at least 1, printed as count*4 while count*4 <= max).
// Barrier: one row of size 0.
std::vector<std::int64_t> osu_message_sizes(Collective collective, std::int64_t min_size,
                                            std::int64_t max_size);

// OSU 5.6.2 stdout bytes: blank line, "# <title> v<version>", the column header, one line per
// row ("%-10d%18.2f" and, when `full`, "%18.2f%18.2f%12d"; barrier "%17.2f" without size).
// `full` needs min/max/iterations in every row.
std::string format_osu_output(Collective collective, const std::vector<OsuRow>& rows, bool full,
                              std::string_view version = "5.6.2");

// The command line of one OSU run: mpirun -np P --map-by ppr:PPN:node [--mca k v]... osu_<coll>
// -m MIN:MAX -i N -x N -f.
std::vector<std::string> osu_job_argv(const BenchmarkRequest& request,
                                      const std::map<std::string, std::string>& mca);

// Seconds one OSU run takes to measure these rows: launch overhead plus, per size,
// (iterations + warmup) x Avg latency.
double osu_run_seconds(const std::vector<OsuRow>& rows, int iterations, int warmup,
                       double launch_overhead_s);

// The Open MPI abort banner printed when a collective returns an error under
// MPI_ERRORS_ARE_FATAL (e.g. MPI_ERR_ARG for an unknown algorithm id).
std::string mpi_abort_banner(Collective collective, std::string_view error_class,
                             std::string_view error_text, std::string_view host);

}  // namespace colltune::sim
