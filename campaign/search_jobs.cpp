#include "campaign/search_jobs.h"

#include <algorithm>
#include <stdexcept>

#include "campaign/campaign_states.h"
#include "campaign/context_request.h"

namespace colltune {

SearchJobRunner::SearchJobRunner(Store& store, JobExecutor& executor, const CampaignSpec& spec,
                                 SearchJobsSetup setup, const Searcher& searcher,
                                 const CancelFlag& cancel, std::function<bool()> over_budget,
                                 std::function<void(const std::string&, nlohmann::json)> emit)
    : store_(store),
      executor_(executor),
      spec_(spec),
      setup_(std::move(setup)),
      first_number_(setup_.first_job_number),
      searcher_(searcher),
      cancel_(cancel),
      over_budget_(std::move(over_budget)),
      emit_(std::move(emit)) {
  for (const auto& c : setup_.contexts) by_id_[c.id] = &c;
}

std::optional<std::vector<Measurement>> SearchJobRunner::resume() {
  current_.clear();
  resumed_ = true;
  for (const auto& job : store_.jobs(setup_.campaign_id)) {
    if (!by_id_.count(job.context_id) || job.purpose != JobPurpose::search) continue;
    if (is_unfinished(job.state)) current_.push_back(job);
  }
  return execute_current();
}

std::optional<std::vector<Measurement>> SearchJobRunner::run(const SearchBatch& batch) {
  // One job per context, in the order the contexts first appear in the batch.
  std::vector<std::pair<std::int64_t, std::vector<TuningConfig>>> per_context;
  for (const auto& item : batch.items) {
    auto it = std::find_if(per_context.begin(), per_context.end(),
                           [&](const auto& p) { return p.first == item.context; });
    if (it == per_context.end()) it = per_context.insert(per_context.end(), {item.context, {}});
    it->second.push_back(item.config);
  }
  current_.clear();
  resumed_ = false;
  // The batch's jobs and the strategy's state after its suggestion in one transaction: a
  // restart finds the whole batch or none of it.
  std::vector<Store::NewJob> jobs;
  for (auto& [context_id, configs] : per_context) {
    auto context = by_id_.find(context_id);
    if (context == by_id_.end())
      throw std::runtime_error("a search batch names context " + std::to_string(context_id) +
                               ", which this search does not cover");
    const std::size_t number = setup_.first_job_number++;
    const std::string tag = job_tag(setup_.campaign_id, context_id, "search", number);
    BenchmarkRequest request = context_request(*context->second, spec_, tag);
    request.configs = std::move(configs);
    request.repeats = spec_.repeats;
    request.order_seed = setup_.seed + number;
    jobs.push_back({context_id, tag, nlohmann::json(request)});
  }
  for (const auto id : store_.create_jobs(setup_.campaign_id, setup_.backend, JobPurpose::search,
                                          jobs, setup_.state_context, searcher_.state()))
    current_.push_back(*store_.job(id));
  return execute_current();
}

std::optional<std::vector<Measurement>> SearchJobRunner::execute_current() {
  std::vector<Measurement> out;
  for (const auto& job : current_) {
    if (!executor_.execute(job, cancel_)) return std::nullopt;
    for (const auto& run : store_.runs_of_job(job.id))
      out.push_back({job.context_id, evaluation_of(run)});
  }
  return out;
}

void SearchJobRunner::batch_done(const SearchBatch&) {
  // Every job of the batch done with the state that includes all their runs, in one
  // transaction (Store::complete_jobs).
  std::vector<std::int64_t> ids;
  for (const auto& job : current_) ids.push_back(job.id);
  store_.complete_jobs(ids, JobState::done, setup_.state_context, searcher_.state());
  if (!resumed_)
    for (const auto& job : current_)
      emit_("job_done", {{"job_id", job.id}, {"context_id", job.context_id}});
  current_.clear();
}

void SearchJobRunner::search_ended(const nlohmann::json& state) {
  if (!state.is_null()) store_.save_optimizer_state(setup_.state_context, state);
}

}  // namespace colltune
