#include "slurm/job_state.h"

#include <array>
#include <charconv>
#include <utility>

#include "core/text.h"

namespace colltune::slurm {
namespace {

struct StateName {
  JobState state;
  std::string_view long_name;
  std::string_view code;  // squeue %t
};

constexpr std::array<StateName, 21> kStates{{
    {JobState::pending, "PENDING", "PD"},
    {JobState::running, "RUNNING", "R"},
    {JobState::suspended, "SUSPENDED", "S"},
    {JobState::completing, "COMPLETING", "CG"},
    {JobState::configuring, "CONFIGURING", "CF"},
    {JobState::requeued, "REQUEUED", "RQ"},
    {JobState::resizing, "RESIZING", "RS"},
    {JobState::stopped, "STOPPED", "ST"},
    {JobState::signaling, "SIGNALING", "SI"},
    {JobState::stage_out, "STAGE_OUT", "SO"},
    {JobState::completed, "COMPLETED", "CD"},
    {JobState::failed, "FAILED", "F"},
    {JobState::cancelled, "CANCELLED", "CA"},
    {JobState::timeout, "TIMEOUT", "TO"},
    {JobState::node_fail, "NODE_FAIL", "NF"},
    {JobState::preempted, "PREEMPTED", "PR"},
    {JobState::boot_fail, "BOOT_FAIL", "BF"},
    {JobState::deadline, "DEADLINE", "DL"},
    {JobState::out_of_memory, "OUT_OF_MEMORY", "OOM"},
    {JobState::revoked, "REVOKED", "RV"},
    {JobState::special_exit, "SPECIAL_EXIT", "SE"},
}};

}  // namespace

std::string_view to_string(JobState state) {
  for (const auto& s : kStates)
    if (s.state == state) return s.long_name;
  return "UNKNOWN";
}

std::optional<JobState> parse_job_state(std::string_view text) {
  text = trim(text);
  // sacct prints "CANCELLED by 1000"; a trailing '+' marks a truncated field.
  if (auto space = text.find(' '); space != std::string_view::npos) text = text.substr(0, space);
  while (!text.empty() && text.back() == '+') text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  for (const auto& s : kStates)
    if (text == s.long_name || text == s.code) return s.state;
  if (text == "REQUEUE_FED" || text == "REQUEUE_HOLD") return JobState::requeued;
  if (text == "RESV_DEL_HOLD") return JobState::pending;
  return std::nullopt;
}

bool is_terminal(JobState state) {
  switch (state) {
    case JobState::completed:
    case JobState::failed:
    case JobState::cancelled:
    case JobState::timeout:
    case JobState::node_fail:
    case JobState::preempted:
    case JobState::boot_fail:
    case JobState::deadline:
    case JobState::out_of_memory:
    case JobState::revoked:
      return true;
    default:
      return false;
  }
}

JobEnding job_ending(JobState state) {
  switch (state) {
    case JobState::completed:
      return JobEnding::finished;
    case JobState::node_fail:
    case JobState::preempted:
    case JobState::boot_fail:
    case JobState::revoked:
      return JobEnding::resubmit;
    case JobState::timeout:
      return JobEnding::time_limit;
    case JobState::cancelled:
      return JobEnding::cancelled;
    default:
      return JobEnding::failed;
  }
}

std::optional<JobExitCode> parse_job_exit_code(std::string_view text) {
  text = trim(text);
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  JobExitCode code;
  auto parse = [](std::string_view part, int& out) {
    if (part.empty()) return false;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && ptr == part.data() + part.size() && out >= 0;
  };
  if (!parse(text.substr(0, colon), code.exit) || !parse(text.substr(colon + 1), code.signal))
    return std::nullopt;
  return code;
}

std::string to_string(const JobExitCode& code) {
  return std::to_string(code.exit) + ":" + std::to_string(code.signal);
}

}  // namespace colltune::slurm
