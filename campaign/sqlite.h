// A thin RAII layer over the SQLite C API: prepared statements only, typed binds, errors as
// exceptions carrying SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace colltune::sql {

struct Error : std::runtime_error {
  Error(const std::string& what, int sqlite_code) : std::runtime_error(what), code(sqlite_code) {}
  int code;
};

// Another connection held the lock longer than the busy timeout (SQLITE_BUSY / SQLITE_LOCKED,
// extended codes included): the operation can be retried once the lock is gone.
inline bool is_busy(const Error& e) {
  const int primary = e.code & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;

  // Binds are 1-based, as in SQLite. Return *this to chain.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind_null(int index);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // Advances to the next row; false when done. Throws on error.
  bool step();
  // Runs a statement that returns no rows.
  void exec();
  void reset();

  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  int integer(int column) const { return static_cast<int>(int64(column)); }
  double real(int column) const;
  std::string text(int column) const;
  std::optional<double> optional_real(int column) const;
  std::optional<std::int64_t> optional_int64(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  // Opens (creating) a database file; WAL, foreign keys on, a busy timeout.
  explicit Database(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Statement prepare(std::string_view sql) { return Statement(db_, sql); }
  // Runs SQL text without parameters (schema, pragmas). Never for values from outside.
  void exec_script(const char* sql);
  std::int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
  int user_version();
  void set_user_version(int version);
  sqlite3* handle() { return db_; }
  const std::string& path() const { return path_; }
  // Calls `f` after each transaction this connection commits (an explicit one or a statement
  // on its own), once the commit is visible to other connections and its write lock released:
  // the file is then as a process killed right after that commit leaves it. `f` runs on the
  // committing thread, inside whatever the committer holds (a Store's mutex): it must not use
  // this connection. The WAL is still checkpointed as SQLite's automatic checkpoint does it
  // (passive, past 1000 pages), which this hook replaces. Empty `f`: no hook. For tests.
  void on_commit(std::function<void()> f);

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  std::function<void()> on_commit_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when destroyed uncommitted (an exception).
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace colltune::sql
