#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>

#include "core/tuning_config.h"

namespace colltune {

ProgressDisplay::ProgressDisplay(std::FILE* out) : out_(out), tty_(::isatty(::fileno(out)) != 0) {}

ProgressDisplay::~ProgressDisplay() { finish_line(); }

void ProgressDisplay::finish_line() {
  if (line_open_) {
    std::fputc('\n', out_);
    line_open_ = false;
  }
  std::fflush(out_);
}

void ProgressDisplay::draw() {
  if (!tty_) return;
  constexpr int kWidth = 24;
  const int total = planned_ > 0 ? planned_ : std::max(evaluations_done_, 1);
  const int filled = std::min(kWidth, evaluations_done_ * kWidth / std::max(total, 1));
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  std::fprintf(out_, "\r\033[K%s %-10s [%s] %d/%s evals  %d runs%s  %s", context_label_.c_str(),
               phase_.c_str(), bar.c_str(), evaluations_done_,
               planned_ > 0 ? std::to_string(planned_).c_str() : "?", runs_done_,
               runs_failed_ ? (" (" + std::to_string(runs_failed_) + " failed)").c_str() : "",
               last_.c_str());
  std::fflush(out_);
  line_open_ = true;
}

void ProgressDisplay::on_event(const std::string& type, const nlohmann::json& p) {
  if (type == "context_started") {
    finish_line();
    context_label_ = "[" + p.value("collective", std::string("?")) +
                     " P=" + std::to_string(p.value("comm_size", 0)) + "]";
    planned_ = p.value("planned", -1);
    evaluations_done_ = 0;
    runs_done_ = 0;
    runs_failed_ = 0;
    phase_ = "search";
    std::fprintf(out_, "%s search space %d configurations, planned %s evaluations\n",
                 context_label_.c_str(), p.value("space", 0),
                 planned_ > 0 ? std::to_string(planned_).c_str() : "adaptive");
    std::fflush(out_);
  } else if (type == "job_started") {
    phase_ = p.value("purpose", std::string("search"));
    // Jobs of the rules stage (verify, re-measure) come after every context: the job names
    // its own context.
    if (p.contains("collective") && p.contains("comm_size"))
      context_label_ = "[" + p.value("collective", std::string("?")) +
                       " P=" + std::to_string(p.value("comm_size", 0)) + "]";
    if (!tty_)
      std::fprintf(out_, "%s %s job %s: %d runs\n", context_label_.c_str(), phase_.c_str(),
                   p.value("tag", std::string()).c_str(), p.value("runs", 0));
    draw();
  } else if (type == "run") {
    ++runs_done_;
    const std::string outcome = p.value("outcome", std::string());
    if (outcome != "ok") ++runs_failed_;
    if (p.value("purpose", std::string()) == "search" && p.value("repeat", 0) == 0)
      ++evaluations_done_;
    TuningConfig c = p.at("config").get<TuningConfig>();
    last_ = to_string(c) + " " + outcome;
    if (!tty_ && outcome != "ok")
      std::fprintf(out_, "%s run %s: %s (%s)\n", context_label_.c_str(), to_string(c).c_str(),
                   outcome.c_str(), p.value("error", std::string()).c_str());
    draw();
  } else if (type == "context_done") {
    draw();
    finish_line();
    std::fprintf(out_, "%s done: %d runs\n", context_label_.c_str(), runs_done_);
    std::fflush(out_);
  } else if (type == "sizes_failed") {
    finish_line();
    for (const auto& size : p.value("sizes", nlohmann::json::array()))
      std::fprintf(out_, "%s size %lld FAILED: %s\n", context_label_.c_str(),
                   static_cast<long long>(size.value("msg_size", std::int64_t{0})),
                   size.value("reason", std::string()).c_str());
    std::fflush(out_);
  } else if (type == "campaign_state" && p.value("state", std::string()) == "failed") {
    finish_line();
    std::fprintf(out_, "campaign failed: %s\n", p.value("error", std::string()).c_str());
  }
}

}  // namespace colltune
