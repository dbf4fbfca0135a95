#include "slurm/slurm_client.h"

namespace colltune::slurm {
namespace {

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return {};
  auto start = text.find_last_of('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end - start + 1);
}

}  // namespace

std::string CommandOutput::failure() const {
  if (!spawn_error.empty()) return spawn_error;
  if (timed_out) return "timed out";
  std::string line = last_line(stderr_text);
  if (line.empty()) line = last_line(stdout_text);
  if (line.empty()) line = "exit status " + std::to_string(exit_code);
  return line;
}

SlurmClient::SlurmClient(SlurmCommands commands, CommandRunner runner, double command_timeout_s)
    : commands_(std::move(commands)), runner_(std::move(runner)), timeout_s_(command_timeout_s) {}

CommandOutput SlurmClient::run(const std::vector<std::string>& argv) const {
  return runner_(argv, timeout_s_);
}

SubmitResult SlurmClient::submit(const std::filesystem::path& script,
                                 const std::vector<std::string>& extra_args) {
  SubmitResult result;
  result.argv = {commands_.sbatch, "--parsable"};
  for (const auto& a : extra_args) result.argv.push_back(a);
  result.argv.push_back(script.string());
  auto out = run(result.argv);
  if (out.ok()) {
    if (auto id = parse_sbatch_parsable(out.stdout_text)) {
      result.job_id = *id;
      return result;
    }
    result.error = "sbatch printed no job id: " + last_line(out.stdout_text);
    return result;
  }
  result.error = "sbatch failed: " + out.failure();
  result.transient = out.timed_out || is_transient_slurm_error(out.stderr_text);
  return result;
}

StatusQuery SlurmClient::status(std::string_view job_id) {
  StatusQuery query;
  auto out = run({commands_.squeue, "-h", "-t", "all", "-j", std::string(job_id), "-o",
                  std::string(kSqueueFormat)});
  if (out.ok()) {
    if (auto entry = parse_squeue(out.stdout_text, job_id)) {
      JobStatus status{entry->job_id, entry->state, entry->reason, std::nullopt,
                       JobStatus::Source::queue};
      if (is_terminal(status.state)) {
        if (auto record = show_job(job_id)) {
          if (auto it = record->find("ExitCode"); it != record->end())
            status.exit_code = parse_job_exit_code(it->second);
        }
      }
      query.status = status;
      return query;
    }
  } else if (!says_invalid_job_id(out.stderr_text)) {
    query.controller_unreachable = true;
    query.error = "squeue failed: " + out.failure();
    return query;
  }
  // squeue no longer knows the job (purged after MinJobAge): ask accounting.
  std::string error;
  if (auto record = accounting(job_id, &error)) {
    query.status = JobStatus{record->job_id, record->state, record->state_text, record->exit_code,
                             JobStatus::Source::accounting};
    return query;
  }
  query.error = "job " + std::string(job_id) + " is neither in squeue nor in accounting" +
                (error.empty() ? std::string() : " (" + error + ")");
  return query;
}

std::optional<AccountingRecord> SlurmClient::accounting(std::string_view job_id,
                                                        std::string* error) {
  auto query = [&](bool completion_log) {
    std::vector<std::string> argv = {commands_.sacct};
    if (completion_log) argv.push_back("-c");
    for (const char* a : {"-X", "-n", "-P", "-o"}) argv.emplace_back(a);
    argv.emplace_back(kSacctFields);
    argv.emplace_back("-j");
    argv.emplace_back(job_id);
    return run(argv);
  };
  if (accounting_mode_ != AccountingMode::completion_log) {
    auto out = query(false);
    if (out.ok()) {
      accounting_mode_ = AccountingMode::database;
      return parse_sacct(out.stdout_text, job_id);
    }
    if (!says_accounting_disabled(out.stderr_text)) {
      if (error) *error = "sacct failed: " + out.failure();
      return std::nullopt;
    }
    accounting_mode_ = AccountingMode::completion_log;
  }
  auto out = query(true);
  if (!out.ok()) {
    if (error) *error = "sacct -c failed: " + out.failure();
    return std::nullopt;
  }
  return parse_sacct(out.stdout_text, job_id);
}

std::optional<std::vector<NamedJob>> SlurmClient::find_jobs_by_name(std::string_view name,
                                                                    std::string* error) {
  std::map<long long, NamedJob> found;
  std::string errors;
  auto add = [&](std::vector<NamedJob> jobs, bool replace) {
    for (auto& job : jobs) {
      const long long id = std::stoll(job.job_id);
      if (replace || !found.count(id)) found[id] = std::move(job);
    }
  };
  bool asked = false;
  // Accounting first, then squeue over it: squeue shows the current state of a live job.
  auto sacct = [&](bool completion_log) {
    std::vector<std::string> argv = {commands_.sacct};
    if (completion_log) argv.push_back("-c");
    for (const char* a : {"-X", "-n", "-P", "-o"}) argv.emplace_back(a);
    argv.emplace_back(kSacctNamedFields);
    argv.emplace_back("--name=" + std::string(name));
    return run(argv);
  };
  auto out = accounting_mode_ == AccountingMode::completion_log ? CommandOutput{} : sacct(false);
  if (accounting_mode_ != AccountingMode::completion_log && out.ok()) {
    accounting_mode_ = AccountingMode::database;
    add(parse_sacct_named(out.stdout_text, name), true);
    asked = true;
  } else if (accounting_mode_ == AccountingMode::completion_log ||
             says_accounting_disabled(out.stderr_text)) {
    accounting_mode_ = AccountingMode::completion_log;
    auto log = sacct(true);
    if (log.ok()) {
      add(parse_sacct_named(log.stdout_text, name), true);
      asked = true;
    } else {
      errors = "sacct -c failed: " + log.failure();
    }
  } else {
    errors = "sacct failed: " + out.failure();
  }
  auto queue = run({commands_.squeue, "-h", "-t", "all", "--name=" + std::string(name), "-o",
                    std::string(kSqueueNamedFormat)});
  if (queue.ok()) {
    add(parse_squeue_named(queue.stdout_text, name), true);
    asked = true;
  } else {
    errors += (errors.empty() ? "" : "; ") + ("squeue failed: " + queue.failure());
  }
  if (!asked) {
    if (error) *error = errors;
    return std::nullopt;
  }
  std::vector<NamedJob> jobs;
  for (auto& [id, job] : found) jobs.push_back(std::move(job));
  return jobs;
}

std::optional<std::map<std::string, std::string>> SlurmClient::show_job(std::string_view job_id) {
  auto out = run({commands_.scontrol, "show", "job", "-o", std::string(job_id)});
  if (!out.ok()) return std::nullopt;
  auto record = parse_scontrol_record(out.stdout_text);
  if (record.empty()) return std::nullopt;
  return record;
}

bool SlurmClient::cancel(std::string_view job_id, std::string* error) {
  auto out = run({commands_.scancel, std::string(job_id)});
  if (!out.ok() && error) *error = "scancel failed: " + out.failure();
  return out.ok();
}

bool SlurmClient::ping(std::string* detail) {
  auto out = run({commands_.scontrol, "ping"});
  if (detail) {
    // The line naming the controller ("Slurmctld(primary) at HOST is DOWN"), not the banner
    // of asterisks scontrol prints under it.
    const std::string all = out.stdout_text + "\n" + out.stderr_text;
    const auto at = all.find("Slurmctld");
    *detail = !out.spawn_error.empty() ? out.spawn_error
              : out.timed_out
                  ? "no answer within " + std::to_string(static_cast<int>(timeout_s_)) + " s"
              : at != std::string::npos ? all.substr(at, all.find('\n', at) - at)
                                        : last_line(all);
  }
  return out.spawn_error.empty() && !out.timed_out && ping_says_up(out.stdout_text);
}

std::optional<std::vector<NodeInfo>> SlurmClient::nodes(std::string_view partition,
                                                        std::string* error) {
  std::vector<std::string> argv = {commands_.sinfo, "-h", "-N", "-o",
                                   std::string(kSinfoNodeFormat)};
  if (!partition.empty()) {
    argv.emplace_back("-p");
    argv.emplace_back(partition);
  }
  auto out = run(argv);
  if (!out.ok()) {
    if (error) *error = "sinfo failed: " + out.failure();
    return std::nullopt;
  }
  return parse_sinfo_nodes(out.stdout_text);
}

}  // namespace colltune::slurm
