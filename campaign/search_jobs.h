// The campaign engine's BatchRunner (optimizer/search_loop.h), the same for a per-context
// campaign (one Strategy, one context) and a whole-cluster one (one ClusterStrategy over the
// contexts of a collective): each batch becomes one search job per context it touches, all
// recorded in the store before any of them runs (an interruption then resumes them instead of
// losing what the searcher marked as suggested), together with the searcher's state after
// suggest(); the jobs run on the backend through the JobExecutor, and once the searcher observed
// the whole batch every job is marked done with its state and a durable job_done event; the
// state the search ended with is saved too.
// resume() finishes the search jobs an interrupted earlier run left "submitting" or "running"
// (only the runs never recorded are run).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "campaign/campaign_spec.h"
#include "campaign/job_executor.h"
#include "campaign/store.h"
#include "optimizer/search_loop.h"

namespace colltune {

struct SearchJobsSetup {
  std::int64_t campaign_id = 0;
  std::string backend;                  // the backend's name, recorded with each job
  std::vector<ContextRecord> contexts;  // the contexts searched (BatchItem::context = their id)
  std::int64_t state_context = 0;       // the context whose optimizer_state holds the searcher's
  std::uint64_t seed = 0;               // a job's order_seed is seed + its number
  std::size_t first_job_number = 1;     // numbers the jobs' tags and order seeds
};

class SearchJobRunner : public BatchRunner {
 public:
  // `over_budget` stops the search (keep_searching); `emit` sends a durable event.
  SearchJobRunner(Store& store, JobExecutor& executor, const CampaignSpec& spec,
                  SearchJobsSetup setup, const Searcher& searcher, const CancelFlag& cancel,
                  std::function<bool()> over_budget,
                  std::function<void(const std::string&, nlohmann::json)> emit);

  bool keep_searching() override { return !over_budget_(); }
  bool interrupted() override { return cancel_.cancelled(); }
  std::optional<std::vector<Measurement>> resume() override;
  std::optional<std::vector<Measurement>> run(const SearchBatch& batch) override;
  void batch_done(const SearchBatch& batch) override;
  // Saves the state the search ended with on the state context (a resume past the search
  // restores it); a null state (a searcher that keeps none of its own) is not saved.
  void search_ended(const nlohmann::json& state) override;

  // Search jobs created by this runner so far.
  std::size_t jobs_created() const { return setup_.first_job_number - first_number_; }

 private:
  // Executes the jobs of the current batch; nullopt when interrupted.
  std::optional<std::vector<Measurement>> execute_current();

  Store& store_;
  JobExecutor& executor_;
  const CampaignSpec& spec_;
  SearchJobsSetup setup_;
  std::size_t first_number_;
  std::map<std::int64_t, const ContextRecord*> by_id_;
  const Searcher& searcher_;
  const CancelFlag& cancel_;
  std::function<bool()> over_budget_;
  std::function<void(const std::string&, nlohmann::json)> emit_;
  std::vector<JobRecord> current_;  // the jobs of the batch in hand
  bool resumed_ = false;            // current_ are jobs of an earlier run, finished now
};

}  // namespace colltune
