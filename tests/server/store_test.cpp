#include "server/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

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
    auto campaign = store.create_campaign("c", {{"backend", "local"}}, "queued");
    context_id = store.add_context(campaign, Collective::bcast, 4, 1, 0);
    job_id = store.create_job(campaign, context_id, "tag-1", "local", "search", {{"x", 1}});
    EXPECT_EQ(store.job(job_id)->state, "submitting");
    EXPECT_TRUE(store.record_run(job_id, context_id, "search", make_run(0, 0)));
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
  auto campaign = store.create_campaign("c", {}, "running");
  auto ctx = store.add_context(campaign, Collective::gather, 4, 1, 0);
  auto job = store.create_job(campaign, ctx, "tag", "local", "search", {});
  EXPECT_TRUE(store.record_run(job, ctx, "search", make_run(1, 0)));
  EXPECT_FALSE(store.record_run(job, ctx, "search", make_run(1, 0)));
  EXPECT_TRUE(store.record_run(job, ctx, "search", make_run(1, 1)));
  EXPECT_EQ(store.runs_of_job(job).size(), 2u);
  EXPECT_EQ(store.count_measurements(campaign), 4);
}

TEST_F(StoreTest, JobTagsAreUnique) {
  Store store(path_);
  auto campaign = store.create_campaign("c", {}, "running");
  auto ctx = store.add_context(campaign, Collective::bcast, 4, 1, 0);
  store.create_job(campaign, ctx, "same", "local", "search", {});
  EXPECT_THROW(store.create_job(campaign, ctx, "same", "local", "search", {}), sql::Error);
}

TEST_F(StoreTest, CompleteJobSavesStateAtomically) {
  Store store(path_);
  auto campaign = store.create_campaign("c", {}, "running");
  auto ctx = store.add_context(campaign, Collective::bcast, 4, 1, 0);
  auto job = store.create_job(campaign, ctx, "t", "local", "search", {});
  store.complete_job(job, "done", ctx, {{"next", 8}});
  EXPECT_EQ(store.job(job)->state, "done");
  EXPECT_EQ(store.context(ctx)->optimizer_state.at("next"), 8);
  EXPECT_TRUE(store.unfinished_jobs().empty());
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
  {
    Store store(newer);
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  EXPECT_THROW(Store store(newer), sql::Error);
}

TEST_F(StoreTest, ListsCampaignsNewestFirstWithStateFilterAndEvents) {
  Store store(path_);
  auto a = store.create_campaign("a", {}, "done");
  auto b = store.create_campaign("b", {}, "running");
  auto list = store.campaigns();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, b);
  EXPECT_EQ(store.campaigns("done").at(0).id, a);
  EXPECT_EQ(store.count_campaigns("running"), 1);
  auto e1 = store.add_event(a, "run", {{"n", 1}});
  store.add_event(b, "run", {{"n", 2}});
  auto after = store.events_after(e1);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].payload.at("n"), 2);
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

}  // namespace
}  // namespace colltune
