#include "campaign/campaign_states.h"

#include <array>
#include <utility>

namespace colltune {
namespace {

template <typename E, std::size_t N>
const char* name_in(const std::array<std::pair<E, const char*>, N>& names, E value) {
  for (const auto& [e, text] : names)
    if (e == value) return text;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse_in(const std::array<std::pair<E, const char*>, N>& names,
                          std::string_view text) {
  for (const auto& [e, name] : names)
    if (text == name) return e;
  return std::nullopt;
}

// The stored strings (the database's format).
constexpr std::array<std::pair<CampaignState, const char*>, 6> kCampaign{{
    {CampaignState::queued, "queued"},
    {CampaignState::running, "running"},
    {CampaignState::paused, "paused"},
    {CampaignState::done, "done"},
    {CampaignState::failed, "failed"},
    {CampaignState::cancelled, "cancelled"},
}};
constexpr std::array<std::pair<ContextState, const char*>, 5> kContext{{
    {ContextState::pending, "pending"},
    {ContextState::searching, "searching"},
    {ContextState::finalizing, "finalizing"},
    {ContextState::done, "done"},
    {ContextState::failed, "failed"},
}};
constexpr std::array<std::pair<JobState, const char*>, 4> kJob{{
    {JobState::submitting, "submitting"},
    {JobState::running, "running"},
    {JobState::done, "done"},
    {JobState::cancelled, "cancelled"},
}};
constexpr std::array<std::pair<JobPurpose, const char*>, 5> kPurpose{{
    {JobPurpose::search, "search"},
    {JobPurpose::final, "final"},
    {JobPurpose::verify, "verify"},
    {JobPurpose::remeasure_tuned, "remeasure-tuned"},
    {JobPurpose::remeasure_default, "remeasure-default"},
}};

}  // namespace

const char* to_string(CampaignState s) { return name_in(kCampaign, s); }
const char* to_string(ContextState s) { return name_in(kContext, s); }
const char* to_string(JobState s) { return name_in(kJob, s); }
const char* to_string(JobPurpose p) { return name_in(kPurpose, p); }

const char* purpose_label(JobPurpose p) {
  switch (p) {
    case JobPurpose::search:
      return "search";
    case JobPurpose::final:
      return "final phase";
    case JobPurpose::verify:
      return "trace check";
    case JobPurpose::remeasure_tuned:
      return "re-measure with the file";
    case JobPurpose::remeasure_default:
      return "re-measure without it";
  }
  return "?";
}

std::optional<CampaignState> parse_campaign_state(std::string_view t) {
  return parse_in(kCampaign, t);
}
std::optional<ContextState> parse_context_state(std::string_view t) {
  return parse_in(kContext, t);
}
std::optional<JobState> parse_job_state(std::string_view t) { return parse_in(kJob, t); }
std::optional<JobPurpose> parse_job_purpose(std::string_view t) { return parse_in(kPurpose, t); }

}  // namespace colltune
