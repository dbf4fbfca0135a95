// One owner per database: the process that writes campaigns into a colltune store (the daemon,
// `colltune tune`, `tune --resume`, `rules deploy --db`) holds an exclusive flock() on
// "<database>.lock" for as long as it runs. A second writer is refused at once with the
// holder's pid and role, before it opens the store. Read-only commands (export, show) take no
// lock. The kernel drops the lock when the holder exits, even on kill -9; the file stays
// (unlinking it would let two processes lock two different files).
#pragma once

#include <stdexcept>
#include <string>

namespace colltune {

class DatabaseInUse : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DatabaseOwner {
 public:
  // Locks "<database>.lock" (created 0644 next to the database; never through a symbolic
  // link) and writes "<pid> <role>" into it. No lock for ":memory:" or an empty path. Throws
  // DatabaseInUse when another process (or another DatabaseOwner in this one) holds it, and
  // std::runtime_error when the lock file cannot be created.
  DatabaseOwner(const std::string& database, const std::string& role);
  ~DatabaseOwner();
  DatabaseOwner(const DatabaseOwner&) = delete;
  DatabaseOwner& operator=(const DatabaseOwner&) = delete;

  static std::string lock_path(const std::string& database) { return database + ".lock"; }

 private:
  int fd_ = -1;
};

}  // namespace colltune
