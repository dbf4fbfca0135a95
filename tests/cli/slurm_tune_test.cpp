// `colltune tune --backend slurm` on the real single-node dev cluster (slurm/dev-cluster start):
// a campaign of two collectives completes through sbatch, its jobs carry Slurm job ids, its
// measurements have the shape of a local run, and the rules file verifies.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "campaign/store.h"
#include "runner/process.h"
#include "tests/support/temp_dir.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

TEST(SlurmTune, TwoCollectiveCampaignThroughSbatch) {
  auto ping = run_process({"scontrol", "ping"}, {.timeout_s = 10});
  if (!ping.succeeded() || ping.stdout_text.find("is UP") == std::string::npos)
    GTEST_SKIP() << "no Slurm controller answers `scontrol ping` (slurm/dev-cluster start)";
  const testing::TempDir scratch("colltune-slurm-tune");
  const fs::path& dir = scratch.path();
  const std::string db = (dir / "t.db").string();
  auto r = run_process({COLLTUNE_BINARY,
                        "tune",
                        "--backend",
                        "slurm",
                        "--collectives",
                        "bcast,gather",
                        "--np",
                        "4",
                        "--sizes",
                        "4:1024",
                        "--strategy",
                        "random",
                        "--budget",
                        "3",
                        "--iterations",
                        "20",
                        "--warmup",
                        "2",
                        "--batch-size",
                        "3",
                        "--final-repeats",
                        "2",
                        "--osu-dir",
                        COLLTUNE_OSU_BENCH_DIR,
                        "--db",
                        db,
                        "--rules-out",
                        (dir / "rules.conf").string(),
                        "--report-out",
                        (dir / "report.json").string()},
                       {.timeout_s = 600});
  ASSERT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("rules file verified"), std::string::npos) << r.stdout_text;

  std::ifstream in(dir / "report.json");
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report.at("results").size(), 2u * 9u);  // 4 B .. 1 KiB

  Store store(db);
  const auto jobs = store.jobs(1);
  ASSERT_FALSE(jobs.empty());
  for (const auto& job : jobs) {
    EXPECT_EQ(job.backend, "slurm");
    EXPECT_EQ(job.state, JobState::done);
    ASSERT_FALSE(job.backend_job_id.empty()) << job.tag;
    EXPECT_NE(job.backend_job_id.find_first_of("0123456789"), std::string::npos);
    for (const auto& run : store.runs_of_job(job.id)) {
      EXPECT_EQ(run.provenance.job_id, job.backend_job_id);
      if (run.outcome != RunOutcome::ok) continue;
      // The shape of a local run: every size the job asked for (a search run all 9, a final
      // run its look's span, docs/final-choice.md), with min/max/iterations.
      std::vector<std::int64_t> expected, sizes;
      for (std::int64_t m = job.request.at("min_size").get<std::int64_t>();
           m <= job.request.at("max_size").get<std::int64_t>(); m *= 2)
        expected.push_back(m);
      if (job.purpose == JobPurpose::search) {
        EXPECT_EQ(expected.size(), 9u);
      }
      for (const auto& row : run.rows) sizes.push_back(row.size);
      ASSERT_EQ(sizes, expected) << to_string(job.purpose);
      for (const auto& row : run.rows) {
        EXPECT_TRUE(row.min_us.has_value());
        EXPECT_EQ(row.iterations, job.purpose == JobPurpose::verify ? 20 : 20);
      }
    }
  }
}

}  // namespace
}  // namespace colltune
