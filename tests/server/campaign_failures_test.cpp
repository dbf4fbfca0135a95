// Issue 20 item 10: picks come only from valid final runs. A campaign whose every run failed to
// parse fails (it ended `done` with picks taken from partial rows), and a size that no valid
// run measured fails with its reason instead of vanishing from the result.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/report.h"
#include "campaign/store.h"
#include "core/algorithm_table.h"
#include "runner/backend_factory.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

class CampaignFailures : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("colltune-campaign-failures-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
    store_ = std::make_unique<Store>((dir_ / "store.db").string());
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  std::int64_t create() {
    const auto spec =
        parse_campaign_spec({{"backend", "sim"},
                             {"contexts", {{{"collective", "bcast"}, {"comm_size", 4}}}},
                             {"sizes", "4:64"},
                             {"strategy", "random"},
                             {"budget", 4},
                             {"final_repeats", 2}});
    return CampaignEngine::create_campaign(*store_, spec);
  }

  fs::path dir_;
  std::unique_ptr<Store> store_;
  const AlgorithmTable table_ = AlgorithmTable::builtin_4_1();
};

TEST_F(CampaignFailures, EveryRunUnparsableFailsTheCampaign) {
  // Every run's output is garbled after its first sizes: parse_error with partial rows.
  auto backend = make_backend("sim", {{"faults", {{"garble_rate", 1.0}, {"seed", 3}}}});
  const auto id = create();
  CampaignEngine engine(*store_, *backend, table_);
  CancelFlag cancel;
  EXPECT_EQ(engine.run(id, cancel), EngineOutcome::failed);
  EXPECT_EQ(store_->campaign(id)->state, CampaignState::failed);
  EXPECT_NE(engine.error().find("no successful measurement"), std::string::npos) << engine.error();
  EXPECT_NE(engine.error().find("parse_error"), std::string::npos) << engine.error();
}

// Reports every ok run of the wrapped backend without its largest size, still ok (as an OMB 7
// that lowered the maximum size to its memory limit).
class DropLargestSize : public Backend {
 public:
  explicit DropLargestSize(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  BackendInfo describe() override { return inner_->describe(); }
  void run(const BenchmarkRequest& request, RunSink& sink, const CancelFlag& cancel) override {
    struct Filter : RunSink {
      RunSink* out = nullptr;
      void on_result(const RunResult& r) override {
        RunResult copy = r;
        if (!copy.rows.empty()) copy.rows.pop_back();
        out->on_result(copy);
      }
    } filter;
    filter.out = &sink;
    inner_->run(request, filter, cancel);
  }

 private:
  std::unique_ptr<Backend> inner_;
};

TEST_F(CampaignFailures, SizeNoValidRunMeasuredFailsWithItsReason) {
  DropLargestSize backend(make_backend("sim", nlohmann::json::object()));
  const auto id = create();
  CampaignEngine engine(*store_, backend, table_);
  CancelFlag cancel;
  ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
  const auto context = store_->contexts(id).at(0);
  ASSERT_TRUE(context.result.contains("failed_sizes")) << context.result.dump();
  const auto& failed = context.result.at("failed_sizes");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].at("msg_size"), 64);
  EXPECT_NE(failed[0].at("reason").get<std::string>().find("no valid measurement"),
            std::string::npos);
  EXPECT_EQ(context.result.at("picks").size(), 4u);  // 4, 8, 16, 32
  bool event = false;
  for (const auto& e : store_->events_after(0, 100000))
    if (e.campaign_id == id && e.type == "sizes_failed") event = true;
  EXPECT_TRUE(event);
  const auto report = campaign_report(*store_, id, table_);
  EXPECT_EQ(report.at("contexts")[0].at("failed_sizes").size(), 1u);
}

}  // namespace
}  // namespace colltune
