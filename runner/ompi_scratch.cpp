#include "runner/ompi_scratch.h"

#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

namespace colltune {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "colltune-ompi-";
constexpr const char* kOwnerFile = "owner";

// A process's start time in clock ticks since boot (field 22 of /proc/PID/stat): with the pid,
// it names the process even after the pid is reused. nullopt when there is no such process.
std::optional<unsigned long long> start_time(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  for (int i = 3; i < 22 && fields >> field; ++i) {
  }
  unsigned long long ticks = 0;
  if (!(fields >> ticks)) return std::nullopt;
  return ticks;
}

// "PID START" of this process.
std::string owner_text() {
  const long pid = static_cast<long>(::getpid());
  return std::to_string(pid) + " " + std::to_string(start_time(pid).value_or(0)) + "\n";
}

// Whether the owner named in `dir`'s owner file is gone; false when the file is missing or
// unreadable (not ours to judge).
bool owner_is_gone(const fs::path& dir) {
  std::ifstream in(dir / kOwnerFile);
  long pid = 0;
  unsigned long long ticks = 0;
  if (!(in >> pid >> ticks) || pid <= 0) return false;
  const auto now = start_time(pid);
  return !now || *now != ticks;
}

// mkdtemp under `base`; empty when it fails (logged).
fs::path make_own_directory(const fs::path& base, const char* what) {
  std::string pattern = (base / (std::string(kPrefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    spdlog::warn("cannot make Open MPI's {} directory under {}: {}; Open MPI's default is used",
                 what, base.string(), std::strerror(errno));
    return {};
  }
  return pattern;
}

bool remove_directory(const fs::path& dir) {
  if (dir.empty()) return false;
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) spdlog::warn("cannot remove Open MPI's scratch {}: {}", dir.string(), ec.message());
  return !ec;
}

}  // namespace

OmpiScratch::OmpiScratch(const fs::path& temp_base, const fs::path& shm_base) {
  session_base_ = make_own_directory(temp_base, "session");
  if (!session_base_.empty()) {
    std::ofstream(session_base_ / kOwnerFile) << owner_text();
  }
  std::error_code ec;
  if (shm_base.empty() || !fs::is_directory(shm_base, ec)) return;
  // The same name as the session's, so that a sweep finds both from the owner file.
  if (!session_base_.empty()) {
    const fs::path same = shm_base / session_base_.filename();
    if (::mkdir(same.c_str(), 0700) == 0) {
      shm_dir_ = same;
      return;
    }
  }
  shm_dir_ = make_own_directory(shm_base, "shared-memory");
}

OmpiScratch::~OmpiScratch() {
  remove_directory(session_base_);
  remove_directory(shm_dir_);
}

std::map<std::string, std::string> OmpiScratch::environment() const {
  std::map<std::string, std::string> env;
  // Open MPI 4.x names (orte, btl/vader, osc/sm) and 5.x names (PRRTE, btl/sm); a name the
  // installed version does not know is ignored by it.
  if (!session_base_.empty()) {
    env["OMPI_MCA_orte_tmpdir_base"] = session_base_.string();
    env["PRTE_MCA_prte_tmpdir_base"] = session_base_.string();
  }
  if (!shm_dir_.empty()) {
    env["OMPI_MCA_btl_vader_backing_directory"] = shm_dir_.string();
    env["OMPI_MCA_btl_sm_backing_directory"] = shm_dir_.string();
    env["OMPI_MCA_osc_sm_backing_directory"] = shm_dir_.string();
  }
  return env;
}

int OmpiScratch::sweep_orphans(const fs::path& temp_base, const fs::path& shm_base) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(temp_base, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path dir = it->path();
    if (dir.filename().string().rfind(kPrefix, 0) != 0 || !it->is_directory(ec)) continue;
    if (!owner_is_gone(dir)) continue;
    if (!shm_base.empty()) remove_directory(shm_base / dir.filename());
    removed += remove_directory(dir) ? 1 : 0;
  }
  if (removed > 0)
    spdlog::info("removed {} Open MPI scratch folder(s) of runs whose process had died", removed);
  return removed;
}

namespace {

constexpr const char* kTempBaseNames[] = {"OMPI_MCA_orte_tmpdir_base", "PRTE_MCA_prte_tmpdir_base"};
constexpr const char* kShmBaseNames[] = {"OMPI_MCA_btl_vader_backing_directory",
                                         "OMPI_MCA_btl_sm_backing_directory"};

// The first of `names` that `lookup` (a name -> its value, nullptr when unset) sets to an
// absolute path, as Open MPI would use it; `fallback` if none.
template <std::size_t N, typename Lookup>
fs::path first_absolute(const char* const (&names)[N], Lookup lookup, const fs::path& fallback) {
  for (const char* name : names) {
    const char* value = lookup(name);
    if (value != nullptr && fs::path(value).is_absolute()) return value;
  }
  return fallback;
}

// The same in this process's environment and in a launch's own.
template <std::size_t N>
fs::path named_in_process(const char* const (&names)[N]) {
  return first_absolute(names, [](const char* name) { return std::getenv(name); }, {});
}

template <std::size_t N>
fs::path named_in(const std::map<std::string, std::string>& env, const char* const (&names)[N],
                  const fs::path& fallback) {
  return first_absolute(
      names,
      [&env](const char* name) -> const char* {
        const auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      fallback);
}

}  // namespace

fs::path OmpiScratch::default_temp_base() {
  if (fs::path named = named_in_process(kTempBaseNames); !named.empty()) return named;
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path(ec);
  return ec ? fs::path("/tmp") : dir;
}

fs::path OmpiScratch::default_shm_base() {
  if (fs::path named = named_in_process(kShmBaseNames); !named.empty()) return named;
  return "/dev/shm";
}

fs::path OmpiScratch::temp_base_in(const std::map<std::string, std::string>& env,
                                   const fs::path& fallback) {
  return named_in(env, kTempBaseNames, fallback);
}

fs::path OmpiScratch::shm_base_in(const std::map<std::string, std::string>& env,
                                  const fs::path& fallback) {
  return named_in(env, kShmBaseNames, fallback);
}

}  // namespace colltune
