// Re-tuning decisions with a controlled fingerprint source: rules versions whose fingerprint was
// collected from recorded command outputs (tests/server/data/fingerprint/), checked against the
// same recordings (no change: nothing), an Open MPI upgrade or a grown Slurm partition (a
// warm-started campaign with the same spec), rules too old, a forced re-tune, and the cases
// where nothing can be compared.
#include "campaign/retune.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json recorded(const std::vector<std::string>& overlays) {
  std::vector<fs::path> folders;
  for (const auto& o : overlays)
    folders.push_back(fs::path(COLLTUNE_TEST_DATA_DIR) / "fingerprint" / o);
  folders.push_back(fs::path(COLLTUNE_TEST_DATA_DIR) / "fingerprint" / "vm-ompi-4.1.4");
  FingerprintOptions options;
  options.osu_dir = "/opt/osu";
  return collect_fingerprint(recorded_command_runner(folders), options);
}

class RetuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = fs::temp_directory_path() /
          ("retune-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    fs::remove(db_);
    store_ = std::make_unique<Store>(db_.string());
  }
  void TearDown() override {
    store_.reset();
    fs::remove(db_);
  }

  // A finished campaign with a rules version tuned under `fingerprint`, deployed.
  std::int64_t tuned_campaign(const json& fingerprint) {
    const CampaignSpec spec =
        parse_campaign_spec({{"name", "nightly bcast"},
                             {"backend", "local"},
                             {"contexts", {{{"collective", "bcast"}, {"comm_size", 4}}}},
                             {"sizes", "4:1M"},
                             {"strategy", "bo"},
                             {"seed", 7}});
    const auto id = CampaignEngine::create_campaign(*store_, spec);
    store_->set_campaign_state(id, CampaignState::done);
    RulesVersionRecord r;
    r.campaign_id = id;
    r.format = "classic";
    r.content = "1\n7\n1\n4\n1\n0 1 0 0\n";
    r.fingerprint = fingerprint;
    r.validation = {{"deployable", true}};
    rules_id_ = store_->add_rules_version(r);
    store_->set_rules_deployed(rules_id_, "/etc/colltune/rules/colltune-rules.conf");
    return id;
  }

  RetuneDecision check(const json& now_fingerprint, RetuneOptions options = {}, double now = 0) {
    backends_asked_.clear();
    auto current = [&](const std::string& backend) {
      backends_asked_.push_back(backend);
      return now_fingerprint;
    };
    auto create = [&](const json& spec) {
      const auto id = CampaignEngine::create_campaign(*store_, parse_campaign_spec(spec));
      return *store_->campaign(id);
    };
    return retune(*store_, options, current, create, now);
  }

  fs::path db_;
  std::unique_ptr<Store> store_;
  std::int64_t rules_id_ = 0;
  std::vector<std::string> backends_asked_;
};

TEST_F(RetuneTest, NoChangeDoesNothing) {
  const auto base = recorded({});
  tuned_campaign(base);
  const auto d = check(recorded({}));
  EXPECT_EQ(d.action, "nothing") << d.message;
  EXPECT_TRUE(d.changes.empty()) << format_changes(d.changes);
  EXPECT_FALSE(d.campaign);
  EXPECT_EQ(backends_asked_, std::vector<std::string>{"local"});
  EXPECT_EQ(store_->count_campaigns(), 1);
}

TEST_F(RetuneTest, OpenMpiUpgradeStartsAWarmStartedCampaignWithTheSameSpec) {
  const auto source = tuned_campaign(recorded({}));
  const auto d = check(recorded({"ompi-4.1.6"}));
  ASSERT_EQ(d.action, "retune") << d.message;
  ASSERT_TRUE(d.campaign);
  EXPECT_EQ(format_changes(d.changes), "open_mpi.version: 4.1.4 -> 4.1.6\n");
  EXPECT_NE(d.message.find("1 relevant change"), std::string::npos) << d.message;
  // Same spec as the campaign that made the rules, warm-started from it.
  json expected = store_->campaign(source)->spec;
  json got = d.campaign->spec;
  EXPECT_EQ(got.at("warm_start_from"), source);
  EXPECT_EQ(got.at("name"), "nightly bcast (re-tune of " + std::to_string(source) + ")");
  got.erase("warm_start_from");
  got.erase("name");
  expected.erase("name");
  EXPECT_EQ(got, expected);
  EXPECT_EQ(d.campaign->state, CampaignState::queued);
  const auto j = d.to_json();
  EXPECT_EQ(j.at("action"), "retune");
  EXPECT_EQ(j.at("relevant_changes"), 1);
  EXPECT_EQ(j.at("changes").at(0).at("field"), "open_mpi.version");

  // Asked again while that campaign is queued: not a second one.
  const auto again = check(recorded({"ompi-4.1.6"}));
  EXPECT_EQ(again.action, "running");
  EXPECT_EQ(again.campaign->id, d.campaign->id);
  EXPECT_EQ(store_->count_campaigns(), 2);
}

TEST_F(RetuneTest, FinishedReTuneAwaitsItsDeployInsteadOfStartingAgain) {
  tuned_campaign(recorded({}));
  const auto d = check(recorded({"ompi-4.1.6"}));
  ASSERT_EQ(d.action, "retune");
  store_->set_campaign_state(d.campaign->id, CampaignState::done);
  RulesVersionRecord r;
  r.campaign_id = d.campaign->id;
  r.format = "classic";
  r.content = "1\n7\n1\n4\n1\n0 6 0 0\n";
  r.fingerprint = recorded({"ompi-4.1.6"});
  const auto made = store_->add_rules_version(r);
  const auto waiting = check(recorded({"ompi-4.1.6"}));
  EXPECT_EQ(waiting.action, "awaiting_deploy") << waiting.message;
  EXPECT_NE(waiting.message.find("rules version " + std::to_string(made)), std::string::npos);
  // Once deployed, the new version is the baseline: nothing to do.
  store_->set_rules_deployed(made, "/etc/colltune/rules/colltune-rules.conf");
  EXPECT_EQ(check(recorded({"ompi-4.1.6"})).action, "nothing");
}

TEST_F(RetuneTest, GrownPartitionStartsACampaignAndNamesTheFields) {
  tuned_campaign(recorded({"slurm-1node"}));
  const auto d = check(recorded({"slurm-2nodes"}));
  ASSERT_EQ(d.action, "retune") << d.message;
  const std::string text = format_changes(d.changes);
  EXPECT_NE(text.find("cluster.node_count: 1 -> 2"), std::string::npos) << text;
  EXPECT_NE(text.find("node_types.8cpu 1:8:1.nodes: 1 -> 2"), std::string::npos) << text;
  EXPECT_NE(text.find("cluster.nodes.vm2: (absent) -> 8cpu 1:8:1 (not relevant)"),
            std::string::npos)
      << text;
}

TEST_F(RetuneTest, IrrelevantChangesAndMissingToolsDoNotTrigger) {
  tuned_campaign(recorded({}));
  const auto d = check(recorded({"tools-missing"}));
  EXPECT_EQ(d.action, "nothing") << d.message;
  EXPECT_FALSE(d.changes.empty());
  EXPECT_FALSE(any_relevant(d.changes));
}

TEST_F(RetuneTest, DryRunStartsNothing) {
  tuned_campaign(recorded({}));
  RetuneOptions o;
  o.dry_run = true;
  const auto d = check(recorded({"han-priority-40"}), o);
  EXPECT_EQ(d.action, "retune");
  EXPECT_FALSE(d.campaign);
  EXPECT_NE(d.message.find("would re-tune"), std::string::npos);
  EXPECT_EQ(store_->count_campaigns(), 1);
}

TEST_F(RetuneTest, MaxAgeAndForce) {
  tuned_campaign(recorded({}));
  const double created = store_->rules_version(rules_id_)->created_at;
  RetuneOptions age;
  age.max_age_days = 30;
  EXPECT_EQ(check(recorded({}), age, created + 29 * 86400.0).action, "nothing");
  const auto old = check(recorded({}), age, created + 31 * 86400.0);
  ASSERT_EQ(old.action, "retune");
  EXPECT_NE(old.message.find("31.0 days old"), std::string::npos) << old.message;
  store_->set_campaign_state(old.campaign->id, CampaignState::done);

  RetuneOptions force;
  force.force = true;
  force.if_changed = false;
  force.reason = "sentinel: bcast:1M regressed";
  const auto forced = check(recorded({}), force);
  ASSERT_EQ(forced.action, "retune");
  EXPECT_NE(forced.message.find("sentinel: bcast:1M regressed"), std::string::npos);
  EXPECT_TRUE(backends_asked_.empty());  // no comparison asked for
}

TEST_F(RetuneTest, NothingToCompareWith) {
  EXPECT_EQ(check(recorded({})).action, "no_rules");
  tuned_campaign(nullptr);  // a rules version made before fingerprints were recorded
  EXPECT_EQ(check(recorded({})).action, "no_baseline");
  RetuneOptions age;
  age.max_age_days = 1;
  EXPECT_EQ(check(recorded({}), age, unix_time_now() + 2 * 86400.0).action, "retune");

  RulesVersionRecord imported;
  imported.format = "classic";
  imported.content = "1\n7\n1\n4\n1\n0 1 0 0\n";
  imported.fingerprint = recorded({});
  const auto id = store_->add_rules_version(imported);
  RetuneOptions o;
  o.rules_version_id = id;
  EXPECT_EQ(check(recorded({}), o).action, "no_source");
}

TEST_F(RetuneTest, DeployedVersionIsPreferredOverANewerOne) {
  tuned_campaign(recorded({}));
  const auto deployed = rules_id_;
  RulesVersionRecord newer;
  newer.campaign_id = store_->campaigns().front().id;
  newer.format = "classic";
  newer.content = "x";
  newer.fingerprint = recorded({"ompi-4.1.6"});
  store_->add_rules_version(newer);
  EXPECT_EQ(rules_version_to_check(*store_, std::nullopt)->id, deployed);
  EXPECT_EQ(check(recorded({})).action, "nothing");
}

TEST(RetuneOptions, FromJson) {
  const auto o = RetuneOptions::from_json(
      {{"if_changed", true}, {"max_age_days", 7}, {"dry_run", true}, {"rules_version_id", 3}});
  EXPECT_TRUE(o.if_changed);
  EXPECT_EQ(o.max_age_days, 7);
  EXPECT_TRUE(o.dry_run);
  EXPECT_EQ(o.rules_version_id, 3);
  EXPECT_THROW(RetuneOptions::from_json({{"if_chnaged", true}}), std::invalid_argument);
  EXPECT_THROW(RetuneOptions::from_json({{"max_age_days", -1}}), std::invalid_argument);
  EXPECT_THROW(RetuneOptions::from_json({{"force", "yes"}}), std::invalid_argument);
  EXPECT_THROW(RetuneOptions::from_json(json::array()), std::invalid_argument);
}

}  // namespace
}  // namespace colltune
