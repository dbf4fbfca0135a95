// The states of a campaign, a context and a job, and the purposes of a job, as enums. Code
// holds and compares the enums everywhere, the store's records and parameters included. The
// strings below are their text at the edges: the database's format (only the store converts,
// campaign/store.cpp: these strings never change, so that every existing database still opens
// and reads the same, and a stored string that names none is an error), and the JSON of the
// HTTP API, the CLI and the reports (to_string; parse_* reads a filter or an API answer).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace colltune {

// queued -> running -> done | failed; running -> paused (resumable) | cancelled.
enum class CampaignState { queued, running, paused, done, failed, cancelled };
// pending -> searching -> finalizing -> done | failed.
enum class ContextState { pending, searching, finalizing, done, failed };
// submitting (recorded, not yet on the backend) -> running -> done | cancelled.
enum class JobState { submitting, running, done, cancelled };
// What a job measures: the search, the final phase, the rules stage's trace proof and its
// re-measurement with the file loaded (tuned) and without (default).
enum class JobPurpose { search, final, verify, remeasure_tuned, remeasure_default };

const char* to_string(CampaignState state);
const char* to_string(ContextState state);
const char* to_string(JobState state);
const char* to_string(JobPurpose purpose);

// Every state, in lifecycle order (the API's filters, the metrics' series).
inline constexpr CampaignState kCampaignStates[] = {
    CampaignState::queued, CampaignState::running, CampaignState::paused,
    CampaignState::done,   CampaignState::failed,  CampaignState::cancelled};
inline constexpr ContextState kContextStates[] = {ContextState::pending, ContextState::searching,
                                                  ContextState::finalizing, ContextState::done,
                                                  ContextState::failed};
inline constexpr JobState kJobStates[] = {JobState::submitting, JobState::running, JobState::done,
                                          JobState::cancelled};

// Every purpose, in a campaign's order (search, final phase, the rules stage's checks).
inline constexpr JobPurpose kJobPurposes[] = {JobPurpose::search, JobPurpose::final,
                                              JobPurpose::verify, JobPurpose::remeasure_tuned,
                                              JobPurpose::remeasure_default};
// What reports call a purpose's jobs ("final phase", "re-measure with the file", ...).
const char* purpose_label(JobPurpose purpose);

// nullopt for a string that names none.
std::optional<CampaignState> parse_campaign_state(std::string_view text);
std::optional<ContextState> parse_context_state(std::string_view text);
std::optional<JobState> parse_job_state(std::string_view text);
std::optional<JobPurpose> parse_job_purpose(std::string_view text);

// A campaign in one of these states has ended (no worker will run it again by itself).
inline bool is_final(CampaignState state) {
  return state == CampaignState::done || state == CampaignState::cancelled;
}

// A job not finished: recorded (submitting) or on its backend (running).
inline bool is_unfinished(JobState state) {
  return state == JobState::submitting || state == JobState::running;
}

}  // namespace colltune
