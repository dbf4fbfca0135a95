// One Slurm batch: plan, submit, monitor, collect, resubmit (see runner/slurm_batch.h).
#include "runner/slurm_batch.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/file_text.h"
#include "core/iso_time.h"
#include "core/json_number.h"
#include "core/ompi_version.h"
#include "osu/osu_command.h"
#include "runner/local_backend.h"
#include "runner/mca.h"
#include "runner/mpirun_command.h"
#include "runner/ompi_info.h"
#include "runner/process.h"
#include "slurm/job_folder.h"
#include "slurm/shell_quote.h"
#include "slurm/slurm_output.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using slurm::JobEnding;
using slurm::JobState;

std::string run_id(std::size_t position) {
  std::string digits = std::to_string(position);
  if (digits.size() < 3) digits.insert(0, 3 - digits.size(), '0');
  return "r" + digits;
}

std::string tail_of_file(const fs::path& path, int lines = 5) {
  const auto text = read_file_text(path);
  return text ? tail_lines(*text, lines, 800) : std::string();
}

// One run of the batch, planned before submission.
struct PlannedRun {
  std::size_t config_index = 0;
  int repeat = 0;
  slurm::ScriptRun script;
  Provenance provenance;  // argv, mca, env of the launcher command
  bool reported = false;
};

// How a job ended, as far as the monitor could tell.
struct JobEnd {
  std::optional<slurm::JobStatus> status;  // the terminal status, when known
  bool cancelled_by_us = false;
  std::string give_up_reason;  // non-empty: the monitor stopped without a terminal state
  bool job_unknown = false;    // neither squeue nor accounting knew the job
  bool saw_active = false;     // seen pending or running at least once
};

// One run() call: plans the runs, submits, monitors, resubmits, reports.
class BatchRunner {
 public:
  BatchRunner(const SlurmBackendOptions& options, const std::string& template_text,
              slurm::SlurmClient& client, const BenchmarkRequest& request, RunSink& sink,
              const CancelFlag& cancel, fs::path job_dir, std::string fallback_ompi_version)
      : options_(options),
        template_text_(template_text),
        client_(client),
        request_(request),
        sink_(sink),
        cancel_(cancel),
        job_dir_(std::move(job_dir)),
        fallback_ompi_version_(std::move(fallback_ompi_version)) {}

  // Returns true when every run was reported ok.
  bool run(const std::vector<std::string>& osu_argv) {
    plan(osu_argv);
    // Scripts are numbered on from those an earlier process left (a resumed batch).
    const auto scripts = slurm::submitted_scripts(job_dir_);
    int submissions = scripts.empty() ? 0 : scripts.back();
    if (request_.resume && !resume(scripts)) return all_ok_;
    while (unreported() > 0) {
      if (cancel_.cancelled()) {
        report_unfinished(RunOutcome::cancelled, "cancelled before it started", false);
        break;
      }
      ++submissions;
      if (!submit(submissions)) break;
      JobEnd end = monitor();
      settle();
      if (!handle_end(end, submissions)) break;
    }
    return all_ok_;
  }

 private:
  // A resumed batch: finds the job an earlier process submitted for it (the id the caller
  // stored, the ids the backend wrote next to its scripts, else squeue/sacct by job name,
  // restricted to jobs working in this batch's folder), reports the runs it finished, and
  // follows it while it is alive. Returns false when nothing is left to submit.
  bool resume(const std::vector<int>& scripts) {
    if (scripts.empty() && request_.resume_job_id.empty()) return true;  // nothing was submitted
    std::string job;
    auto consider = [&](const std::string& id) {  // the newest job id wins
      if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos)
        return;
      if (job.empty() || std::stoll(id) > std::stoll(job)) job = id;
    };
    consider(request_.resume_job_id);
    for (int k : scripts) consider(slurm::read_submitted_job_id(job_dir_, k).value_or(""));
    // sbatch may have answered just before the earlier process died, its id recorded nowhere.
    const bool id_unknown_for_last_script =
        !scripts.empty() && !slurm::read_submitted_job_id(job_dir_, scripts.back());
    if (id_unknown_for_last_script) {
      // Submitting without knowing could run the batch twice: wait for Slurm to answer (as
      // for an unreachable controller while monitoring), else give up.
      std::string error;
      std::optional<std::vector<slurm::NamedJob>> found;
      double wait = 1.0;
      const double deadline = unix_time_now() + options_.controller_timeout_s;
      while (!(found = client_.find_jobs_by_name(job_name(), &error))) {
        if (cancel_.cancelled() || unix_time_now() + wait > deadline) {
          report_unfinished(cancel_.cancelled() ? RunOutcome::cancelled : RunOutcome::failed,
                            "cannot tell whether Slurm still has the job submitted for this "
                            "batch before the restart (" +
                                error + "); not submitting it again",
                            false);
          return false;
        }
        spdlog::warn("slurm: batch {}: cannot look for its earlier job: {}; retrying in {:.0f} s",
                     request_.tag, error, wait);
        sleep_unless_cancelled(wait);
        wait = std::min(wait * 2, 30.0);
      }
      for (const auto& candidate : *found) {
        // Same name, another folder: someone else's batch with the same tag.
        if (fs::path(candidate.work_dir).lexically_normal() == job_dir_.lexically_normal())
          consider(candidate.job_id);
      }
    }
    if (job.empty()) {
      spdlog::info("slurm: batch {}: no earlier job found; reporting what its folder holds",
                   request_.tag);
      collect();
      return unreported() > 0;
    }
    job_id_ = job;
    known_job_ids_.insert(job);
    for (int k : scripts)
      if (auto id = slurm::read_submitted_job_id(job_dir_, k)) known_job_ids_.insert(*id);
    collect();
    if (unreported() == 0) {
      spdlog::info("slurm: batch {}: every run already finished in job {}", request_.tag, job);
      return false;
    }
    JobEnd end = monitor(/*attaching=*/true);
    settle();
    if (end.cancelled_by_us || cancel_.cancelled() || end.saw_active)
      return handle_end(end, 1);  // our own job in all but name: the usual rules
    // It had ended (or was forgotten) while no one watched: its unfinished runs go again.
    spdlog::info("slurm: batch {}: earlier job {} ended while colltune was away ({}); {} runs left",
                 request_.tag, job,
                 end.status ? std::string(to_string(end.status->state)) : end.give_up_reason,
                 unreported());
    if (!end.status && !end.job_unknown) return handle_end(end, 1);  // controller unreachable
    return unreported() > 0;
  }

  std::string job_name() const {
    return "colltune-" + slurm::sanitize_name(request_.tag.empty() ? "batch" : request_.tag, 55);
  }

  std::size_t unreported() const {
    return static_cast<std::size_t>(
        std::count_if(runs_.begin(), runs_.end(), [](const auto& r) { return !r.reported; }));
  }

  int ranks_per_node() const { return (request_.comm_size + request_.nodes - 1) / request_.nodes; }

  int ntasks_per_node() const {
    if (request_.ppn > 0) return request_.ppn;
    if (request_.nodes > 1 && request_.comm_size % request_.nodes == 0)
      return request_.comm_size / request_.nodes;
    return 0;
  }

  void plan(const std::vector<std::string>& osu_argv) {
    const auto order = run_order(request_);
    // A run's files are named by its position in the order of the whole batch, not of only_runs:
    // a resumed call (a subset) must find the files of the same run under the same name.
    BenchmarkRequest whole = request_;
    whole.only_runs.clear();
    std::map<std::pair<std::size_t, int>, std::size_t> position_of;
    for (const auto& run : run_order(whole)) position_of.emplace(run, position_of.size());
    const bool root = ::geteuid() == 0;
    for (const auto& [index, repeat] : order) {
      PlannedRun run;
      run.config_index = index;
      run.repeat = repeat;
      run.script.id = run_id(position_of.at({index, repeat}));
      run.script.timeout_s = request_.run_timeout_s;
      auto mca = mca_for_config(request_.collective, request_.configs[index]);
      for (const auto& [k, v] : request_.extra_mca) mca[k] = v;
      run.provenance.backend = "slurm";
      run.provenance.mca = mca;
      if (options_.launcher == SlurmLauncher::srun) {
        auto& argv = run.script.argv;
        argv = {options_.commands.srun, "--mpi=" + options_.srun_mpi,
                "--nodes=" + std::to_string(request_.nodes),
                "--ntasks=" + std::to_string(request_.comm_size)};
        if (int ppn = ntasks_per_node(); ppn > 0)
          argv.push_back("--ntasks-per-node=" + std::to_string(ppn));
        argv.push_back("--kill-on-bad-exit=1");
        if (options_.srun_step_wait_s > 0)
          argv.push_back("--immediate=" + std::to_string(options_.srun_step_wait_s));
        for (const auto& a : options_.launcher_extra_args) argv.push_back(a);
        for (const auto& a : osu_argv) argv.push_back(a);
        // srun has no --mca: MCA parameters travel as OMPI_MCA_* variables.
        run.script.env = request_.extra_env;
        for (const auto& [k, v] : mca) {
          if (!slurm::is_shell_identifier(k))
            throw std::invalid_argument("MCA parameter name '" + k + "' is not a valid name");
          run.script.env["OMPI_MCA_" + k] = v;
        }
      } else {
        MpirunSettings settings;
        settings.mpirun = options_.mpirun;
        settings.np = request_.comm_size;
        settings.ppn = request_.nodes > 1 ? ntasks_per_node() : 0;
        // mpirun sees the slots Slurm granted (ntasks = comm size): no oversubscription, and
        // the yield decision is made by the script on the node (it knows the real cores).
        settings.oversubscribe = false;
        settings.yield_when_idle = false;
        settings.allow_run_as_root = root;
        settings.extra_args = options_.launcher_extra_args;
        auto launch = mpirun_launch(settings, mca, request_.extra_env, osu_argv);
        run.script.argv = launch.argv;
        run.script.env = launch.env;
        run.provenance.mca = launch.mca;
      }
      run.provenance.argv = run.script.argv;
      run.provenance.env = run.script.env;
      runs_.push_back(std::move(run));
    }
  }

  slurm::BatchScriptSpec spec_for(const std::vector<slurm::ScriptRun>& runs) const {
    slurm::BatchScriptSpec spec;
    spec.job_name = job_name();
    spec.partition = options_.partition;
    spec.account = options_.account;
    spec.qos = options_.qos;
    spec.nodes = request_.nodes;
    spec.ntasks = request_.comm_size;
    spec.ntasks_per_node = ntasks_per_node();
    spec.exclusive = options_.exclusive;
    spec.job_dir = job_dir_;
    spec.attempts = options_.attempts;
    spec.kill_after_s = options_.kill_after_s;
    spec.ranks_per_node = ranks_per_node();
    spec.yield = options_.yield;
    spec.ompi_info = options_.ompi_info;
    if (options_.launcher == SlurmLauncher::srun)
      spec.relaunch_markers = {"Requested nodes are busy", "Unable to contact slurm controller"};
    // What srun prints (directly, or under mpirun, which starts its daemons with srun) when the
    // job's allocation is going away.
    // A step that cannot reach one of the job's nodes (its slurmd died: "Task launch for
    // StepId=.. failed on node ct-n2: Communication connection failure") is the node's fault
    // too: Slurm ends the job NODE_FAIL once it notices (SlurmdTimeout).
    spec.job_gone_markers = {"srun: error: Node failure on", "Expired or invalid job",
                             "Job/step already completing or completed",
                             "Communication connection failure"};
    spec.runs = runs;
    if (options_.time_limit_minutes > 0) {
      spec.time_limit_minutes = options_.time_limit_minutes;
    } else {
      spec.time_limit_minutes = slurm::time_limit_minutes_for(
          runs, options_.attempts, options_.kill_after_s, options_.time_limit_margin,
          options_.time_limit_allowance_s);
      if (options_.max_time_limit_minutes > 0)
        spec.time_limit_minutes =
            std::min(spec.time_limit_minutes, options_.max_time_limit_minutes);
    }
    return spec;
  }

  // Writes and submits the script of the unreported runs. False when nothing was submitted (the
  // runs are then reported failed).
  bool submit(int submission) {
    std::vector<slurm::ScriptRun> runs;
    for (const auto& r : runs_)
      if (!r.reported) runs.push_back(r.script);
    // A resubmission: files of runs interrupted in the previous job must not be mistaken for
    // this job's (the script also clears them when it reaches the run).
    if (submission > 1) {
      std::error_code ec;
      std::vector<fs::path> stale;
      for (const auto& entry : fs::directory_iterator(job_dir_ / slurm::kRunsSubdir, ec)) {
        const auto file = entry.path().filename().string();
        for (const auto& r : runs)
          if (file.rfind(r.id + ".", 0) == 0) stale.push_back(entry.path());
      }
      for (const auto& path : stale) fs::remove(path, ec);
    }
    const auto script = slurm::script_path(job_dir_, submission);
    try {
      const auto spec = spec_for(runs);
      time_limit_minutes_ = spec.time_limit_minutes;
      const std::string text = slurm::render_batch_script(spec, template_text_);
      std::ofstream out(script, std::ios::binary | std::ios::trunc);
      out << text;
      out.close();
      if (!out) throw std::runtime_error("cannot write " + script.string());
    } catch (const std::exception& e) {
      report_unfinished(RunOutcome::failed,
                        std::string("cannot write the batch script: ") + e.what(), false);
      return false;
    }

    // Transient controller errors (a restart) are retried with back-off, within the same
    // patience as an unreachable controller while monitoring.
    double wait = 1.0;
    const double deadline = unix_time_now() + options_.controller_timeout_s;
    while (true) {
      auto result = client_.submit(script, options_.sbatch_extra_args);
      if (result.ok()) {
        job_id_ = result.job_id;
        known_job_ids_.insert(job_id_);
        facts_.reset();
        // Next to its script, so that a resumed batch knows it even if the caller never
        // stored it (best effort: the job name is the fallback).
        std::ofstream(slurm::job_id_path(job_dir_, submission)) << job_id_ << "\n";
        spdlog::info("slurm: batch {} submitted as job {} ({} runs, time limit {} min, {})",
                     request_.tag, job_id_, runs.size(), time_limit_minutes_, script.string());
        sink_.on_job_submitted(request_.tag, job_id_);
        return true;
      }
      // sbatch that timed out (or lost the controller's answer) may still have submitted
      // the job: adopt it rather than submit the script a second time.
      if (auto adopted = result.transient ? job_submitted_without_answer() : std::string();
          !adopted.empty()) {
        job_id_ = adopted;
        facts_.reset();
        std::ofstream(slurm::job_id_path(job_dir_, submission)) << job_id_ << "\n";
        spdlog::warn("slurm: {}, but job {} of batch {} exists: following it", result.error,
                     job_id_, request_.tag);
        known_job_ids_.insert(job_id_);
        sink_.on_job_submitted(request_.tag, job_id_);
        return true;
      }
      if (!result.transient || unix_time_now() + wait > deadline || cancel_.cancelled()) {
        report_unfinished(cancel_.cancelled() ? RunOutcome::cancelled : RunOutcome::failed,
                          result.error + " (script " + script.string() + ")", false);
        return false;
      }
      spdlog::warn("slurm: {}; retrying in {:.0f} s", result.error, wait);
      sleep_unless_cancelled(wait);
      wait = std::min(wait * 2, 30.0);
    }
  }

  // The newest job of this batch (its name, working in its folder) that is none of the jobs
  // already known to this call; empty when none or when Slurm cannot be asked.
  std::string job_submitted_without_answer() {
    auto found = client_.find_jobs_by_name(job_name());
    long long newest_known = 0;
    for (const auto& id : known_job_ids_) newest_known = std::max(newest_known, std::stoll(id));
    std::string newest;
    for (const auto& job : found.value_or(std::vector<slurm::NamedJob>{})) {
      if (fs::path(job.work_dir).lexically_normal() != job_dir_.lexically_normal()) continue;
      // Older than (or one of) the jobs this call already followed: not this submission's.
      if (std::stoll(job.job_id) <= newest_known) continue;
      newest = job.job_id;  // ascending ids: the last match is the newest
    }
    return newest;
  }

  // Sleeps `seconds`, waking early when a cancellation arrives.
  void sleep_unless_cancelled(double seconds) const {
    const double until = unix_time_now() + seconds;
    while (unix_time_now() < until) {
      if (cancel_.cancelled() && !cancel_sent_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }

  // Follows job_id_ until it ends. `attaching`: a job submitted by an earlier process, which
  // may long be gone from squeue and accounting (then job_unknown, after one look).
  JobEnd monitor(bool attaching = false) {
    JobEnd end;
    const double submitted_at = unix_time_now();
    double interval = options_.poll_initial_s;
    double unreachable_since = -1;  // when the controller stopped answering; < 0: it answers
    std::optional<double> unknown_since;
    double cancel_sent_at = 0;
    std::string last_description;
    cancel_sent_ = false;
    while (true) {
      const bool progressed = collect() > 0;
      const double now = unix_time_now();
      if (cancel_.cancelled() && !cancel_sent_) {
        std::string error;
        if (!client_.cancel(job_id_, &error)) spdlog::warn("slurm: {}", error);
        spdlog::info("slurm: cancelled job {} (batch {})", job_id_, request_.tag);
        cancel_sent_ = true;
        cancel_sent_at = now;
        end.cancelled_by_us = true;
      }
      auto query = client_.status(job_id_);
      if (query.status) {
        if (unreachable_since >= 0)
          spdlog::info("slurm: controller answers again after {:.0f} s", now - unreachable_since);
        unreachable_since = -1;
        unknown_since.reset();
        const auto& status = *query.status;
        std::string description = std::string(to_string(status.state)) + " (" + status.reason + ")";
        if (description != last_description) {
          spdlog::info("slurm: job {} {}", job_id_, description);
          last_description = description;
        }
        if (slurm::is_terminal(status.state)) {
          end.status = status;
          return end;
        }
        if (attaching && !end.saw_active) {
          spdlog::info("slurm: batch {}: re-attached to job {} ({})", request_.tag, job_id_,
                       description);
          sink_.on_job_submitted(request_.tag, job_id_);
        }
        end.saw_active = true;
        if (options_.pending_timeout_s > 0 && status.state == JobState::pending && !cancel_sent_ &&
            now - submitted_at > options_.pending_timeout_s) {
          client_.cancel(job_id_);
          end.give_up_reason = "Slurm job " + job_id_ + " was still pending after " +
                               std::to_string(static_cast<int>(options_.pending_timeout_s)) +
                               " s (reason: " + status.reason + "); cancelled";
          wait_until_gone();
          return end;
        }
      } else if (query.controller_unreachable) {
        if (unreachable_since < 0) {
          unreachable_since = now;
          spdlog::warn("slurm: {}; waiting for the controller (up to {:.0f} s)", query.error,
                       options_.controller_timeout_s);
        } else if (now - unreachable_since > options_.controller_timeout_s) {
          end.give_up_reason = "Slurm controller unreachable for " +
                               std::to_string(static_cast<int>(now - unreachable_since)) +
                               " s while job " + job_id_ + " was active: " + query.error;
          return end;
        }
      } else {
        // Known neither to squeue nor to accounting: allow a short window (a controller that
        // just restarted may need a moment), then give up.
        if (!unknown_since)
          unknown_since = now;
        else if (now - *unknown_since > (attaching && !end.saw_active ? 2 : 15)) {
          end.give_up_reason = query.error;
          end.job_unknown = true;
          return end;
        }
      }
      if (cancel_sent_ && now - cancel_sent_at > options_.cancel_wait_s) {
        end.give_up_reason = "Slurm job " + job_id_ + " did not end within " +
                             std::to_string(static_cast<int>(options_.cancel_wait_s)) +
                             " s of scancel";
        return end;
      }
      interval = progressed ? options_.poll_initial_s
                            : std::min(interval * 1.5,
                                       std::max(options_.poll_initial_s, options_.poll_max_s));
      sleep_unless_cancelled(interval);
    }
  }

  // After scancel of a pending job: wait (bounded) until Slurm shows it ended.
  void wait_until_gone() {
    const double deadline = unix_time_now() + options_.cancel_wait_s;
    while (unix_time_now() < deadline) {
      auto query = client_.status(job_id_);
      if (query.status && slurm::is_terminal(query.status->state)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // A job has ended: give files written at its very end (or on a slow shared filesystem) a
  // moment to appear, while some started run still lacks its .done.
  void settle() {
    const double deadline = unix_time_now() + 2.0;
    while (true) {
      collect();
      bool waiting = false;
      for (const auto& r : runs_) {
        if (r.reported) continue;
        auto record = slurm::read_run(job_dir_, r.script.id, 0);
        if (record.started() && record.attempts.back().finished) waiting = true;
      }
      if (!waiting || unix_time_now() > deadline) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // Reports every run whose .done appeared; returns how many.
  int collect() {
    if (!facts_ || facts_->job_id != job_id_) {
      auto facts = slurm::read_node_facts(job_dir_);
      if (facts && facts->job_id == job_id_) facts_ = facts;
    }
    int count = 0;
    for (auto& run : runs_) {
      if (run.reported || !slurm::run_is_done(job_dir_, run.script.id)) continue;
      auto record = slurm::read_run(job_dir_, run.script.id);
      if (!record.done) continue;
      report(run, finished_result(run, record));
      ++count;
    }
    return count;
  }

  RunResult base_result(const PlannedRun& run) const {
    RunResult result;
    result.tag = request_.tag;
    result.config_index = run.config_index;
    result.config = request_.configs[run.config_index];
    result.repeat = run.repeat;
    result.provenance = run.provenance;
    result.provenance.job_id = job_id_;
    result.provenance.ompi_version = fallback_ompi_version_;
    if (facts_) {
      result.provenance.host = facts_->host;
      if (auto hosts = slurm::expand_hostlist(facts_->node_list); hosts && !hosts->empty())
        result.provenance.hosts = *hosts;
      if (auto v = parse_ompi_version(facts_->ompi))
        result.provenance.ompi_version = v->to_string();
      if (facts_->yield_when_idle) {
        result.provenance.mca["mpi_yield_when_idle"] = "1";
        result.provenance.env["OMPI_MCA_mpi_yield_when_idle"] = "1";
      }
    }
    return result;
  }

  // One attempt as the process it was, classified like a local run.
  RunResult attempt_result(const PlannedRun& run, const slurm::AttemptRecord& attempt,
                           bool killed_by_time_limit, bool killed_by_cancel) const {
    ProcessResult process;
    const int status = attempt.exit_status;
    if (attempt.finished) {
      if (status > 128 && status != 124 && status < 160) {
        process.signal = status - 128;
        process.exit_code = -1;
      } else {
        process.exit_code = status;
      }
    }
    process.stdout_text = attempt.stdout_text;
    process.stderr_text = attempt.stderr_text;
    process.output_truncated = attempt.output_truncated;
    const double end = attempt.end_time > 0 ? attempt.end_time : unix_time_now();
    process.elapsed_s = attempt.start_time > 0 ? std::max(0.0, end - attempt.start_time) : 0;
    // 124: `timeout` stopped the run; 137 after at least the timeout: it needed SIGKILL.
    process.timed_out =
        attempt.finished &&
        (status == 124 || (status == 137 && process.elapsed_s >= run.script.timeout_s));
    if (!attempt.finished) {
      process.timed_out = killed_by_time_limit;
      process.stopped = killed_by_cancel;
    }
    RunResult result = base_result(run);
    if (!attempt.host.empty()) result.provenance.host = attempt.host;
    result.provenance.start_time = attempt.start_time;
    result.provenance.end_time = attempt.end_time;
    classify_osu_run(process, result);
    return result;
  }

  RunResult finished_result(const PlannedRun& run, const slurm::RunRecord& record) const {
    if (record.attempts.empty()) {
      RunResult result = base_result(run);
      result.outcome = RunOutcome::failed;
      result.error = "the batch script marked the run done without any attempt";
      return result;
    }
    std::vector<RunResult> attempts;
    for (const auto& a : record.attempts) attempts.push_back(attempt_result(run, a, false, false));
    RunResult result = attempts.back();
    result.provenance.start_time = record.attempts.front().start_time;
    if (attempts.size() > 1 && result.outcome != RunOutcome::ok) {
      bool same = true;
      for (const auto& a : attempts)
        same = same && a.outcome == result.outcome &&
               a.provenance.exit_status == result.provenance.exit_status;
      if (same) {
        result.error =
            "failed " + std::to_string(attempts.size()) + " times the same way: " + result.error;
      } else {
        std::string joined = "failed in " + std::to_string(attempts.size()) + " attempts:";
        for (std::size_t i = 0; i < attempts.size(); ++i)
          joined += " [" + std::to_string(i + 1) + "] " +
                    std::string(to_string(attempts[i].outcome)) + ": " + attempts[i].error +
                    (i + 1 < attempts.size() ? ";" : "");
        result.error = joined;
      }
    } else if (attempts.size() > 1) {
      spdlog::info("slurm: run {} of job {} succeeded on attempt {} after: {}", run.script.id,
                   job_id_, attempts.size(), attempts.front().error);
    }
    return result;
  }

  void report(PlannedRun& run, const RunResult& result) {
    if (run.reported) return;
    run.reported = true;
    if (result.outcome != RunOutcome::ok) {
      all_ok_ = false;
      spdlog::debug("slurm run {} {} repeat {}: {} ({})", run.script.id, to_string(result.config),
                    run.repeat, to_string(result.outcome), result.error);
    }
    sink_.on_result(result);
  }

  // Reports every unreported run with `outcome`. With `use_partial`, a run that had started
  // keeps what its files show (partial rows) and is classified as killed.
  void report_unfinished(RunOutcome outcome, const std::string& error, bool use_partial,
                         bool only_started = false) {
    for (auto& run : runs_) {
      if (run.reported) continue;
      auto record = slurm::read_run(job_dir_, run.script.id);
      if (only_started && !record.started()) continue;
      RunResult result = base_result(run);
      if (use_partial && record.started()) {
        result = attempt_result(run, record.attempts.back(), outcome == RunOutcome::timeout,
                                outcome == RunOutcome::cancelled);
      }
      result.outcome = outcome;
      result.error = error;
      report(run, result);
    }
  }

  std::string output_tail() const {
    auto tail = tail_of_file(slurm::slurm_output_path(job_dir_, job_id_), 3);
    return tail.empty() ? std::string()
                        : "; " + slurm::slurm_output_path(job_dir_, job_id_).string() +
                              " ends with: " + tail;
  }

  // Decides what the end of a job means for its unfinished runs. Returns true to resubmit them.
  bool handle_end(const JobEnd& end, int submissions) {
    if (unreported() == 0) return false;
    const std::string job = "Slurm job " + job_id_;
    if (end.cancelled_by_us || cancel_.cancelled()) {
      report_unfinished(RunOutcome::cancelled, "cancelled (colltune scancelled " + job + ")", true);
      return false;
    }
    if (!end.give_up_reason.empty() || !end.status) {
      std::string error;
      client_.cancel(job_id_, &error);  // best effort: do not leave it running unobserved
      report_unfinished(
          RunOutcome::failed,
          end.give_up_reason.empty() ? job + " ended in an unknown state" : end.give_up_reason,
          true);
      return false;
    }
    const auto& status = *end.status;
    std::string state = std::string(to_string(status.state));
    if (status.exit_code) state += ", exit code " + slurm::to_string(*status.exit_code);
    if (!status.reason.empty() && status.reason != "None") state += ", reason " + status.reason;
    const bool can_resubmit = resubmits_ < options_.max_resubmits;
    switch (slurm::job_ending(status.state)) {
      case JobEnding::finished: {
        std::string hint = output_tail();
        if (!facts_)
          hint += "; the job left no " + std::string(slurm::kNodeInfoFile) + " either: is " +
                  job_dir_.parent_path().string() +
                  " on a filesystem shared with the compute nodes?";
        report_unfinished(RunOutcome::failed,
                          job + " completed without a result for this run" + hint, true);
        return false;
      }
      case JobEnding::resubmit:
        if (can_resubmit) {
          ++resubmits_;
          spdlog::warn("slurm: {} ended {}; resubmitting its {} unfinished runs ({}/{})", job,
                       state, unreported(), resubmits_, options_.max_resubmits);
          sink_.on_job_resubmitted(request_.tag, job_id_,
                                   job + " ended " + state + "; " + std::to_string(unreported()) +
                                       " unfinished runs submitted again");
          return true;
        }
        report_unfinished(RunOutcome::failed,
                          job + " ended " + state + "; gave up after " +
                              std::to_string(submissions) + " submissions",
                          true);
        return false;
      case JobEnding::time_limit:
        // The run that was going when the limit struck is the one that took too long.
        report_unfinished(RunOutcome::timeout,
                          job + " hit its time limit (" + std::to_string(time_limit_minutes_) +
                              " min) during this run",
                          true, /*only_started=*/true);
        if (unreported() == 0) return false;
        if (can_resubmit) {
          ++resubmits_;
          spdlog::warn("slurm: {} hit its time limit; resubmitting its {} runs not started ({}/{})",
                       job, unreported(), resubmits_, options_.max_resubmits);
          sink_.on_job_resubmitted(request_.tag, job_id_,
                                   job + " hit its time limit; " + std::to_string(unreported()) +
                                       " runs not started submitted again");
          return true;
        }
        report_unfinished(RunOutcome::timeout,
                          "not run: " + job + " hit its time limit (" +
                              std::to_string(time_limit_minutes_) + " min)",
                          false);
        return false;
      case JobEnding::cancelled:
        report_unfinished(RunOutcome::cancelled,
                          job + " was cancelled outside colltune (" + state + ")", true);
        return false;
      case JobEnding::failed:
        // The script stops with kJobGoneExit when a launch found the allocation gone and Slurm
        // did not end the job itself in the meantime: not the runs' fault.
        if (status.exit_code && status.exit_code->exit == slurm::kJobGoneExit &&
            output_tail().find(slurm::kJobGoneMessage) != std::string::npos) {
          if (can_resubmit) {
            ++resubmits_;
            spdlog::warn("slurm: {} lost its allocation; resubmitting its {} unfinished runs", job,
                         unreported());
            sink_.on_job_resubmitted(request_.tag, job_id_,
                                     job + " lost its allocation (" + state + ")" + output_tail() +
                                         "; " + std::to_string(unreported()) +
                                         " unfinished runs submitted again");
            return true;
          }
          report_unfinished(RunOutcome::failed, job + " lost its allocation" + output_tail(), true);
          return false;
        }
        report_unfinished(RunOutcome::failed, job + " ended " + state + output_tail(), true);
        return false;
    }
    return false;
  }

  const SlurmBackendOptions& options_;
  const std::string& template_text_;
  slurm::SlurmClient& client_;
  const BenchmarkRequest& request_;
  RunSink& sink_;
  const CancelFlag& cancel_;
  const fs::path job_dir_;
  const std::string fallback_ompi_version_;

  std::vector<PlannedRun> runs_;
  std::string job_id_;
  std::set<std::string> known_job_ids_;  // jobs this call submitted or followed
  std::optional<slurm::NodeFacts> facts_;
  int time_limit_minutes_ = 0;
  int resubmits_ = 0;
  bool cancel_sent_ = false;
  bool all_ok_ = true;
};
}  // namespace

bool run_slurm_batch(const SlurmBackendOptions& options, const std::string& template_text,
                     slurm::SlurmClient& client, const BenchmarkRequest& request, RunSink& sink,
                     const CancelFlag& cancel, const std::filesystem::path& job_dir,
                     const std::string& fallback_ompi_version,
                     const std::vector<std::string>& osu_argv) {
  BatchRunner batch(options, template_text, client, request, sink, cancel, job_dir,
                    fallback_ompi_version);
  return batch.run(osu_argv);
}

}  // namespace colltune
