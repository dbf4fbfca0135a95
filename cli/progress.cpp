#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "campaign/campaign_states.h"
#include "core/iso_time.h"
#include "core/tuning_config.h"

namespace colltune {
namespace {

double system_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "[bcast P=4]", or for a whole-cluster search "[bcast P=2,4,8]".
std::string label_of(const nlohmann::json& p) {
  std::string sizes = std::to_string(p.value("comm_size", 0));
  if (const auto list = p.find("comm_sizes"); list != p.end() && list->is_array()) {
    sizes.clear();
    for (const auto& size : *list)
      if (size.is_number_integer())
        sizes += (sizes.empty() ? "" : ",") + std::to_string(size.get<int>());
  }
  return "[" + p.value("collective", std::string("?")) + " P=" + sizes + "]";
}

}  // namespace

std::string format_duration(double seconds) {
  const long long s = std::max(0LL, std::llround(seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%llds", s);
  return buf;
}

ProgressDisplay::ProgressDisplay(std::FILE* out, ProgressMode mode)
    : out_(out),
      tty_(mode == ProgressMode::terminal ||
           (mode == ProgressMode::detect && ::isatty(::fileno(out)) != 0)),
      now_(system_now) {
  context_start_ = now_();
}

ProgressDisplay::~ProgressDisplay() { finish_line(); }

void ProgressDisplay::finish_line() {
  if (line_open_) {
    std::fputc('\n', out_);
    line_open_ = false;
  }
  std::fflush(out_);
}

void ProgressDisplay::line(const std::string& text) {
  finish_line();
  if (tty_)
    std::fprintf(out_, "%s\n", text.c_str());
  else
    std::fprintf(out_, "%s %s\n", iso8601_utc(now_()).c_str(), text.c_str());
  std::fflush(out_);
}

void ProgressDisplay::draw() {
  if (!tty_) return;
  constexpr int kWidth = 24;
  const int plan = planned_ > 0 ? planned_ : budget_;
  const int total = plan > 0 ? plan : std::max(evaluations_done_, 1);
  const int filled = std::min(kWidth, evaluations_done_ * kWidth / std::max(total, 1));
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  const double elapsed = now_() - context_start_;
  std::string timing = format_duration(elapsed);
  if (phase_ == "search" && plan > 0 && evaluations_done_ > 0 && evaluations_done_ < plan)
    timing += " ETA " + format_duration(elapsed / evaluations_done_ * (plan - evaluations_done_));
  std::fprintf(out_, "\r\033[K%s %-10s [%s] %d/%s evals  %d runs%s  %s  %s", context_label_.c_str(),
               phase_.c_str(), bar.c_str(), evaluations_done_,
               plan > 0 ? std::to_string(plan).c_str() : "?", runs_done_,
               runs_failed_ ? (" (" + std::to_string(runs_failed_) + " failed)").c_str() : "",
               timing.c_str(), last_.c_str());
  std::fflush(out_);
  line_open_ = true;
}

void ProgressDisplay::on_event(const std::string& type, const nlohmann::json& p) {
  if (type == "context_started") {
    context_label_ = label_of(p);
    planned_ = p.value("planned", -1);
    evaluations_done_ = 0;
    runs_done_ = 0;
    runs_failed_ = 0;
    phase_ = p.value("phase", std::string("search"));
    context_start_ = now_();
    const std::string planned = planned_ > 0 ? std::to_string(planned_) : std::string("adaptive");
    if (phase_ == "final")  // a whole-cluster campaign's size, its search done
      line(context_label_ +
           " final phase: the paired test against Open MPI's default (the whole-cluster search "
           "is done)");
    else if (const auto sizes = p.find("comm_sizes"); sizes != p.end() && sizes->is_array()) {
      std::string budget;  // a budget for the whole campaign (docs/whole-cluster.md)
      if (const auto ns = p.find("node_seconds"); ns != p.end() && ns->is_object())
        budget = "; " + std::to_string(std::llround(ns->value("total", 0.0))) +
                 " node-seconds for the search and the final phases, the first final look at "
                 "every size's nominees held back";
      line(context_label_ + " whole-cluster search over " + std::to_string(sizes->size()) +
           " comm sizes: " + std::to_string(p.value("space", 0)) + " configurations in all, " +
           (planned_ > 0 ? "up to " + planned + " evaluations (fewer when its model stops it)"
                         : std::string("evaluations until its model stops it")) +
           budget);
    } else
      line(context_label_ + " search space " + std::to_string(p.value("space", 0)) +
           " configurations, planned " + planned + " evaluations");
  } else if (type == "job_started") {
    phase_ = p.value("purpose", std::string("search"));
    // Jobs of the rules stage (verify, re-measure) come after every context: the job names
    // its own context.
    if (p.contains("collective") && p.contains("comm_size")) context_label_ = label_of(p);
    if (!tty_)
      line(context_label_ + " " + phase_ + " job " + p.value("tag", std::string()) + ": " +
           std::to_string(p.value("runs", 0)) + " runs");
    draw();
  } else if (type == "run") {
    ++runs_done_;
    const std::string outcome = p.value("outcome", std::string());
    if (outcome != "ok") ++runs_failed_;
    if (p.value("purpose", std::string()) == "search" && p.value("repeat", 0) == 0)
      ++evaluations_done_;
    std::string config = "?";
    if (p.contains("config") && p.at("config").is_object()) {
      try {
        config = to_string(p.at("config").get<TuningConfig>());
      } catch (const nlohmann::json::exception&) {
      }
    }
    last_ = config + " " + outcome;
    if (!tty_ && outcome != "ok")
      line(context_label_ + " run " + config + ": " + outcome + " (" +
           p.value("error", std::string()) + ")");
    draw();
  } else if (type == "search_stopped") {
    const int done = p.value("evaluations", 0);
    const int planned = p.value("planned", -1);
    const std::string reason = p.value("reason", std::string());
    const std::string label = p.contains("collective") ? label_of(p) : context_label_;
    const std::string took = format_duration(now_() - context_start_);
    if (reason == "converged")
      line(label + " search stopped early after " + std::to_string(done) + " of " +
           std::to_string(planned) + " planned evaluations (the strategy's stopping rule) in " +
           took);
    else if (reason == "time_budget")
      line(label + " search stopped after " + std::to_string(done) +
           " evaluations: the campaign's benchmark-time budget is spent (" + took + ")");
    else
      line(label + " search done: " + std::to_string(done) + " evaluations in " + took +
           (p.value("stop_reason", std::string()).empty()
                ? std::string()
                : " (stopped by: " + p.value("stop_reason", std::string()) + ")"));
  } else if (type == "context_done") {
    draw();
    line(context_label_ + " done: " + std::to_string(runs_done_) + " runs in " +
         format_duration(now_() - context_start_));
  } else if (type == "sizes_failed") {
    for (const auto& size : p.value("sizes", nlohmann::json::array()))
      line(context_label_ + " size " + std::to_string(size.value("msg_size", std::int64_t{0})) +
           " FAILED: " + size.value("reason", std::string()));
  } else if (type == "campaign_state") {
    const std::string text = p.value("state", std::string());
    const auto state = parse_campaign_state(text);
    if (state == CampaignState::failed)
      line("campaign failed: " + p.value("error", std::string()));
    else if (state == CampaignState::done || state == CampaignState::cancelled ||
             state == CampaignState::paused)
      line("campaign " + text);
  }
}

}  // namespace colltune
