#include "rules/rules_deploy.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

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

// temp file in the same directory + fsync + rename + fsync(dir): readers see the old or the
// new content, never a mix, and the new content survives a crash once this returns.
void atomic_write(const fs::path& path, const std::string& content) {
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
  if (::fchmod(fd.get(), 0644) != 0) cleanup_fail("cannot chmod");
  if (::fsync(fd.get()) != 0) cleanup_fail("cannot fsync");
  if (::close(fd.release()) != 0) cleanup_fail("cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) cleanup_fail("cannot rename into place");
  fsync_dir(dir);
}

void atomic_remove(const fs::path& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) fail("cannot remove", path);
  fsync_dir(path.parent_path().empty() ? fs::path(".") : path.parent_path());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string number_name(int version) {
  char name[16];
  std::snprintf(name, sizeof name, "%04d", version);
  return name;
}

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// flock on PATH.history/lock for the duration of a deploy or rollback.
class HistoryLock {
 public:
  explicit HistoryLock(const fs::path& dir)
      : fd_(::open((dir / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_.get() < 0) fail("cannot open lock file in", dir);
    while (::flock(fd_.get(), LOCK_EX) != 0)
      if (errno != EINTR) fail("cannot lock", dir / "lock");
  }

 private:
  Fd fd_;
};

void write_entry(const fs::path& dir, int version, const std::string* content, bool absent,
                 std::optional<int> previous, const DeployProvenance& provenance) {
  if (content) atomic_write(dir / (number_name(version) + ".conf"), *content);
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
  std::error_code ec;
  if (!fs::exists(json_path, ec)) return std::nullopt;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(json_path));
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
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  std::string text = read_file(file);
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    throw DeployError("corrupt " + file.string());
  }
}

std::vector<HistoryEntry> deploy_history(const fs::path& target) {
  std::vector<HistoryEntry> entries;
  fs::path dir = history_dir(target);
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

DeployResult deploy_rules(const std::string& content, const fs::path& target_in,
                          const DeployProvenance& provenance_in) {
  fs::path target = fs::absolute(target_in);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw DeployError(target.string() + " is a directory");
  fs::path dir = history_dir(target);
  if (!fs::is_directory(target.parent_path(), ec))
    throw DeployError("directory " + target.parent_path().string() + " does not exist");
  fs::create_directories(dir, ec);
  if (ec) throw DeployError("cannot create " + dir.string() + ": " + ec.message());
  HistoryLock lock(dir);

  std::vector<HistoryEntry> history = deploy_history(target);
  std::optional<int> previous = active_version(target);
  if (history.empty()) {
    // Remember what was there before colltune touched the file, so rollback can restore it.
    DeployProvenance before;
    before.source = "state before the first colltune deploy";
    before.time = now_seconds();
    if (fs::exists(target, ec)) {
      std::string old = read_file(target);
      write_entry(dir, 0, &old, false, std::nullopt, before);
    } else {
      write_entry(dir, 0, nullptr, true, std::nullopt, before);
    }
    previous = 0;
  }
  int version = history.empty() ? 1 : history.back().version + 1;
  DeployProvenance provenance = provenance_in;
  if (provenance.time == 0) provenance.time = now_seconds();
  write_entry(dir, version, &content, false, previous, provenance);
  atomic_write(target, content);
  set_active(dir, version);
  return DeployResult{target, version, previous};
}

DeployResult deploy_rules_file(const fs::path& source, const fs::path& target,
                               const DeployProvenance& provenance) {
  return deploy_rules(read_file(source), target, provenance);
}

DeployResult rollback_rules(const fs::path& target_in) {
  fs::path target = fs::absolute(target_in);
  fs::path dir = history_dir(target);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw DeployError("no deploy history for " + target.string());
  HistoryLock lock(dir);
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
  if (back->absent)
    atomic_remove(target);
  else
    atomic_write(target, read_file(back->rules_path));
  set_active(dir, back->version);
  return DeployResult{target, back->version, back->previous};
}

std::string mca_params_snippet(const fs::path& rules_path) {
  std::string path = fs::absolute(rules_path).lexically_normal().string();
  if (path.find_first_of("\n\r#") != std::string::npos)
    throw std::invalid_argument("the rules path cannot contain a newline or '#': " + path);
  return "# colltune: load the tuned collective rules (read once per process, at MPI_Init)\n"
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
