#include "campaign/job_executor.h"

#include <map>
#include <set>

namespace colltune {
namespace {

// Records runs as the backend reports them, each in its own committed transaction.
class StoreSink : public RunSink {
 public:
  StoreSink(Store& store, const JobRecord& job, std::function<void(const RunResult&)> on_run,
            std::function<void(const std::string&)> on_submitted,
            std::function<void(const std::string&, const std::string&)> on_resubmitted)
      : store_(store),
        job_(job),
        on_run_(std::move(on_run)),
        on_submitted_(std::move(on_submitted)),
        on_resubmitted_(std::move(on_resubmitted)) {}

  void on_job_resubmitted(const std::string&, const std::string& ended_job_id,
                          const std::string& why) override {
    if (on_resubmitted_) on_resubmitted_(ended_job_id, why);
  }

  void on_job_submitted(const std::string&, const std::string& job_id) override {
    store_.set_job_backend_id(job_.id, job_id);
    if (on_submitted_) on_submitted_(job_id);
  }

  void on_result(const RunResult& result) override {
    // A cancelled run measured nothing: it is not recorded, so a resume runs it again.
    if (result.outcome == RunOutcome::cancelled) return;
    if (store_.record_run(job_.id, job_.context_id, job_.purpose, result) && on_run_)
      on_run_(result);
  }

 private:
  Store& store_;
  const JobRecord& job_;
  std::function<void(const RunResult&)> on_run_;
  std::function<void(const std::string&)> on_submitted_;
  std::function<void(const std::string&, const std::string&)> on_resubmitted_;
};

}  // namespace

bool is_failed_outcome(RunOutcome o) {
  return o == RunOutcome::failed || o == RunOutcome::timeout || o == RunOutcome::unavailable ||
         o == RunOutcome::parse_error;
}

std::int64_t JobExecutor::submit(std::int64_t campaign_id, std::int64_t context_id,
                                 JobPurpose purpose, const BenchmarkRequest& request,
                                 const CancelFlag& cancel, bool& completed) {
  const auto job_id = store_.create_job(campaign_id, context_id, request.tag, backend_.name(),
                                        purpose, nlohmann::json(request));
  completed = execute(*store_.job(job_id), cancel);
  return job_id;
}

bool JobExecutor::execute(const JobRecord& job, const CancelFlag& cancel) {
  const BenchmarkRequest request = job.request.get<BenchmarkRequest>();
  std::set<std::pair<std::size_t, int>> recorded;
  for (const auto& run : store_.runs_of_job(job.id))
    recorded.insert({run.config_index, run.repeat});

  // After an interruption, only the runs never recorded, each with its own identity.
  BenchmarkRequest pending = request;
  // The job record names the batch outside this process too (the Slurm job and its folder):
  // a backend whose jobs outlive us finds what an earlier execution left and submits nothing
  // twice (BenchmarkRequest::resume). A job executed for the first time has left nothing.
  pending.recorded_at = job.created_at;
  pending.resume = true;
  pending.resume_job_id = job.backend_job_id;
  if (!recorded.empty()) {
    for (int r = 0; r < request.repeats; ++r)
      for (std::size_t i = 0; i < request.configs.size(); ++i)
        if (!recorded.count({i, r})) pending.only_runs.emplace_back(i, r);
    if (pending.only_runs.empty()) return true;
  }
  std::size_t done = recorded.size();
  const std::size_t total = request.configs.size() * static_cast<std::size_t>(request.repeats);
  auto emit = [&](const std::string& type, nlohmann::json payload, bool persist) {
    payload["campaign_id"] = job.campaign_id;
    if (persist)
      events_.durable(job.campaign_id, type, payload);
    else
      events_.transient(job.campaign_id, type, payload);
  };
  // The context the job measures, named in the event: the rules stage runs jobs of every
  // context after the last one started, and a progress line must say which one it is.
  nlohmann::json started = {{"job_id", job.id},
                            {"tag", job.tag},
                            {"context_id", job.context_id},
                            {"purpose", to_string(job.purpose)},
                            {"runs", total},
                            {"already_recorded", done}};
  if (auto context = store_.context(job.context_id)) {
    started["collective"] = std::string(name(context->collective));
    started["comm_size"] = context->comm_size;
  }
  emit("job_started", started, true);
  StoreSink sink(
      store_, job,
      [&](const RunResult& r) {
        ++done;
        emit("run",
             {{"job_id", job.id},
              {"context_id", job.context_id},
              {"purpose", to_string(job.purpose)},
              {"config", r.config},
              {"repeat", r.repeat},
              {"outcome", to_string(r.outcome)},
              {"error", r.error},
              {"sizes", r.rows.size()},
              {"done", done},
              {"total", total}},
             false);
      },
      [&](const std::string& backend_job_id) {
        emit("job_submitted",
             {{"job_id", job.id}, {"tag", job.tag}, {"backend_job_id", backend_job_id}}, true);
      },
      [&](const std::string& ended_job_id, const std::string& why) {
        // Why the job's runs went to a new backend job: kept in the campaign's event log.
        emit("job_resubmitted",
             {{"job_id", job.id},
              {"tag", job.tag},
              {"backend_job_id", ended_job_id},
              {"reason", why}},
             true);
      });
  backend_.run(pending, sink, cancel);
  return !cancel.cancelled();
}

}  // namespace colltune
