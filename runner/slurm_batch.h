// One batch on Slurm (internal to the Slurm backend, runner/slurm_backend.cpp): plans the runs
// of a request, writes and submits the batch script, follows the job through squeue/sacct,
// collects each run's files, resubmits what a lost job left unfinished, and reports every run
// to the sink exactly once. Also re-attaches to the job of a resumed batch.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/backend.h"
#include "runner/slurm_backend.h"
#include "slurm/slurm_client.h"

namespace colltune {

// Runs `request` in `job_dir` (created by the caller) with the OSU command `osu_argv`; the
// script comes from `template_text`. `fallback_ompi_version` is reported when a run's own files
// do not name the version. Returns true when every run was reported ok.
bool run_slurm_batch(const SlurmBackendOptions& options, const std::string& template_text,
                     slurm::SlurmClient& client, const BenchmarkRequest& request, RunSink& sink,
                     const CancelFlag& cancel, const std::filesystem::path& job_dir,
                     const std::string& fallback_ompi_version,
                     const std::vector<std::string>& osu_argv);

}  // namespace colltune
