#include "rules/rules_deploy.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/iso_time.h"

namespace colltune {

void to_json(nlohmann::json& j, const DeployProvenance& p) {
  j = nlohmann::json{{"campaign", p.campaign},
                     {"ompi_version", p.ompi_version},
                     {"fingerprint", p.fingerprint},
                     {"source", p.source},
                     {"time", p.time},
                     {"extra", p.extra}};
}

void from_json(const nlohmann::json& j, DeployProvenance& p) {
  p.campaign = j.value("campaign", "");
  p.ompi_version = j.value("ompi_version", "");
  p.fingerprint = j.value("fingerprint", "");
  p.source = j.value("source", "");
  p.time = j.value("time", 0.0);
  p.extra = j.value("extra", nlohmann::json::object());
}

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path, int error = errno) {
  throw DeployError(what + " " + path.string() + ": " + std::strerror(error));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

void fsync_dir(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) fail("cannot open directory", dir);
  if (::fsync(fd.get()) != 0) fail("cannot fsync directory", dir);
}

[[noreturn]] void refuse(const fs::path& path, const std::string& why) {
  throw DeployRefused("refusing to deploy through " + path.string() + ": " + why);
}

std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "it is a symbolic link";
  if (S_ISDIR(mode)) return "it is a directory";
  if (S_ISFIFO(mode)) return "it is a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "it is a device";
  if (S_ISSOCK(mode)) return "it is a socket";
  return "it is not a regular file";
}

// Opens an existing regular file for reading without following a symbolic link in its last
// component and without blocking on a FIFO (O_NONBLOCK), then checks what was opened (fstat,
// not stat-then-open). Returns -1 with errno ENOENT when the file does not exist.
int open_regular(const fs::path& path, bool follow_link) {
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow_link ? 0 : O_NOFOLLOW);
  int raw = ::open(path.c_str(), flags);
  if (raw < 0) {
    if (errno == ENOENT) return -1;
    if (errno == ELOOP && !follow_link) refuse(path, "it is a symbolic link");
    fail("cannot open", path);
  }
  Fd fd(raw);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail("cannot stat", path);
  if (!S_ISREG(st.st_mode)) refuse(path, kind_of(st.st_mode));
  // Regular files never block; reads after this are ordinary.
  int fl = ::fcntl(fd.get(), F_GETFL);
  if (fl >= 0) ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK);
  return fd.release();
}

std::string read_fd(int raw, const fs::path& path) {
  Fd fd(raw);
  std::string out;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot read", path);
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

// The content of a regular file that must exist; never a link inside the history.
std::string read_file(const fs::path& path, bool follow_link = false) {
  int fd = open_regular(path, follow_link);
  if (fd < 0) fail("cannot read", path, ENOENT);
  return read_fd(fd, path);
}

// What the target is now: absent, or a regular file with this mode (anything else refused).
struct LiveState {
  bool exists = false;
  mode_t mode = 0644;
  uid_t uid = 0;
  gid_t gid = 0;
};

LiveState inspect_live(const fs::path& target) {
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    fail("cannot stat", target);
  }
  if (!S_ISREG(st.st_mode)) refuse(target, kind_of(st.st_mode));
  return LiveState{true, static_cast<mode_t>(st.st_mode & 07777), st.st_uid, st.st_gid};
}

// The history folder must be a real folder, and nothing in it a link or a special file.
void check_history_dir(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    fail("cannot stat", dir);
  }
  if (!S_ISDIR(st.st_mode)) refuse(dir, kind_of(st.st_mode));
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat est {};
    if (::lstat(it->path().c_str(), &est) != 0) continue;
    if (!S_ISREG(est.st_mode)) refuse(it->path(), kind_of(est.st_mode));
  }
  if (ec) throw DeployError("cannot list " + dir.string() + ": " + ec.message());
}

// temp file in the same directory + fsync + rename + fsync(dir): readers see the old or the
// new content, never a mix, and the new content survives a crash once this returns. The new
// file gets `live`'s permissions (and owner, when this process may set it).
void atomic_write(const fs::path& path, const std::string& content,
                  const LiveState& live = LiveState{}) {
  fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::string templ = (dir / ("." + path.filename().string() + ".tmp.XXXXXX")).string();
  int raw = ::mkstemp(templ.data());
  if (raw < 0) fail("cannot create a temporary file in", dir);
  Fd fd(raw);
  fs::path tmp(templ);
  auto cleanup_fail = [&](const std::string& what) {
    int error = errno;
    ::unlink(tmp.c_str());
    fail(what, tmp, error);
  };
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd.get(), data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      cleanup_fail("cannot write");
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (live.exists && (live.uid != ::geteuid() || live.gid != ::getegid()))
    (void)!::fchown(fd.get(), live.uid, live.gid);  // best effort: only root may give away
  if (::fchmod(fd.get(), live.exists ? live.mode : 0644) != 0) cleanup_fail("cannot chmod");
  if (::fsync(fd.get()) != 0) cleanup_fail("cannot fsync");
  if (::close(fd.release()) != 0) cleanup_fail("cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) cleanup_fail("cannot rename into place");
  fsync_dir(dir);
}

void atomic_remove(const fs::path& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) fail("cannot remove", path);
  fsync_dir(path.parent_path().empty() ? fs::path(".") : path.parent_path());
}

std::string number_name(int version) {
  char name[16];
  std::snprintf(name, sizeof name, "%04d", version);
  return name;
}

// flock on PATH.history/lock for the duration of a deploy or rollback.
class HistoryLock {
 public:
  explicit HistoryLock(const fs::path& dir)
      : fd_(::open((dir / "lock").c_str(),
                   O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644)) {
    if (fd_.get() < 0) {
      if (errno == ELOOP) refuse(dir / "lock", "it is a symbolic link");
      fail("cannot open lock file in", dir);
    }
    struct stat st {};
    if (::fstat(fd_.get(), &st) != 0) fail("cannot stat", dir / "lock");
    if (!S_ISREG(st.st_mode)) refuse(dir / "lock", kind_of(st.st_mode));
    while (::flock(fd_.get(), LOCK_EX) != 0)
      if (errno != EINTR) fail("cannot lock", dir / "lock");
  }

 private:
  Fd fd_;
};

void write_entry(const fs::path& dir, int version, const std::string* content, bool absent,
                 std::optional<int> previous, const DeployProvenance& provenance,
                 const LiveState& live) {
  // A copy of the rules is as private as the live file it was or will be.
  if (content) atomic_write(dir / (number_name(version) + ".conf"), *content, live);
  nlohmann::json j = provenance;
  j["version"] = version;
  j["absent"] = absent;
  j["previous"] = previous ? nlohmann::json(*previous) : nlohmann::json(nullptr);
  atomic_write(dir / (number_name(version) + ".json"), j.dump(2) + "\n");
}

void set_active(const fs::path& dir, int version) {
  atomic_write(dir / "active", std::to_string(version) + "\n");
}

std::optional<HistoryEntry> load_entry(const fs::path& dir, int version) {
  fs::path json_path = dir / (number_name(version) + ".json");
  int fd = open_regular(json_path, false);
  if (fd < 0) return std::nullopt;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_fd(fd, json_path));
  } catch (const nlohmann::json::exception& e) {
    throw DeployError("corrupt history entry " + json_path.string() + ": " + e.what());
  }
  HistoryEntry entry;
  entry.version = version;
  entry.absent = j.value("absent", false);
  if (j.contains("previous") && j["previous"].is_number_integer())
    entry.previous = j["previous"].get<int>();
  entry.provenance = j.get<DeployProvenance>();
  entry.provenance_path = json_path;
  if (!entry.absent) entry.rules_path = dir / (number_name(version) + ".conf");
  return entry;
}

}  // namespace

fs::path history_dir(const fs::path& target) { return fs::path(target.string() + ".history"); }

std::optional<int> active_version(const fs::path& target) {
  fs::path file = history_dir(target) / "active";
  int fd = open_regular(file, false);
  if (fd < 0) return std::nullopt;
  std::string text = read_fd(fd, file);
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    throw DeployError("corrupt " + file.string());
  }
}

std::vector<HistoryEntry> deploy_history(const fs::path& target) {
  std::vector<HistoryEntry> entries;
  fs::path dir = history_dir(target);
  check_history_dir(dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return entries;
  std::vector<int> versions;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string file = e.path().filename().string();
    if (file.size() == 9 && file.substr(4) == ".json") {
      try {
        versions.push_back(std::stoi(file.substr(0, 4)));
      } catch (const std::exception&) {
      }
    }
  }
  std::sort(versions.begin(), versions.end());
  for (int v : versions)
    if (auto entry = load_entry(dir, v)) entries.push_back(std::move(*entry));
  return entries;
}

void check_deploy_target(const fs::path& target_in) {
  const fs::path target = fs::absolute(target_in);
  if (!fs::is_directory(target.parent_path()))
    throw DeployError("directory " + target.parent_path().string() + " does not exist");
  inspect_live(target);
  check_history_dir(history_dir(target));
}

namespace {

// Creates PATH.history as a real folder (never through a link) and checks its content.
fs::path prepare_history_dir(const fs::path& target) {
  const fs::path dir = history_dir(target);
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) fail("cannot create", dir);
  check_history_dir(dir);
  return dir;
}

}  // namespace

DeployResult deploy_rules(const std::string& content, const fs::path& target_in,
                          const DeployProvenance& provenance_in) {
  const fs::path target = fs::absolute(target_in);
  check_deploy_target(target);
  const fs::path dir = prepare_history_dir(target);
  HistoryLock lock(dir);
  check_history_dir(dir);
  const LiveState live = inspect_live(target);

  std::vector<HistoryEntry> history = deploy_history(target);
  std::optional<int> previous = active_version(target);
  if (history.empty()) {
    // Remember what was there before colltune touched the file, so rollback can restore it.
    DeployProvenance before;
    before.source = "state before the first colltune deploy";
    before.time = unix_time_now();
    before.extra = {{"mode", static_cast<int>(live.mode)}};
    if (live.exists) {
      std::string old = read_file(target);
      write_entry(dir, 0, &old, false, std::nullopt, before, live);
    } else {
      write_entry(dir, 0, nullptr, true, std::nullopt, before, live);
    }
    previous = 0;
  }
  int version = history.empty() ? 1 : history.back().version + 1;
  DeployProvenance provenance = provenance_in;
  if (provenance.time == 0) provenance.time = unix_time_now();
  write_entry(dir, version, &content, false, previous, provenance, live);
  atomic_write(target, content, live);
  set_active(dir, version);
  return DeployResult{target, version, previous};
}

DeployResult deploy_rules_file(const fs::path& source, const fs::path& target,
                               const DeployProvenance& provenance) {
  return deploy_rules(read_rules_source(source), target, provenance);
}

std::string read_rules_source(const fs::path& source) {
  return read_file(source, /*follow_link=*/true);
}

namespace {

// Makes version `to` live again (its content, or no file when it records "absent"), keeping
// the live file's permissions. Caller holds the history lock.
void restore_version(const fs::path& target, const fs::path& dir, const HistoryEntry& to) {
  const LiveState live = inspect_live(target);
  if (to.absent)
    atomic_remove(target);
  else
    atomic_write(target, read_file(to.rules_path), live);
  set_active(dir, to.version);
}

}  // namespace

DeployResult rollback_rules(const fs::path& target_in) {
  fs::path target = fs::absolute(target_in);
  fs::path dir = history_dir(target);
  check_deploy_target(target);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw DeployError("no deploy history for " + target.string());
  HistoryLock lock(dir);
  check_history_dir(dir);
  std::optional<int> active = active_version(target);
  if (!active) throw DeployError("no active version recorded for " + target.string());
  auto current = load_entry(dir, *active);
  if (!current) throw DeployError("history entry " + std::to_string(*active) + " is missing");
  if (!current->previous)
    throw DeployError("version " + std::to_string(*active) + " of " + target.string() +
                      " has no predecessor to roll back to");
  auto back = load_entry(dir, *current->previous);
  if (!back)
    throw DeployError("history entry " + std::to_string(*current->previous) + " is missing");
  restore_version(target, dir, *back);
  return DeployResult{target, back->version, back->previous};
}

DeployResult activate_version(const fs::path& target_in, int version) {
  const fs::path target = fs::absolute(target_in);
  const fs::path dir = history_dir(target);
  check_deploy_target(target);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw DeployError("no deploy history for " + target.string());
  HistoryLock lock(dir);
  check_history_dir(dir);
  auto entry = load_entry(dir, version);
  if (!entry) throw DeployError("history entry " + std::to_string(version) + " is missing");
  restore_version(target, dir, *entry);
  return DeployResult{target, entry->version, entry->previous};
}

void undo_deploy(const DeployResult& deployed) {
  const fs::path dir = history_dir(deployed.target);
  check_deploy_target(deployed.target);
  HistoryLock lock(dir);
  check_history_dir(dir);
  if (active_version(deployed.target) != deployed.version)
    throw DeployError("cannot undo version " + std::to_string(deployed.version) + " of " +
                      deployed.target.string() + ": it is no longer the live version");
  if (deployed.previous) {
    auto back = load_entry(dir, *deployed.previous);
    if (!back)
      throw DeployError("history entry " + std::to_string(*deployed.previous) + " is missing");
    restore_version(deployed.target, dir, *back);
  }
  // The version never counted: forget it, so that history lists only what was live.
  for (const char* ext : {".conf", ".json"}) {
    const fs::path p = dir / (number_name(deployed.version) + ext);
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) fail("cannot remove", p);
  }
  fsync_dir(dir);
}

fs::path mca_params_file(const fs::path& sysconfdir) {
  return sysconfdir / "openmpi-mca-params.conf";
}

std::string mca_params_snippet(const fs::path& rules_path, const std::string& params_file) {
  std::string path = fs::absolute(rules_path).lexically_normal().string();
  if (path.find_first_of("\n\r#") != std::string::npos)
    throw std::invalid_argument("the rules path cannot contain a newline or '#': " + path);
  std::string where = params_file.find_first_of("\n\r") == std::string::npos && !params_file.empty()
                          ? "# add to " + params_file + "\n"
                          : std::string();
  return where +
         "# colltune: load the tuned collective rules (read once per process, at MPI_Init)\n"
         "coll_tuned_use_dynamic_rules = 1\n"
         "coll_tuned_dynamic_rules_filename = " +
         path + "\n";
}

std::vector<std::string> mca_params_warnings() {
  return {
      "Settings in the user's environment (OMPI_MCA_coll_tuned_use_dynamic_rules, "
      "OMPI_MCA_coll_tuned_dynamic_rules_filename), in ~/.openmpi/mca-params.conf, in an AMCA "
      "file or on the mpirun command line (--mca / -mca) override this system file: a job "
      "setting coll_tuned_use_dynamic_rules 0 or another file silently runs without these "
      "rules.",
      "Open MPI ignores an unreadable, missing or malformed rules file without any message and "
      "uses its fixed decision: the path must be readable on every compute node (shared file "
      "system), and the file should be checked with `colltune rules validate`.",
      "The file is read at MPI_Init: running jobs keep the rules they started with.",
      "Components with a higher priority than tuned (coll/hcoll when Open MPI is built with "
      "HCOLL, coll/han in 5.0.x) take collectives before tuned sees them; exclude them (e.g. "
      "coll = ^hcoll) where the tuned rules should apply.",
  };
}

}  // namespace colltune
