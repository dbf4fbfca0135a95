// Issue 20 items 9 and 12: a campaign the backend cannot sanely run is refused when it is
// created, with the reason, before anything is stored or run: a collective the backend cannot
// benchmark, more local ranks than the ranks-per-core limit, a simulation past the memory cap,
// a warm start from a campaign that does not exist.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/store.h"
#include "runner/backend_factory.h"
#include "runner/local_backend.h"
#include "runner/sim_backend.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

class CampaignAdmission : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("colltune-admission-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    store_ = std::make_unique<Store>((dir_ / "store.db").string());
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  static CampaignSpec spec(const std::string& backend, const std::string& collective,
                           int comm_size) {
    return parse_campaign_spec(
        {{"backend", backend},
         {"contexts", {{{"collective", collective}, {"comm_size", comm_size}}}},
         {"sizes", "4:1M"}});
  }

  // The reason check_admissible gives, or "" when it accepts.
  std::string refusal(Backend& backend, const CampaignSpec& s) {
    try {
      CampaignEngine::check_admissible(*store_, backend, s);
      return {};
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(CampaignAdmission, SimRefusesACollectiveItCannotBenchmark) {
  // Before: accepted, and the campaign failed after 5 runs, each "unavailable".
  auto sim = make_backend("sim", nlohmann::json::object());
  const std::string reason = refusal(*sim, spec("sim", "alltoall", 4));
  EXPECT_NE(reason.find("contexts[0]: alltoall P=4"), std::string::npos) << reason;
  EXPECT_NE(reason.find("not alltoall"), std::string::npos) << reason;
  EXPECT_EQ(refusal(*sim, spec("sim", "bcast", 4)), "");
}

TEST_F(CampaignAdmission, SimRefusesWhatWouldPassItsMemoryCap) {
  // Before: comm_size 10^7 was simulated and pushed the daemon to 4.1 GB.
  auto sim = make_backend("sim", nlohmann::json::object());
  const std::string reason = refusal(*sim, spec("sim", "bcast", 10'000'000));
  EXPECT_NE(reason.find("MiB cap"), std::string::npos) << reason;
  EXPECT_EQ(refusal(*sim, spec("sim", "bcast", 576)), "");
  // The cap is a setting.
  auto small = make_backend("sim", {{"max_memory_mb", 150}});
  EXPECT_NE(refusal(*small, spec("sim", "bcast", 4096)), "");
  EXPECT_GT(sim_memory_estimate_mb(10'000), sim_memory_estimate_mb(1'000));
  EXPECT_THROW(make_backend("sim", {{"max_memory_mb", "lots"}}), std::invalid_argument);
}

TEST_F(CampaignAdmission, LocalRefusesMoreRanksPerCoreThanItsLimit) {
  // Before: `tune --np 10000 --backend local` launched 10,000 oversubscribed ranks.
  const fs::path omb = dir_ / "omb";
  fs::create_directories(omb);
  std::ofstream(omb / "osu_bcast") << "#!/bin/sh\nexit 0\n";
  ::chmod((omb / "osu_bcast").c_str(), 0755);
  LocalBackendOptions options;
  options.osu_dir = omb;
  options.cores = 2;
  LocalBackend local(options);
  const std::string reason = refusal(local, spec("local", "bcast", 10000));
  EXPECT_NE(reason.find("ranks per core"), std::string::npos) << reason;
  EXPECT_EQ(refusal(local, spec("local", "bcast", 16)), "");  // 8 per core: the default limit
  EXPECT_NE(refusal(local, spec("local", "bcast", 17)), "");
  // A collective with no benchmark binary is refused too.
  EXPECT_NE(refusal(local, spec("local", "alltoall", 4)).find("no osu_alltoall"),
            std::string::npos);
  options.max_ranks_per_core = 64;
  LocalBackend roomy(options);
  EXPECT_EQ(refusal(roomy, spec("local", "bcast", 128)), "");
}

TEST_F(CampaignAdmission, WarmStartFromAMissingCampaignIsRefused) {
  // Before: silently ignored (a cold start under a warm-start label).
  auto sim = make_backend("sim", nlohmann::json::object());
  auto s = spec("sim", "bcast", 4);
  s.warm_start_from = 42;
  EXPECT_NE(refusal(*sim, s).find("warm_start_from: no campaign 42"), std::string::npos);
  s.warm_start_from = CampaignEngine::create_campaign(*store_, spec("sim", "bcast", 4));
  EXPECT_EQ(refusal(*sim, s), "");
}

}  // namespace
}  // namespace colltune
