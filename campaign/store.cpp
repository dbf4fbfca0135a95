#include "campaign/store.h"

#include <filesystem>
#include <iterator>

namespace colltune {
namespace {

constexpr const char* kSchemaV1 = R"SQL(
CREATE TABLE campaigns (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  state TEXT NOT NULL,
  spec TEXT NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL
);
CREATE TABLE contexts (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  collective TEXT NOT NULL,
  comm_size INTEGER NOT NULL,
  nodes INTEGER NOT NULL,
  ppn INTEGER NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  optimizer_state TEXT,
  result TEXT,
  updated_at REAL NOT NULL
);
CREATE INDEX contexts_by_campaign ON contexts(campaign_id);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  context_id INTEGER NOT NULL REFERENCES contexts(id) ON DELETE CASCADE,
  tag TEXT NOT NULL UNIQUE,
  backend TEXT NOT NULL,
  backend_job_id TEXT NOT NULL DEFAULT '',
  purpose TEXT NOT NULL,
  state TEXT NOT NULL,
  request TEXT NOT NULL,
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL
);
CREATE INDEX jobs_by_campaign ON jobs(campaign_id);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  context_id INTEGER NOT NULL REFERENCES contexts(id) ON DELETE CASCADE,
  purpose TEXT NOT NULL,
  config_index INTEGER NOT NULL,
  repeat INTEGER NOT NULL,
  algorithm INTEGER NOT NULL,
  segsize INTEGER NOT NULL,
  fanout INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  error TEXT NOT NULL,
  provenance TEXT NOT NULL,
  recorded_at REAL NOT NULL,
  UNIQUE (job_id, config_index, repeat)
);
CREATE INDEX runs_by_context ON runs(context_id);
CREATE TABLE measurements (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  msg_size INTEGER NOT NULL,
  avg_us REAL NOT NULL,
  min_us REAL,
  max_us REAL,
  iterations INTEGER,
  PRIMARY KEY (run_id, msg_size)
);
CREATE TABLE rules_versions (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER REFERENCES campaigns(id) ON DELETE SET NULL,
  format TEXT NOT NULL,
  content TEXT NOT NULL,
  validation TEXT NOT NULL,
  verification TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  deployed_to TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL
);
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER REFERENCES campaigns(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  time REAL NOT NULL
);
)SQL";

// v2: how a foreground `colltune tune` launched a campaign (backend settings, outputs), so
// that `tune --resume` restores it instead of rebuilding it from the resume command's flags.
constexpr const char* kSchemaV2 = R"SQL(
CREATE TABLE campaign_launch (
  campaign_id INTEGER PRIMARY KEY REFERENCES campaigns(id) ON DELETE CASCADE,
  launch TEXT NOT NULL
);
)SQL";

// v3: the metrics' last event of a type (last_event_of_type: WHERE type = ? ORDER BY id DESC)
// reads the index instead of scanning the whole log back to a rare type's last event.
constexpr const char* kSchemaV3 = R"SQL(
CREATE INDEX events_by_type ON events(type);
)SQL";

// A list's filter: the stored text of `value`, or '' (any) without one.
template <typename E>
std::string filter_text(std::optional<E> value) {
  return value ? to_string(*value) : "";
}

// Stored text colltune did not write (another tool, a damaged or hand-edited database): an
// error naming the table, row and column, with the text's start (it can be megabytes) and `why`.
sql::Error stored_text_error(const char* table, const char* column, std::int64_t id,
                             const std::string& text, const std::string& why) {
  constexpr std::size_t kShown = 60;
  const std::string shown = text.size() > kShown ? text.substr(0, kShown) + "..." : text;
  return sql::Error(std::string("table ") + table + ", id " + std::to_string(id) + ": " + column +
                        " '" + shown + "' " + why,
                    SQLITE_MISMATCH);
}

// A JSON column's text (empty = null). Text that is not JSON is an error naming the row, never
// a value that reads as "absent" (a job's request, a run's provenance, a campaign's spec).
nlohmann::json stored_json(const std::string& text, const char* table, const char* column,
                           std::int64_t id) {
  if (text.empty()) return nullptr;
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw stored_text_error(table, column, id, text,
                            std::string("is not valid JSON (") + e.what() + ")");
  }
}

// A state or purpose column's text as its enum (campaign_states.h holds the stored strings).
// Text that names none is an error naming the row, never a default that would misdirect a resume.
template <typename E>
E stored_enum(std::optional<E> (*parse)(std::string_view), const std::string& text,
              const char* table, const char* column, std::int64_t id) {
  if (const auto value = parse(text)) return *value;
  throw stored_text_error(table, column, id, text, "is not one colltune knows");
}

CampaignRecord read_campaign(sql::Statement& s) {
  CampaignRecord c;
  c.id = s.int64(0);
  c.name = s.text(1);
  c.state = stored_enum(parse_campaign_state, s.text(2), "campaigns", "state", c.id);
  c.spec = stored_json(s.text(3), "campaigns", "spec", c.id);
  c.error = s.text(4);
  c.created_at = s.real(5);
  c.updated_at = s.real(6);
  return c;
}

ContextRecord read_context(sql::Statement& s) {
  ContextRecord c;
  c.id = s.int64(0);
  c.campaign_id = s.int64(1);
  c.collective = stored_enum(parse_collective, s.text(2), "contexts", "collective", c.id);
  c.comm_size = s.integer(3);
  c.nodes = s.integer(4);
  c.ppn = s.integer(5);
  c.state = stored_enum(parse_context_state, s.text(6), "contexts", "state", c.id);
  c.optimizer_state = stored_json(s.text(7), "contexts", "optimizer_state", c.id);
  c.result = stored_json(s.text(8), "contexts", "result", c.id);
  return c;
}

JobRecord read_job(sql::Statement& s) {
  JobRecord j;
  j.id = s.int64(0);
  j.campaign_id = s.int64(1);
  j.context_id = s.int64(2);
  j.tag = s.text(3);
  j.backend = s.text(4);
  j.backend_job_id = s.text(5);
  j.purpose = stored_enum(parse_job_purpose, s.text(6), "jobs", "purpose", j.id);
  j.state = stored_enum(parse_job_state, s.text(7), "jobs", "state", j.id);
  j.request = stored_json(s.text(8), "jobs", "request", j.id);
  j.created_at = s.real(9);
  j.updated_at = s.real(10);
  return j;
}

RulesVersionRecord read_rules(sql::Statement& s) {
  RulesVersionRecord r;
  r.id = s.int64(0);
  if (!s.is_null(1)) r.campaign_id = s.int64(1);
  r.format = s.text(2);
  r.content = s.text(3);
  r.validation = stored_json(s.text(4), "rules_versions", "validation", r.id);
  r.verification = stored_json(s.text(5), "rules_versions", "verification", r.id);
  r.fingerprint = stored_json(s.text(6), "rules_versions", "fingerprint", r.id);
  r.deployed_to = s.text(7);
  r.created_at = s.real(8);
  return r;
}

// A row of SELECT id, campaign_id, type, payload, time FROM events.
EventRecord read_event(sql::Statement& s) {
  EventRecord e;
  e.id = s.int64(0);
  if (!s.is_null(1)) e.campaign_id = s.int64(1);
  e.type = s.text(2);
  e.payload = stored_json(s.text(3), "events", "payload", e.id);
  e.time = s.real(4);
  return e;
}

constexpr const char* kCampaignColumns =
    "SELECT id, name, state, spec, error, created_at, updated_at FROM campaigns ";
constexpr const char* kContextColumns =
    "SELECT id, campaign_id, collective, comm_size, nodes, ppn, state, optimizer_state, result "
    "FROM contexts ";
constexpr const char* kJobColumns =
    "SELECT id, campaign_id, context_id, tag, backend, backend_job_id, purpose, state, request, "
    "created_at, updated_at FROM jobs ";
constexpr const char* kRunColumns =
    "SELECT id, job_id, context_id, purpose, config_index, repeat, algorithm, segsize, fanout, "
    "outcome, error, provenance FROM runs ";
constexpr const char* kRulesColumns =
    "SELECT id, campaign_id, format, content, validation, verification, fingerprint, "
    "deployed_to, created_at FROM rules_versions ";

}  // namespace

namespace {

// A file that exists but holds 0 bytes is not a store SQLite would recognise: opening it
// would silently make an empty one in its place (a truncated copy, a wrong path). Refused;
// only a path that does not exist yet starts a new store. (A 0-byte main file next to a
// non-empty write-ahead log is left to SQLite, which recovers from the log.)
const std::string& refuse_empty_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty() || path == ":memory:" || !fs::is_regular_file(path, ec)) return path;
  if (fs::file_size(path, ec) != 0 || ec) return path;
  if (fs::file_size(path + "-wal", ec) > 0 && !ec) return path;
  throw sql::Error("database " + path +
                       " is an empty file (0 bytes), not a colltune store: remove it to start a "
                       "new store, or give the path of the real one",
                   SQLITE_NOTADB);
}

}  // namespace

Store::Store(const std::string& path) : db_(refuse_empty_file(path)) {
  check_integrity();
  migrate();
}

void Store::check_integrity() {
  // quick_check reads every page (O(size), without the index cross-checks of integrity_check):
  // a store with damaged pages is refused at start instead of failing reads later.
  std::string problems;
  try {
    auto s = db_.prepare("PRAGMA quick_check(5)");
    while (s.step()) {
      const std::string row = s.text(0);
      if (row == "ok") continue;
      problems += (problems.empty() ? "" : "; ") + row;
    }
  } catch (const sql::Error& e) {
    problems = e.what();
  }
  if (!problems.empty())
    throw sql::Error("database " + db_.path() + " is damaged (PRAGMA quick_check: " + problems +
                         "): colltune will not use it; restore it from a backup, or salvage "
                         "it with the sqlite3 shell's .recover",
                     SQLITE_CORRUPT);
}

void Store::migrate() {
  std::lock_guard lock(mutex_);
  int version = db_.user_version();
  if (version > kSchemaVersion)
    throw sql::Error("database " + db_.path() + " has schema version " + std::to_string(version) +
                         ", newer than this colltune (" + std::to_string(kSchemaVersion) + ")",
                     SQLITE_MISMATCH);
  if (version < 0)
    throw sql::Error("database " + db_.path() + " is not a colltune store (schema version " +
                         std::to_string(version) + ")",
                     SQLITE_MISMATCH);
  if (version == 0) {
    // A non-empty database without our version is someone else's file: refuse it.
    auto s = db_.prepare("SELECT count(*) FROM sqlite_master");
    s.step();
    if (s.int64(0) > 0)
      throw sql::Error("database " + db_.path() + " is not a colltune store", SQLITE_MISMATCH);
    sql::Transaction tx(db_);
    db_.exec_script(kSchemaV1);
    db_.set_user_version(1);
    tx.commit();
    version = 1;
  }
  // Each later version's script, applied in turn to a database of the version before it.
  constexpr const char* kMigrations[] = {kSchemaV2, kSchemaV3};  // to versions 2, 3, ...
  static_assert(std::size(kMigrations) + 1 == kSchemaVersion);
  for (; version < kSchemaVersion; ++version) {
    sql::Transaction tx(db_);
    db_.exec_script(kMigrations[version - 1]);
    db_.set_user_version(version + 1);
    tx.commit();
  }
}

void Store::set_campaign_launch(std::int64_t campaign_id, const nlohmann::json& launch) {
  std::lock_guard lock(mutex_);
  db_.prepare("INSERT OR REPLACE INTO campaign_launch (campaign_id, launch) VALUES (?, ?)")
      .bind(1, campaign_id)
      .bind(2, launch.dump())
      .exec();
}

std::optional<nlohmann::json> Store::campaign_launch(std::int64_t campaign_id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare("SELECT launch FROM campaign_launch WHERE campaign_id = ?");
  s.bind(1, campaign_id);
  if (!s.step()) return std::nullopt;
  return stored_json(s.text(0), "campaign_launch", "launch", campaign_id);
}

std::int64_t Store::create_campaign(const std::string& name, const nlohmann::json& spec,
                                    CampaignState state) {
  std::lock_guard lock(mutex_);
  return insert_campaign_locked(name, spec, state, unix_time_now());
}

std::int64_t Store::insert_campaign_locked(const std::string& name, const nlohmann::json& spec,
                                           CampaignState state, double now) {
  db_.prepare(
         "INSERT INTO campaigns (name, state, spec, created_at, updated_at) "
         "VALUES (?, ?, ?, ?, ?)")
      .bind(1, name)
      .bind(2, to_string(state))
      .bind(3, spec.dump())
      .bind(4, now)
      .bind(5, now)
      .exec();
  return db_.last_insert_id();
}

std::int64_t Store::create_campaign_with_contexts(const std::string& name,
                                                  const nlohmann::json& spec, CampaignState state,
                                                  const std::vector<NewContext>& contexts) {
  std::lock_guard lock(mutex_);
  sql::Transaction tx(db_);
  const double now = unix_time_now();
  const std::int64_t id = insert_campaign_locked(name, spec, state, now);
  auto insert = db_.prepare(
      "INSERT INTO contexts (campaign_id, collective, comm_size, nodes, ppn, "
      "updated_at) VALUES (?, ?, ?, ?, ?, ?)");
  for (const auto& c : contexts) {
    insert.bind(1, id)
        .bind(2, std::string(colltune::name(c.collective)))
        .bind(3, c.comm_size)
        .bind(4, c.nodes)
        .bind(5, c.ppn)
        .bind(6, now);
    insert.exec();
  }
  tx.commit();
  return id;
}

void Store::set_campaign_state(std::int64_t id, CampaignState state, const std::string& error) {
  std::lock_guard lock(mutex_);
  db_.prepare("UPDATE campaigns SET state = ?, error = ?, updated_at = ? WHERE id = ?")
      .bind(1, to_string(state))
      .bind(2, error)
      .bind(3, unix_time_now())
      .bind(4, id)
      .exec();
}

std::optional<CampaignRecord> Store::campaign(std::int64_t id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kCampaignColumns) + "WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_campaign(s);
}

std::vector<CampaignRecord> Store::campaigns(std::optional<CampaignState> state, int limit,
                                             int offset) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kCampaignColumns) +
                       "WHERE (?1 = '' OR state = ?1) ORDER BY id DESC LIMIT ?2 OFFSET ?3");
  s.bind(1, filter_text(state)).bind(2, limit).bind(3, offset);
  std::vector<CampaignRecord> out;
  while (s.step()) out.push_back(read_campaign(s));
  return out;
}

std::int64_t Store::count_campaigns(std::optional<CampaignState> state) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare("SELECT count(*) FROM campaigns WHERE (?1 = '' OR state = ?1)");
  s.bind(1, filter_text(state));
  s.step();
  return s.int64(0);
}

std::int64_t Store::add_context(std::int64_t campaign_id, Collective collective, int comm_size,
                                int nodes, int ppn) {
  std::lock_guard lock(mutex_);
  db_.prepare(
         "INSERT INTO contexts (campaign_id, collective, comm_size, nodes, ppn, updated_at) "
         "VALUES (?, ?, ?, ?, ?, ?)")
      .bind(1, campaign_id)
      .bind(2, std::string(name(collective)))
      .bind(3, comm_size)
      .bind(4, nodes)
      .bind(5, ppn)
      .bind(6, unix_time_now())
      .exec();
  return db_.last_insert_id();
}

namespace {

// Runs `update_sql`, "UPDATE <table> SET <column> = ?, updated_at = ? WHERE id = ?", with
// `value`, `now` and `id`: one column of a row that keeps its updated_at. The caller holds the
// store's lock.
void update_row_text(sql::Database& db, std::string_view update_sql, std::string_view value,
                     std::int64_t id, double now) {
  db.prepare(update_sql).bind(1, value).bind(2, now).bind(3, id).exec();
}

constexpr std::string_view kSetContextState =
    "UPDATE contexts SET state = ?, updated_at = ? WHERE id = ?";
constexpr std::string_view kSetOptimizerState =
    "UPDATE contexts SET optimizer_state = ?, updated_at = ? WHERE id = ?";
constexpr std::string_view kSetContextResult =
    "UPDATE contexts SET result = ?, updated_at = ? WHERE id = ?";
constexpr std::string_view kSetJobState = "UPDATE jobs SET state = ?, updated_at = ? WHERE id = ?";

}  // namespace

void Store::set_context_state(std::int64_t id, ContextState state) {
  std::lock_guard lock(mutex_);
  update_row_text(db_, kSetContextState, to_string(state), id, unix_time_now());
}

void Store::save_optimizer_state(std::int64_t context_id, const nlohmann::json& state) {
  std::lock_guard lock(mutex_);
  update_row_text(db_, kSetOptimizerState, state.dump(), context_id, unix_time_now());
}

void Store::save_context_result(std::int64_t context_id, const nlohmann::json& result) {
  std::lock_guard lock(mutex_);
  update_row_text(db_, kSetContextResult, result.dump(), context_id, unix_time_now());
}

std::vector<ContextRecord> Store::contexts(std::int64_t campaign_id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kContextColumns) + "WHERE campaign_id = ? ORDER BY id");
  s.bind(1, campaign_id);
  std::vector<ContextRecord> out;
  while (s.step()) out.push_back(read_context(s));
  return out;
}

std::vector<ContextRecord> Store::contexts_brief(std::int64_t campaign_id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(
      "SELECT id, campaign_id, collective, comm_size, nodes, ppn, state, '', '' "
      "FROM contexts WHERE campaign_id = ? ORDER BY id");
  s.bind(1, campaign_id);
  std::vector<ContextRecord> out;
  while (s.step()) out.push_back(read_context(s));
  return out;
}

std::optional<ContextRecord> Store::context(std::int64_t id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kContextColumns) + "WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_context(s);
}

namespace {

// Inserts one job as submitting; the caller holds the store's lock and a transaction.
std::int64_t insert_job(sql::Database& db, std::int64_t campaign_id, std::int64_t context_id,
                        const std::string& tag, const std::string& backend, JobPurpose purpose,
                        const nlohmann::json& request, double now) {
  db.prepare(
        "INSERT INTO jobs (campaign_id, context_id, tag, backend, purpose, state, request, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, campaign_id)
      .bind(2, context_id)
      .bind(3, tag)
      .bind(4, backend)
      .bind(5, to_string(purpose))
      .bind(6, to_string(JobState::submitting))
      .bind(7, request.dump())
      .bind(8, now)
      .bind(9, now)
      .exec();
  return db.last_insert_id();
}

}  // namespace

std::int64_t Store::create_job(std::int64_t campaign_id, std::int64_t context_id,
                               const std::string& tag, const std::string& backend,
                               JobPurpose purpose, const nlohmann::json& request,
                               const nlohmann::json& optimizer_state) {
  return create_jobs(campaign_id, backend, purpose, {{context_id, tag, request}}, context_id,
                     optimizer_state)
      .front();
}

std::vector<std::int64_t> Store::create_jobs(std::int64_t campaign_id, const std::string& backend,
                                             JobPurpose purpose, const std::vector<NewJob>& jobs,
                                             std::int64_t state_context,
                                             const nlohmann::json& optimizer_state) {
  std::lock_guard lock(mutex_);
  sql::Transaction tx(db_);
  const double now = unix_time_now();
  std::vector<std::int64_t> ids;
  for (const auto& job : jobs)
    ids.push_back(
        insert_job(db_, campaign_id, job.context_id, job.tag, backend, purpose, job.request, now));
  if (!optimizer_state.is_null())
    update_row_text(db_, kSetOptimizerState, optimizer_state.dump(), state_context, now);
  tx.commit();
  return ids;
}

void Store::set_job_backend_id(std::int64_t job_id, const std::string& backend_job_id) {
  std::lock_guard lock(mutex_);
  db_.prepare("UPDATE jobs SET backend_job_id = ?, state = ?, updated_at = ? WHERE id = ?")
      .bind(1, backend_job_id)
      .bind(2, to_string(JobState::running))
      .bind(3, unix_time_now())
      .bind(4, job_id)
      .exec();
}

void Store::set_job_state(std::int64_t job_id, JobState state) {
  std::lock_guard lock(mutex_);
  update_row_text(db_, kSetJobState, to_string(state), job_id, unix_time_now());
}

void Store::complete_job(std::int64_t job_id, JobState state, std::int64_t context_id,
                         const nlohmann::json& optimizer_state) {
  complete_jobs({job_id}, state, context_id, optimizer_state);
}

void Store::complete_jobs(const std::vector<std::int64_t>& job_ids, JobState state,
                          std::int64_t context_id, const nlohmann::json& optimizer_state) {
  std::lock_guard lock(mutex_);
  sql::Transaction tx(db_);
  const double now = unix_time_now();
  for (const auto id : job_ids) update_row_text(db_, kSetJobState, to_string(state), id, now);
  if (!optimizer_state.is_null())
    update_row_text(db_, kSetOptimizerState, optimizer_state.dump(), context_id, now);
  tx.commit();
}

std::optional<JobRecord> Store::job(std::int64_t id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kJobColumns) + "WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_job(s);
}

std::optional<JobRecord> Store::job_by_tag(const std::string& tag) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kJobColumns) + "WHERE tag = ?");
  s.bind(1, tag);
  if (!s.step()) return std::nullopt;
  return read_job(s);
}

std::vector<JobRecord> Store::jobs(std::int64_t campaign_id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kJobColumns) + "WHERE campaign_id = ? ORDER BY id");
  s.bind(1, campaign_id);
  std::vector<JobRecord> out;
  while (s.step()) out.push_back(read_job(s));
  return out;
}

std::vector<JobRecord> Store::unfinished_jobs() {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kJobColumns) + "WHERE state IN (?, ?) ORDER BY id");
  s.bind(1, to_string(JobState::submitting)).bind(2, to_string(JobState::running));
  std::vector<JobRecord> out;
  while (s.step()) out.push_back(read_job(s));
  return out;
}

bool Store::record_run(std::int64_t job_id, std::int64_t context_id, JobPurpose purpose,
                       const RunResult& result) {
  std::lock_guard lock(mutex_);
  sql::Transaction tx(db_);
  auto exists =
      db_.prepare("SELECT 1 FROM runs WHERE job_id = ? AND config_index = ? AND repeat = ?");
  exists.bind(1, job_id)
      .bind(2, static_cast<std::int64_t>(result.config_index))
      .bind(3, result.repeat);
  if (exists.step()) return false;
  nlohmann::json provenance = result.provenance;
  db_.prepare(
         "INSERT INTO runs (job_id, context_id, purpose, config_index, repeat, algorithm, "
         "segsize, fanout, outcome, error, provenance, recorded_at) "
         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, job_id)
      .bind(2, context_id)
      .bind(3, to_string(purpose))
      .bind(4, static_cast<std::int64_t>(result.config_index))
      .bind(5, result.repeat)
      .bind(6, result.config.algorithm)
      .bind(7, result.config.segsize)
      .bind(8, result.config.fanout)
      .bind(9, std::string(to_string(result.outcome)))
      .bind(10, result.error)
      .bind(11, provenance.dump())
      .bind(12, unix_time_now())
      .exec();
  const std::int64_t run_id = db_.last_insert_id();
  auto insert = db_.prepare(
      "INSERT OR REPLACE INTO measurements (run_id, msg_size, avg_us, min_us, "
      "max_us, iterations) VALUES (?, ?, ?, ?, ?, ?)");
  for (const auto& row : result.rows) {
    insert.bind(1, run_id)
        .bind(2, row.size)
        .bind(3, row.avg_us)
        .bind(4, row.min_us)
        .bind(5, row.max_us)
        .bind(6, row.iterations);
    insert.exec();
  }
  tx.commit();
  return true;
}

RunRecord Store::read_run(sql::Statement& s) {
  RunRecord r;
  r.id = s.int64(0);
  r.job_id = s.int64(1);
  r.context_id = s.int64(2);
  r.purpose = stored_enum(parse_job_purpose, s.text(3), "runs", "purpose", r.id);
  r.config_index = static_cast<std::size_t>(s.int64(4));
  r.repeat = s.integer(5);
  r.config = TuningConfig{s.integer(6), s.integer(7), s.integer(8)};
  r.outcome = stored_enum(parse_run_outcome, s.text(9), "runs", "outcome", r.id);
  r.error = s.text(10);
  auto prov = stored_json(s.text(11), "runs", "provenance", r.id);
  if (prov.is_object()) r.provenance = prov.get<Provenance>();
  return r;
}

namespace {

void attach_measurements(sql::Database& db, std::vector<RunRecord>& runs) {
  auto m = db.prepare(
      "SELECT msg_size, avg_us, min_us, max_us, iterations FROM measurements "
      "WHERE run_id = ? ORDER BY msg_size");
  for (auto& run : runs) {
    m.bind(1, run.id);
    while (m.step()) {
      OsuRow row;
      row.size = m.int64(0);
      row.avg_us = m.real(1);
      row.min_us = m.optional_real(2);
      row.max_us = m.optional_real(3);
      row.iterations = m.optional_int64(4);
      run.rows.push_back(row);
    }
    m.reset();
  }
}

}  // namespace

std::vector<RunRecord> Store::runs_of_context(std::int64_t context_id,
                                              std::optional<JobPurpose> purpose) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kRunColumns) +
                       "WHERE context_id = ?1 AND (?2 = '' OR purpose = ?2) ORDER BY id");
  s.bind(1, context_id).bind(2, filter_text(purpose));
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  attach_measurements(db_, out);
  return out;
}

std::vector<RunRecord> Store::runs_of_job(std::int64_t job_id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kRunColumns) + "WHERE job_id = ? ORDER BY id");
  s.bind(1, job_id);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  attach_measurements(db_, out);
  return out;
}

std::int64_t Store::count_runs(std::int64_t campaign_id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(
      "SELECT count(*) FROM runs JOIN jobs ON runs.job_id = jobs.id "
      "WHERE jobs.campaign_id = ?");
  s.bind(1, campaign_id);
  s.step();
  return s.int64(0);
}

std::int64_t Store::count_measurements(std::int64_t campaign_id) {
  std::lock_guard lock(mutex_);
  // One statement per case: "(?1 = 0 OR jobs.campaign_id = ?1)" keeps SQLite off the campaign
  // index and scans every measurement of the store (ms per call once it holds 10^5 rows).
  if (campaign_id == 0) {
    auto all = db_.prepare("SELECT count(*) FROM measurements");
    all.step();
    return all.int64(0);
  }
  auto s = db_.prepare(
      "SELECT count(*) FROM measurements JOIN runs ON measurements.run_id = runs.id "
      "JOIN jobs ON runs.job_id = jobs.id WHERE jobs.campaign_id = ?1");
  s.bind(1, campaign_id);
  s.step();
  return s.int64(0);
}

std::int64_t Store::add_rules_version(const RulesVersionRecord& r) {
  std::lock_guard lock(mutex_);
  db_.prepare(
         "INSERT INTO rules_versions (campaign_id, format, content, validation, "
         "verification, fingerprint, deployed_to, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, r.campaign_id)
      .bind(2, r.format)
      .bind(3, r.content)
      .bind(4, r.validation.dump())
      .bind(5, r.verification.dump())
      .bind(6, r.fingerprint.dump())
      .bind(7, r.deployed_to)
      .bind(8, unix_time_now())
      .exec();
  return db_.last_insert_id();
}

void Store::set_rules_verification(std::int64_t id, const nlohmann::json& verification) {
  std::lock_guard lock(mutex_);
  db_.prepare("UPDATE rules_versions SET verification = ? WHERE id = ?")
      .bind(1, verification.dump())
      .bind(2, id)
      .exec();
}

void Store::set_rules_deployed(std::int64_t id, const std::string& deployed_to) {
  std::lock_guard lock(mutex_);
  db_.prepare("UPDATE rules_versions SET deployed_to = ? WHERE id = ?")
      .bind(1, deployed_to)
      .bind(2, id)
      .exec();
}

void Store::record_deployment(const std::string& target,
                              const std::function<std::optional<std::int64_t>()>& file_step) {
  std::lock_guard lock(mutex_);
  sql::Transaction tx(db_);
  const std::optional<std::int64_t> live = file_step();
  db_.prepare("UPDATE rules_versions SET deployed_to = '' WHERE deployed_to = ? AND id != ?")
      .bind(1, target)
      .bind(2, live.value_or(-1))
      .exec();
  if (live)
    db_.prepare("UPDATE rules_versions SET deployed_to = ? WHERE id = ?")
        .bind(1, target)
        .bind(2, *live)
        .exec();
  tx.commit();
}

std::optional<RulesVersionRecord> Store::rules_version(std::int64_t id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kRulesColumns) + "WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_rules(s);
}

std::vector<RulesVersionRecord> Store::rules_versions(std::optional<std::int64_t> campaign_id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(std::string(kRulesColumns) +
                       "WHERE (?1 IS NULL OR campaign_id = ?1) ORDER BY id DESC");
  s.bind(1, campaign_id);
  std::vector<RulesVersionRecord> out;
  while (s.step()) out.push_back(read_rules(s));
  return out;
}

std::int64_t Store::add_event(std::optional<std::int64_t> campaign_id, const std::string& type,
                              const nlohmann::json& payload) {
  std::lock_guard lock(mutex_);
  db_.prepare("INSERT INTO events (campaign_id, type, payload, time) VALUES (?, ?, ?, ?)")
      .bind(1, campaign_id)
      .bind(2, type)
      .bind(3, payload.dump())
      .bind(4, unix_time_now())
      .exec();
  return db_.last_insert_id();
}

std::vector<EventRecord> Store::events_after(std::int64_t after_id, int limit) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(
      "SELECT id, campaign_id, type, payload, time FROM events WHERE id > ? "
      "ORDER BY id LIMIT ?");
  s.bind(1, after_id).bind(2, limit);
  std::vector<EventRecord> out;
  while (s.step()) out.push_back(read_event(s));
  return out;
}

}  // namespace colltune

// ---- Queries of the daemon's REST API and metrics.
namespace colltune {

std::optional<EventRecord> Store::last_event_of_type(const std::string& type) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(
      "SELECT id, campaign_id, type, payload, time FROM events WHERE type = ? "
      "ORDER BY id DESC LIMIT 1");
  s.bind(1, type);
  if (!s.step()) return std::nullopt;
  return read_event(s);
}

std::int64_t Store::last_event_id() {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare("SELECT coalesce(max(id), 0) FROM events");
  s.step();
  return s.int64(0);
}

std::vector<JobRecord> Store::jobs_page(std::optional<JobState> state, std::int64_t campaign_id,
                                        int limit, int offset) {
  std::lock_guard lock(mutex_);
  // With a campaign, a plain "campaign_id = ?2" so that its index is used (see count_measurements).
  auto s = db_.prepare(std::string(kJobColumns) +
                       (campaign_id == 0 ? "WHERE (?1 = '' OR state = ?1) AND ?2 = 0 "
                                         : "WHERE campaign_id = ?2 AND (?1 = '' OR state = ?1) ") +
                       "ORDER BY id LIMIT ?3 OFFSET ?4");
  s.bind(1, filter_text(state)).bind(2, campaign_id).bind(3, limit).bind(4, offset);
  std::vector<JobRecord> out;
  while (s.step()) out.push_back(read_job(s));
  return out;
}

std::int64_t Store::count_jobs(std::optional<JobState> state, std::int64_t campaign_id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(
      campaign_id == 0
          ? "SELECT count(*) FROM jobs WHERE (?1 = '' OR state = ?1) AND ?2 = 0"
          : "SELECT count(*) FROM jobs WHERE campaign_id = ?2 AND (?1 = '' OR state = ?1)");
  s.bind(1, filter_text(state)).bind(2, campaign_id);
  s.step();
  return s.int64(0);
}

std::vector<Store::MeasurementRow> Store::measurements_page(std::int64_t campaign_id, int limit,
                                                            int offset) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare(
      "SELECT runs.id, runs.job_id, runs.context_id, runs.purpose, runs.algorithm, runs.segsize, "
      "runs.fanout, runs.repeat, runs.outcome, m.msg_size, m.avg_us, m.min_us, m.max_us, "
      "m.iterations, runs.recorded_at FROM measurements m JOIN runs ON m.run_id = runs.id "
      "JOIN jobs ON runs.job_id = jobs.id WHERE jobs.campaign_id = ? "
      "ORDER BY runs.id, m.msg_size LIMIT ? OFFSET ?");
  s.bind(1, campaign_id).bind(2, limit).bind(3, offset);
  std::vector<MeasurementRow> out;
  while (s.step()) {
    MeasurementRow r;
    r.run_id = s.int64(0);
    r.job_id = s.int64(1);
    r.context_id = s.int64(2);
    r.purpose = stored_enum(parse_job_purpose, s.text(3), "runs", "purpose", r.run_id);
    r.config = TuningConfig{s.integer(4), s.integer(5), s.integer(6)};
    r.repeat = s.integer(7);
    r.outcome = stored_enum(parse_run_outcome, s.text(8), "runs", "outcome", r.run_id);
    r.row.size = s.int64(9);
    r.row.avg_us = s.real(10);
    r.row.min_us = s.optional_real(11);
    r.row.max_us = s.optional_real(12);
    r.row.iterations = s.optional_int64(13);
    r.recorded_at = s.real(14);
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// (value, count) of each group of `query` (SELECT column, count(*), min(id) ... GROUP BY
// column); a stored text that names no value is an error naming a row of it, as in every read.
template <typename E>
std::vector<std::pair<E, std::int64_t>> grouped_counts(sql::Database& db, const char* query,
                                                       std::optional<E> (*parse)(std::string_view),
                                                       const char* table, const char* column) {
  auto s = db.prepare(query);
  std::vector<std::pair<E, std::int64_t>> out;
  while (s.step())
    out.emplace_back(stored_enum(parse, s.text(0), table, column, s.int64(2)), s.int64(1));
  return out;
}
}  // namespace

std::vector<std::pair<CampaignState, std::int64_t>> Store::campaign_state_counts() {
  std::lock_guard lock(mutex_);
  return grouped_counts(
      db_, "SELECT state, count(*), min(id) FROM campaigns GROUP BY state ORDER BY state",
      parse_campaign_state, "campaigns", "state");
}

std::vector<std::pair<JobState, std::int64_t>> Store::job_state_counts() {
  std::lock_guard lock(mutex_);
  return grouped_counts(db_,
                        "SELECT state, count(*), min(id) FROM jobs GROUP BY state ORDER BY state",
                        parse_job_state, "jobs", "state");
}

std::vector<std::pair<RunOutcome, std::int64_t>> Store::run_outcome_counts() {
  std::lock_guard lock(mutex_);
  return grouped_counts(
      db_, "SELECT outcome, count(*), min(id) FROM runs GROUP BY outcome ORDER BY outcome",
      parse_run_outcome, "runs", "outcome");
}

Store::CampaignProgress Store::campaign_progress(std::int64_t campaign_id) {
  std::lock_guard lock(mutex_);
  CampaignProgress p;
  auto c = db_.prepare(
      "SELECT count(*), coalesce(sum(state = ?2), 0) FROM contexts WHERE campaign_id = ?1");
  c.bind(1, campaign_id).bind(2, to_string(ContextState::done));
  c.step();
  p.contexts = c.int64(0);
  p.contexts_done = c.int64(1);
  auto r = db_.prepare(
      "SELECT count(*) FROM runs JOIN contexts ON runs.context_id = contexts.id "
      "WHERE contexts.campaign_id = ?");
  r.bind(1, campaign_id);
  r.step();
  p.runs = r.int64(0);
  return p;
}

std::vector<ContextState> Store::context_states(std::int64_t campaign_id) {
  std::lock_guard lock(mutex_);
  auto s = db_.prepare("SELECT id, state FROM contexts WHERE campaign_id = ? ORDER BY id");
  s.bind(1, campaign_id);
  std::vector<ContextState> out;
  while (s.step())
    out.push_back(stored_enum(parse_context_state, s.text(1), "contexts", "state", s.int64(0)));
  return out;
}

}  // namespace colltune
