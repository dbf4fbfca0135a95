#include "campaign/sqlite.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace colltune::sql {
namespace {

[[noreturn]] void fail(sqlite3* db, int code, const std::string& context) {
  throw Error(context + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(code)), code);
}

}  // namespace

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) fail(db, rc, "prepare '" + std::string(sql.substr(0, 60)) + "'");
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
  other.stmt_ = nullptr;
}

Statement& Statement::bind(int index, std::int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) fail(db_, rc, "bind");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) fail(db_, rc, "bind");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                             SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail(db_, rc, "bind");
  return *this;
}

Statement& Statement::bind_null(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) fail(db_, rc, "bind");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, rc, "step");
}

void Statement::exec() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::text(int column) const {
  const unsigned char* t = sqlite3_column_text(stmt_, column);
  if (!t) return {};
  return std::string(reinterpret_cast<const char*>(t),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<double> Statement::optional_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

std::optional<std::int64_t> Statement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

Database::Database(const std::string& path) : path_(path) {
  // SQLite says only "unable to open database file": name the path and, when we can, why.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  auto why_not = [&](const std::string& message) {
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      return "directory " + dir.string() + " does not exist";
    if (!dir.empty() && ::access(dir.c_str(), W_OK) != 0)
      return message + " (directory " + dir.string() + " is not writable: " + std::strerror(errno) +
             ")";
    return message;
  };
  int rc =
      sqlite3_open_v2(path.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
    throw Error("cannot open database " + path + ": " + why_not(message), rc);
  }
  sqlite3_busy_timeout(db_, 10000);
  try {
    exec_script("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;");
  } catch (const Error& e) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error("cannot open database " + path + ": " + why_not(e.what()), e.code);
  }
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

void Database::on_commit(std::function<void()> f) {
  on_commit_ = std::move(f);
  if (!on_commit_) {
    sqlite3_wal_autocheckpoint(db_, 1000);  // SQLite's own hook back
    return;
  }
  sqlite3_wal_hook(
      db_,
      [](void* self, sqlite3* db, const char* name, int pages) {
        static_cast<Database*>(self)->on_commit_();
        if (pages >= 1000)
          sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        return SQLITE_OK;
      },
      this);
}

void Database::exec_script(const char* sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    throw Error(message, rc);
  }
}

int Database::user_version() {
  Statement s(db_, "PRAGMA user_version");
  s.step();
  return s.integer(0);
}

void Database::set_user_version(int version) {
  // PRAGMA takes no bound parameters; the value is an int we produce.
  exec_script(("PRAGMA user_version=" + std::to_string(version)).c_str());
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec_script("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.exec_script("ROLLBACK");
    } catch (...) {
    }
  }
}

void Transaction::commit() {
  db_.exec_script("COMMIT");
  done_ = true;
}

}  // namespace colltune::sql
