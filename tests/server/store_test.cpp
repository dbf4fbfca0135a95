#include "campaign/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>

#include "campaign/database_owner.h"
#include "campaign/rules_deployment.h"
#include "core/file_text.h"

namespace colltune {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("colltune-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "test.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RunResult make_run(std::size_t index, int repeat) {
    RunResult r;
    r.config_index = index;
    r.repeat = repeat;
    r.config = TuningConfig{6, 8192, 0};
    r.outcome = RunOutcome::ok;
    r.provenance.backend = "local";
    r.provenance.argv = {"mpirun", "-np", "4", "osu_bcast"};
    r.provenance.start_time = 100;
    r.provenance.end_time = 101.5;
    r.rows = {{4, 1.5, 1.2, 1.9, 100, std::nullopt}, {8, 2.5, 2.0, 3.0, 100, std::nullopt}};
    return r;
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(StoreTest, RecordsRunsWithMeasurementsAndProvenanceAcrossReopen) {
  std::int64_t job_id = 0, context_id = 0;
  {
    Store store(path_);
    auto campaign = store.create_campaign("c", {{"backend", "local"}}, CampaignState::queued);
    context_id = store.add_context(campaign, Collective::bcast, 4, 1, 0);
    job_id =
        store.create_job(campaign, context_id, "tag-1", "local", JobPurpose::search, {{"x", 1}});
    EXPECT_EQ(store.job(job_id)->state, JobState::submitting);
    EXPECT_TRUE(store.record_run(job_id, context_id, JobPurpose::search, make_run(0, 0)));
  }
  Store reopened(path_);
  auto runs = reopened.runs_of_context(context_id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].config, (TuningConfig{6, 8192, 0}));
  ASSERT_EQ(runs[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ(runs[0].rows[1].avg_us, 2.5);
  EXPECT_EQ(runs[0].rows[1].iterations, 100);
  EXPECT_EQ(runs[0].provenance.argv.back(), "osu_bcast");
  EXPECT_EQ(reopened.count_measurements(), 2);
  EXPECT_EQ(reopened.unfinished_jobs().size(), 1u);
}

TEST_F(StoreTest, RecordingTheSameRunTwiceStoresItOnce) {
  Store store(path_);
  auto campaign = store.create_campaign("c", {}, CampaignState::running);
  auto ctx = store.add_context(campaign, Collective::gather, 4, 1, 0);
  auto job = store.create_job(campaign, ctx, "tag", "local", JobPurpose::search, {});
  EXPECT_TRUE(store.record_run(job, ctx, JobPurpose::search, make_run(1, 0)));
  EXPECT_FALSE(store.record_run(job, ctx, JobPurpose::search, make_run(1, 0)));
  EXPECT_TRUE(store.record_run(job, ctx, JobPurpose::search, make_run(1, 1)));
  EXPECT_EQ(store.runs_of_job(job).size(), 2u);
  EXPECT_EQ(store.count_measurements(campaign), 4);
}

TEST_F(StoreTest, JobTagsAreUnique) {
  Store store(path_);
  auto campaign = store.create_campaign("c", {}, CampaignState::running);
  auto ctx = store.add_context(campaign, Collective::bcast, 4, 1, 0);
  store.create_job(campaign, ctx, "same", "local", JobPurpose::search, {});
  EXPECT_THROW(store.create_job(campaign, ctx, "same", "local", JobPurpose::search, {}),
               sql::Error);
}

TEST_F(StoreTest, CompleteJobSavesStateAtomically) {
  Store store(path_);
  auto campaign = store.create_campaign("c", {}, CampaignState::running);
  auto ctx = store.add_context(campaign, Collective::bcast, 4, 1, 0);
  auto job = store.create_job(campaign, ctx, "t", "local", JobPurpose::search, {});
  store.complete_job(job, JobState::done, ctx, {{"next", 8}});
  EXPECT_EQ(store.job(job)->state, JobState::done);
  EXPECT_EQ(store.context(ctx)->optimizer_state.at("next"), 8);
  EXPECT_TRUE(store.unfinished_jobs().empty());
}

TEST_F(StoreTest, ABatchOfJobsAndItsStateAreRecordedAllOrNothing) {
  // A search batch (one job per context) and the strategy's state after it, on the context
  // that holds it: one transaction to create, one to complete.
  Store store(path_);
  auto campaign = store.create_campaign("c", {}, CampaignState::running);
  auto lead = store.add_context(campaign, Collective::bcast, 2, 1, 0);
  auto other = store.add_context(campaign, Collective::bcast, 4, 1, 0);
  store.save_optimizer_state(lead, {{"next", 1}});
  store.create_job(campaign, other, "taken", "local", JobPurpose::search, {});
  // A job that cannot be recorded (its tag is taken) records none of the batch, nor the state.
  EXPECT_THROW(store.create_jobs(campaign, "local", JobPurpose::search,
                                 {{lead, "b1", {{"np", 2}}}, {other, "taken", {{"np", 4}}}}, lead,
                                 {{"next", 2}}),
               sql::Error);
  EXPECT_FALSE(store.job_by_tag("b1"));
  EXPECT_EQ(store.context(lead)->optimizer_state.at("next"), 1);

  const auto ids = store.create_jobs(campaign, "local", JobPurpose::search,
                                     {{other, "b1", {{"np", 4}}}, {lead, "b2", {{"np", 2}}}}, lead,
                                     {{"next", 2}});
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(store.job(ids[0])->tag, "b1");
  EXPECT_EQ(store.job(ids[0])->context_id, other);
  EXPECT_EQ(store.job(ids[0])->request.at("np"), 4);
  EXPECT_EQ(store.job(ids[1])->tag, "b2");
  EXPECT_EQ(store.job(ids[1])->state, JobState::submitting);
  EXPECT_EQ(store.context(lead)->optimizer_state.at("next"), 2);
  EXPECT_TRUE(store.context(other)->optimizer_state.is_null());

  store.complete_jobs(ids, JobState::done, lead, {{"next", 3}});
  for (const auto id : ids) EXPECT_EQ(store.job(id)->state, JobState::done);
  EXPECT_EQ(store.context(lead)->optimizer_state.at("next"), 3);
}

TEST_F(StoreTest, OnCommitRunsAfterEachCommitWhenAnotherConnectionSeesIt) {
  // The hook of the kill-after-any-commit test (Store::on_commit): called once per commit (a
  // transaction of several writes or one statement on its own), when another connection reads
  // what it committed; not for a transaction rolled back; gone when set empty. The WAL is still
  // checkpointed, as SQLite's automatic checkpoint (which the hook replaces) does.
  Store store(path_);
  auto campaign = store.create_campaign("c", {}, CampaignState::running);
  auto context = store.add_context(campaign, Collective::bcast, 2, 1, 0);
  std::vector<std::int64_t> jobs_seen;  // per call: the jobs another connection reads
  store.on_commit([&] {
    sql::Database other(path_);
    auto s = other.prepare("SELECT count(*) FROM jobs");
    ASSERT_TRUE(s.step());
    jobs_seen.push_back(s.int64(0));
  });
  store.create_jobs(campaign, "local", JobPurpose::search, {{context, "a", {}}, {context, "b", {}}},
                    context, {{"next", 1}});
  EXPECT_THROW(store.create_jobs(campaign, "local", JobPurpose::search,
                                 {{context, "c", {}}, {context, "a", {}}}, context, {{"next", 2}}),
               sql::Error);
  store.create_job(campaign, context, "c", "local", JobPurpose::search, {});
  EXPECT_EQ(jobs_seen, (std::vector<std::int64_t>{2, 3}));

  // About 12 MB of events, one commit each: the WAL is checkpointed past 1000 pages (4 MB)
  // and reused, so it stays near that size instead of holding them all.
  int commits = 0;
  store.on_commit([&] { ++commits; });
  const std::string payload(4000, 'x');
  for (int i = 0; i < 3000; ++i) store.add_event(campaign, "filler", {{"text", payload}});
  EXPECT_EQ(commits, 3000);
  EXPECT_LT(std::filesystem::file_size(path_ + "-wal"), 8'000'000u);

  store.on_commit(nullptr);
  store.create_job(campaign, context, "d", "local", JobPurpose::search, {});
  EXPECT_EQ(commits, 3000);
  EXPECT_EQ(jobs_seen.size(), 2u);
}

TEST_F(StoreTest, RefusesForeignAndNewerDatabases) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE other (x)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  EXPECT_THROW(Store store(path_), sql::Error);
  const std::string newer = (dir_ / "newer.db").string();
  { Store store(newer); }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  EXPECT_THROW(Store store(newer), sql::Error);
  // A negative version (SQLite's user_version is signed) is no version colltune wrote.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version=-1", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  try {
    Store store(newer);
    ADD_FAILURE() << "a store of schema version -1 was opened";
  } catch (const sql::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a colltune store"), std::string::npos) << e.what();
  }
}

// The newest event of a type (the metrics ask for rare ones: the last sentinel report, the last
// retune) is found through an index on the events' type, which a store of an older schema gets
// when it is opened; its events are all still there.
TEST_F(StoreTest, TheLastEventOfATypeUsesAnIndexThatOlderStoresGet) {
  auto plan = [&](const std::string& path) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db,
                                 "EXPLAIN QUERY PLAN SELECT id, campaign_id, type, payload, time "
                                 "FROM events WHERE type = ? ORDER BY id DESC LIMIT 1",
                                 -1, &stmt, nullptr),
              SQLITE_OK);
    std::string text;
    while (sqlite3_step(stmt) == SQLITE_ROW)
      text += reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3)) + std::string("\n");
    sqlite3_finalize(stmt);
    int version = 0;
    sqlite3_exec(
        db, "PRAGMA user_version",
        [](void* v, int, char** row, char**) {
          *static_cast<int*>(v) = std::atoi(row[0]);
          return 0;
        },
        &version, nullptr);
    sqlite3_close(db);
    return std::make_pair(version, text);
  };
  std::int64_t last_retune = 0;
  {
    Store store(path_);
    const auto c = store.create_campaign("c", {}, CampaignState::done);
    for (int i = 0; i < 50; ++i) {
      store.add_event(c, "run", {{"n", i}});
      if (i == 10) last_retune = store.add_event(std::nullopt, "retune_started", {{"n", i}});
    }
  }
  auto [version, text] = plan(path_);
  EXPECT_EQ(version, Store::kSchemaVersion);
  EXPECT_NE(text.find("USING INDEX events_by_type"), std::string::npos) << text;
  // A store of schema 2 (before the index): opened, it gets it and keeps its events.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DROP INDEX events_by_type; PRAGMA user_version=2", nullptr, nullptr,
                           nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  std::tie(version, text) = plan(path_);
  ASSERT_EQ(version, 2);
  EXPECT_NE(text.find("SCAN"), std::string::npos) << text;  // what older stores did
  {
    Store store(path_);
    EXPECT_EQ(store.events_after(0, 1000).size(), 51u);
    const auto last = store.last_event_of_type("retune_started");
    ASSERT_TRUE(last);
    EXPECT_EQ(last->id, last_retune);
    EXPECT_FALSE(store.last_event_of_type("sentinel_report"));
  }
  std::tie(version, text) = plan(path_);
  EXPECT_EQ(version, Store::kSchemaVersion);
  EXPECT_NE(text.find("USING INDEX events_by_type"), std::string::npos) << text;
}

TEST_F(StoreTest, ListsCampaignsNewestFirstWithStateFilterAndEvents) {
  Store store(path_);
  auto a = store.create_campaign("a", {}, CampaignState::done);
  auto b = store.create_campaign("b", {}, CampaignState::running);
  auto list = store.campaigns();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, b);
  EXPECT_EQ(store.campaigns(CampaignState::done).at(0).id, a);
  EXPECT_EQ(store.count_campaigns(CampaignState::running), 1);
  auto e1 = store.add_event(a, "run", {{"n", 1}});
  store.add_event(b, "run", {{"n", 2}});
  auto after = store.events_after(e1);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].payload.at("n"), 2);
}

// The text a state or purpose column holds for row `id` of `table`, read past the store.
std::string stored_text(const std::string& path, const std::string& table,
                        const std::string& column, std::int64_t id) {
  sql::Database raw(path);
  auto s = raw.prepare("SELECT " + column + " FROM " + table + " WHERE id = ?");
  s.bind(1, id);
  EXPECT_TRUE(s.step()) << table << " " << id;
  return s.text(0);
}

TEST_F(StoreTest, EveryStateAndPurposeRoundTripsAsItsStoredString) {
  Store store(path_);
  for (const CampaignState state :
       {CampaignState::queued, CampaignState::running, CampaignState::paused, CampaignState::done,
        CampaignState::failed, CampaignState::cancelled}) {
    const auto created = store.create_campaign("c", {}, state);
    EXPECT_EQ(store.campaign(created)->state, state) << to_string(state);
    EXPECT_EQ(stored_text(path_, "campaigns", "state", created), to_string(state));
    const auto set = store.create_campaign("s", {}, CampaignState::queued);
    store.set_campaign_state(set, state, "why");
    EXPECT_EQ(store.campaign(set)->state, state) << to_string(state);
    EXPECT_EQ(stored_text(path_, "campaigns", "state", set), to_string(state));
    const auto listed = store.campaigns(state);
    EXPECT_EQ(static_cast<std::int64_t>(listed.size()), store.count_campaigns(state));
    EXPECT_TRUE(std::all_of(listed.begin(), listed.end(),
                            [&](const CampaignRecord& c) { return c.state == state; }));
  }
  EXPECT_EQ(store.count_campaigns(), 12);

  const auto campaign = store.create_campaign("jobs", {}, CampaignState::running);
  for (const ContextState state :
       {ContextState::pending, ContextState::searching, ContextState::finalizing,
        ContextState::done, ContextState::failed}) {
    const auto ctx = store.add_context(campaign, Collective::bcast, 4, 1, 4);
    store.set_context_state(ctx, state);
    EXPECT_EQ(store.context(ctx)->state, state) << to_string(state);
    EXPECT_EQ(store.contexts(campaign).back().state, state);
    EXPECT_EQ(store.contexts_brief(campaign).back().state, state);
    EXPECT_EQ(store.context_states(campaign).back(), state);
    EXPECT_EQ(stored_text(path_, "contexts", "state", ctx), to_string(state));
  }
  const auto ctx = store.add_context(campaign, Collective::bcast, 4, 1, 4);
  EXPECT_EQ(store.context(ctx)->state, ContextState::pending);  // the default

  int tag = 0;
  for (const JobState state :
       {JobState::submitting, JobState::running, JobState::done, JobState::cancelled}) {
    const auto job = store.create_job(campaign, ctx, "state-" + std::to_string(++tag), "local",
                                      JobPurpose::search, {});
    EXPECT_EQ(store.job(job)->state, JobState::submitting);
    store.set_job_state(job, state);
    EXPECT_EQ(store.job(job)->state, state) << to_string(state);
    EXPECT_EQ(stored_text(path_, "jobs", "state", job), to_string(state));
    const auto page = store.jobs_page(state, campaign, 100, 0);
    ASSERT_EQ(page.size(), 1u) << to_string(state);
    EXPECT_EQ(page.at(0).id, job);
    EXPECT_EQ(store.count_jobs(state, campaign), 1);
    EXPECT_EQ(store.count_jobs(state, 0), 1);
    const auto unfinished = store.unfinished_jobs();
    EXPECT_EQ(std::any_of(unfinished.begin(), unfinished.end(),
                          [&](const JobRecord& j) { return j.id == job; }),
              is_unfinished(state));
  }
  EXPECT_EQ(store.count_jobs(std::nullopt, campaign), 4);
  const auto running = store.create_job(campaign, ctx, "running", "local", JobPurpose::search, {});
  store.set_job_backend_id(running, "b-1");
  EXPECT_EQ(store.job(running)->state, JobState::running);
  store.complete_job(running, JobState::done, ctx, nullptr);
  EXPECT_EQ(store.job(running)->state, JobState::done);

  std::size_t runs = 0;
  for (const JobPurpose purpose : kJobPurposes) {
    const std::string name = std::string("purpose-") + to_string(purpose);
    const auto job = store.create_job(campaign, ctx, name, "local", purpose, {});
    EXPECT_EQ(store.job(job)->purpose, purpose) << name;
    EXPECT_EQ(store.job_by_tag(name)->purpose, purpose) << name;
    EXPECT_EQ(stored_text(path_, "jobs", "purpose", job), to_string(purpose));
    ASSERT_TRUE(store.record_run(job, ctx, purpose, make_run(0, 0)));
    ++runs;
    const auto of_job = store.runs_of_job(job);
    ASSERT_EQ(of_job.size(), 1u);
    EXPECT_EQ(of_job.at(0).purpose, purpose) << name;
    EXPECT_EQ(stored_text(path_, "runs", "purpose", of_job.at(0).id), to_string(purpose));
    const auto filtered = store.runs_of_context(ctx, purpose);
    ASSERT_EQ(filtered.size(), 1u) << name;
    EXPECT_EQ(filtered.at(0).id, of_job.at(0).id);
    EXPECT_EQ(store.runs_of_context(ctx).size(), runs);
  }
  std::set<JobPurpose> measured;
  for (const auto& row : store.measurements_page(campaign, 1000, 0)) measured.insert(row.purpose);
  EXPECT_EQ(measured, std::set<JobPurpose>(std::begin(kJobPurposes), std::end(kJobPurposes)));
}

// Writes text that names no state or purpose into `column` of row `id` past the store, expects
// `read` to throw an error naming the table, the row, the column and the text (never a value
// made up in its place), and puts the stored text back.
void expect_refused(const std::string& path, const std::string& table, const std::string& column,
                    std::int64_t id, const std::function<void()>& read) {
  const std::string bad = "exploded-" + column;
  const std::string good = stored_text(path, table, column, id);
  auto write = [&](const std::string& text) {
    sql::Database raw(path);
    raw.prepare("UPDATE " + table + " SET " + column + " = ? WHERE id = ?")
        .bind(1, text)
        .bind(2, id)
        .exec();
  };
  write(bad);
  try {
    read();
    ADD_FAILURE() << table << "." << column << " '" << bad << "' was read without an error";
  } catch (const sql::Error& e) {
    const std::string what = e.what();
    for (const std::string& part :
         {"'" + bad + "'", "table " + table, "id " + std::to_string(id), column})
      EXPECT_NE(what.find(part), std::string::npos) << part << " in: " << what;
  }
  write(good);
}

TEST_F(StoreTest, AStoredStateOrPurposeThatNamesNoneIsAnError) {  // or collective, or outcome
  Store store(path_);
  const auto campaign = store.create_campaign("c", {}, CampaignState::running);
  const auto ctx = store.add_context(campaign, Collective::bcast, 4, 1, 4);
  const auto job = store.create_job(campaign, ctx, "t", "local", JobPurpose::search, {});
  ASSERT_TRUE(store.record_run(job, ctx, JobPurpose::search, make_run(0, 0)));
  const auto run = store.runs_of_job(job).at(0).id;

  expect_refused(path_, "runs", "purpose", run, [&] { store.runs_of_context(ctx); });
  expect_refused(path_, "runs", "purpose", run, [&] { store.runs_of_job(job); });
  expect_refused(path_, "runs", "purpose", run, [&] { store.measurements_page(campaign, 10, 0); });
  expect_refused(path_, "jobs", "purpose", job, [&] { store.job(job); });
  expect_refused(path_, "jobs", "state", job, [&] { store.jobs(campaign); });
  expect_refused(path_, "jobs", "state", job, [&] { store.jobs_page(std::nullopt, 0, 10, 0); });
  expect_refused(path_, "contexts", "state", ctx, [&] { store.context(ctx); });
  expect_refused(path_, "contexts", "state", ctx, [&] { store.contexts_brief(campaign); });
  expect_refused(path_, "contexts", "state", ctx, [&] { store.context_states(campaign); });
  expect_refused(path_, "campaigns", "state", campaign, [&] { store.campaign(campaign); });
  expect_refused(path_, "campaigns", "state", campaign, [&] { store.campaigns(); });
  // The collective and the run outcome: no silent default (bcast, failed) either.
  expect_refused(path_, "contexts", "collective", ctx, [&] { store.context(ctx); });
  expect_refused(path_, "contexts", "collective", ctx, [&] { store.contexts(campaign); });
  expect_refused(path_, "runs", "outcome", run, [&] { store.runs_of_job(job); });
  expect_refused(path_, "runs", "outcome", run, [&] { store.measurements_page(campaign, 10, 0); });
  // The metrics' counts.
  expect_refused(path_, "campaigns", "state", campaign, [&] { store.campaign_state_counts(); });
  expect_refused(path_, "jobs", "state", job, [&] { store.job_state_counts(); });
  expect_refused(path_, "runs", "outcome", run, [&] { store.run_outcome_counts(); });
  // Each put back: the rows read as before.
  EXPECT_EQ(store.campaign(campaign)->state, CampaignState::running);
  EXPECT_EQ(store.context(ctx)->state, ContextState::pending);
  EXPECT_EQ(store.job(job)->state, JobState::submitting);
  EXPECT_EQ(store.runs_of_job(job).at(0).purpose, JobPurpose::search);
  EXPECT_EQ(store.runs_of_job(job).at(0).outcome, RunOutcome::ok);
  EXPECT_EQ(store.context(ctx)->collective, Collective::bcast);
  EXPECT_EQ(store.job_state_counts(),
            (std::vector<std::pair<JobState, std::int64_t>>{{JobState::submitting, 1}}));
}

// A JSON column that is not JSON (a damaged database) is an error naming its row, not a value
// that reads as absent: a job's request, a run's provenance, a campaign's spec.
TEST_F(StoreTest, AStoredJsonColumnThatIsNotJsonIsAnError) {
  Store store(path_);
  const auto campaign = store.create_campaign("c", {{"name", "c"}}, CampaignState::running);
  const auto ctx = store.add_context(campaign, Collective::bcast, 4, 1, 4);
  store.save_optimizer_state(ctx, {{"runs", 1}});
  const auto job = store.create_job(campaign, ctx, "t", "local", JobPurpose::search, {{"np", 4}});
  ASSERT_TRUE(store.record_run(job, ctx, JobPurpose::search, make_run(0, 0)));
  const auto run = store.runs_of_job(job).at(0).id;
  RulesVersionRecord rules;
  rules.campaign_id = campaign;
  rules.format = "ompi-4.1";
  rules.content = "1\n";
  rules.validation = {{"ok", true}};
  rules.verification = {{"verdict", "ok"}};
  rules.fingerprint = {{"host", "h"}};
  const auto version = store.add_rules_version(rules);
  const auto event = store.add_event(campaign, "test", {{"x", 1}});

  expect_refused(path_, "campaigns", "spec", campaign, [&] { store.campaign(campaign); });
  expect_refused(path_, "contexts", "optimizer_state", ctx, [&] { store.context(ctx); });
  expect_refused(path_, "jobs", "request", job, [&] { store.job(job); });
  expect_refused(path_, "runs", "provenance", run, [&] { store.runs_of_job(job); });
  for (const char* column : {"validation", "verification", "fingerprint"})
    expect_refused(path_, "rules_versions", column, version, [&] { store.rules_version(version); });
  expect_refused(path_, "events", "payload", event, [&] { store.events_after(0); });
  expect_refused(path_, "events", "payload", event, [&] { store.last_event_of_type("test"); });
  // Each put back: read as written.
  EXPECT_EQ(store.campaign(campaign)->spec, (nlohmann::json{{"name", "c"}}));
  EXPECT_EQ(store.job(job)->request, (nlohmann::json{{"np", 4}}));
  EXPECT_EQ(store.rules_version(version)->fingerprint, (nlohmann::json{{"host", "h"}}));
  EXPECT_EQ(store.events_after(0).back().payload, (nlohmann::json{{"x", 1}}));
}

}  // namespace
}  // namespace colltune

namespace colltune {
namespace {

TEST(RunOrder, OnlyRunsKeepsOrderAndIdentity) {
  BenchmarkRequest r;
  r.configs = {TuningConfig{}, TuningConfig{1, 0, 0}, TuningConfig{6, 0, 0}};
  r.repeats = 2;
  r.order_seed = 42;
  const auto full = run_order(r);
  ASSERT_EQ(full.size(), 6u);
  r.only_runs = {{2, 1}, {0, 0}};
  const auto part = run_order(r);
  ASSERT_EQ(part.size(), 2u);
  // Same relative order as in the full job.
  auto pos = [&](std::pair<std::size_t, int> run) {
    return std::find(full.begin(), full.end(), run) - full.begin();
  };
  EXPECT_LT(pos(part[0]), pos(part[1]));
  r.only_runs = {{3, 0}};
  EXPECT_THROW(validate_request(r), std::invalid_argument);
  // The field survives the job record.
  r.only_runs = {{1, 1}};
  EXPECT_EQ(nlohmann::json(r).get<BenchmarkRequest>().only_runs, r.only_runs);
}

// Issue 20.8: a 0-byte file is not silently turned into an empty store; a new path is.
TEST_F(StoreTest, EmptyFileIsRefusedNewPathIsCreated) {
  std::ofstream(path_).flush();
  try {
    Store store(path_);
    FAIL() << "a 0-byte file was accepted";
  } catch (const sql::Error& e) {
    EXPECT_NE(std::string(e.what()).find("empty file (0 bytes)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::filesystem::file_size(path_), 0u);
  std::filesystem::remove(path_);
  Store created(path_);
  EXPECT_EQ(created.count_campaigns(), 0);
}

// Issue 20.8: damaged pages are found at open (PRAGMA quick_check), with the reason.
TEST_F(StoreTest, DamagedStoreIsRefusedAtOpen) {
  {
    Store store(path_);
    for (int i = 0; i < 200; ++i)
      store.create_campaign("campaign " + std::to_string(i), {{"pad", std::string(300, 'x')}},
                            CampaignState::done);
  }
  ASSERT_FALSE(std::filesystem::exists(path_ + "-wal") &&
               std::filesystem::file_size(path_ + "-wal"));
  ASSERT_GT(std::filesystem::file_size(path_), 8u * 4096);
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3 * 4096);
    const std::string garbage(4096, '\x5A');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  try {
    Store store(path_);
    FAIL() << "a damaged store was opened";
  } catch (const sql::Error& e) {
    EXPECT_NE(std::string(e.what()).find("quick_check"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
  }
}

// Issue 20.2: one owner per database, refused with the holder's pid and role.
TEST_F(StoreTest, OneOwnerPerDatabase) {
  {
    DatabaseOwner first(path_, "colltune serve");
    try {
      DatabaseOwner second(path_, "colltune tune --resume");
      FAIL() << "two owners of one database";
    } catch (const DatabaseInUse& e) {
      EXPECT_NE(std::string(e.what()).find("in use by process " + std::to_string(::getpid()) +
                                           " (colltune serve)"),
                std::string::npos)
          << e.what();
    }
  }
  DatabaseOwner after(path_, "colltune tune");  // released with its owner
  DatabaseOwner memory(":memory:", "test");     // nothing to lock
  DatabaseOwner memory_again(":memory:", "test");
}

// Issue 20.6: a deploy whose database record fails leaves the live file as it was.
class DeployRecordTest : public StoreTest {
 protected:
  std::int64_t add_version(Store& store, const std::string& content) {
    RulesVersionRecord r;
    r.format = "classic";
    r.content = content;
    r.validation = {{"deployable", true}};
    r.verification = {{"verified", true}};
    return store.add_rules_version(r);
  }
};

TEST_F(DeployRecordTest, RecordFailureTakesTheFileBack) {
  Store store(path_);
  const auto v1 = add_version(store, "A\n");
  const auto v2 = add_version(store, "B\n");
  const auto target = dir_ / "live.conf";
  deploy_recorded(store, *store.rules_version(v1), target, {});
  ASSERT_EQ(read_file_text(target).value_or(""), "A\n");
  // The record of the next deploy fails after the file went live (as a full disk or a lock
  // would make it): the file must be taken back.
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw,
                           "CREATE TRIGGER fail_deploy BEFORE UPDATE OF deployed_to ON "
                           "rules_versions WHEN NEW.deployed_to != '' BEGIN SELECT "
                           "RAISE(ABORT, 'injected record failure'); END;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  EXPECT_THROW(deploy_recorded(store, *store.rules_version(v2), target, {}), sql::Error);
  EXPECT_EQ(read_file_text(target).value_or(""), "A\n");
  EXPECT_EQ(active_version(target), 1);
  EXPECT_EQ(deploy_history(target).size(), 2u);  // 0000 (absent) and 0001; 0002 forgotten
  EXPECT_EQ(store.rules_version(v1)->deployed_to, target.string());
  EXPECT_EQ(store.rules_version(v2)->deployed_to, "");
}

TEST_F(DeployRecordTest, WriteLockHeldElsewhereLeavesTheFileUntouched) {
  Store store(path_);
  const auto v1 = add_version(store, "A\n");
  const auto target = dir_ / "live.conf";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  store.set_busy_timeout_ms(200);  // the daemon waits 10 s; the outcome is the same
  try {
    deploy_recorded(store, *store.rules_version(v1), target, {});
    ADD_FAILURE() << "deployed while the database was locked";
  } catch (const sql::Error& e) {
    EXPECT_TRUE(sql::is_busy(e)) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(target));
  sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  deploy_recorded(store, *store.rules_version(v1), target, {});
  EXPECT_EQ(read_file_text(target).value_or(""), "A\n");
  EXPECT_EQ(store.rules_version(v1)->deployed_to, target.string());
}

}  // namespace
}  // namespace colltune
