#include "campaign/database_owner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace colltune {

namespace {

std::string read_holder(int fd) {
  char buffer[256];
  ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return {};
  std::string text(buffer, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

}  // namespace

DatabaseOwner::DatabaseOwner(const std::string& database, const std::string& role) {
  if (database.empty() || database == ":memory:") return;
  const std::string path = lock_path(database);
  fd_ =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
  if (fd_ < 0) {
    const int error = errno;
    const std::filesystem::path dir = std::filesystem::path(database).parent_path();
    std::error_code ec;
    if (error == ENOENT && !dir.empty() && !std::filesystem::is_directory(dir, ec))
      throw std::runtime_error("cannot open database " + database + ": directory " + dir.string() +
                               " does not exist");
    throw std::runtime_error("cannot open database " + database + ": its lock file " + path +
                             " is not writable: " + std::strerror(error));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("the lock file " + path + " is not a regular file");
  }
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    const std::string holder = error == EWOULDBLOCK ? read_holder(fd_) : std::string();
    ::close(fd_);
    fd_ = -1;
    if (error != EWOULDBLOCK)
      throw std::runtime_error("cannot lock " + path + ": " + std::strerror(error));
    std::string who = "another process";
    if (!holder.empty()) {
      const auto space = holder.find(' ');
      who = "process " + holder.substr(0, space) +
            (space == std::string::npos ? "" : " (" + holder.substr(space + 1) + ")");
    }
    throw DatabaseInUse("database " + database + " is in use by " + who +
                        ": one process owns a colltune database at a time (lock " + path +
                        "); stop it, or talk to the daemon through its API");
  }
  const std::string me = std::to_string(::getpid()) + " " + role + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, me.data(), me.size(), 0);
}

DatabaseOwner::~DatabaseOwner() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace colltune
