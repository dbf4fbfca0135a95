// Asks an installed OSU benchmark binary what it accepts, once per binary, and checks that it
// takes the exact arguments colltune will give it before any run is spent (a real OMB 7.0
// rejects `-T`, which later 7.x accept: the version alone cannot tell).
//
// The binary runs alone, as a singleton MPI process without mpirun: `-v` (version line), `-h`
// (option list), then the real arguments, which OSU parses before it notices that it is alone
// ("This test requires at least two processes") and rejects with its own bad-usage message
// ("Invalid Option [-T]") when it does not take them.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "osu/osu_command.h"
#include "runner/backend.h"
#include "runner/process.h"

namespace colltune {

// The OSU options of a batch (every size of its range, full output), as every backend that runs
// real OSU binaries passes them.
OsuOptions osu_options_for(const BenchmarkRequest& request);

struct OsuArgumentCheck {
  bool rejected = false;  // the benchmark refused the arguments: `message` is its own reason
  bool unknown = false;   // the probe could not tell (cannot start here, MPI init failed, ...)
  std::string message;    // the reason (rejected) or what went wrong (unknown)
};

class OsuProbe {
 public:
  // `base`: environment of the probe runs (interfering OMPI_MCA_coll* variables are removed).
  explicit OsuProbe(ProcessOptions base = {});

  // The binary's capabilities from `-h` and `-v` (falling back to the version literal inside
  // the binary when `-v` prints nothing). Cached per path and modification time.
  OsuCapabilities capabilities(const std::filesystem::path& binary);

  // `binary` followed by the arguments for `options` on that binary.
  std::vector<std::string> command(const std::filesystem::path& binary, const OsuOptions& options);

  // Runs the binary alone with exactly the arguments of `command` (cached per argument list).
  OsuArgumentCheck check(const std::filesystem::path& binary, const OsuOptions& options);

 private:
  std::string cache_key(const std::filesystem::path& binary) const;

  ProcessOptions base_;
  std::mutex mutex_;
  std::map<std::string, OsuCapabilities> capabilities_;
  std::map<std::string, OsuArgumentCheck> checks_;
};

// The benchmark part of a backend's preflight, shared by the backends that run real OSU
// binaries: "" when `osu_dir` holds the batch's binary and it takes the batch's arguments, else
// the reason (no binary, or the benchmark's own message). A probe that cannot tell is logged as
// a warning prefixed with `backend` and not refused.
std::string osu_benchmark_problem(OsuProbe& probe, const std::filesystem::path& osu_dir,
                                  const BenchmarkRequest& request, const std::string& backend);

}  // namespace colltune
