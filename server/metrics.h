// Prometheus metrics of the daemon (text exposition format 0.0.4 at GET /metrics): request
// counts and latency per route, optimizer decision time, events, and what is read from the
// store at scrape time (campaigns by state, every state present even at 0; jobs by state; runs
// by outcome; measurements; the deployed rules version per target; the last sentinel verdict;
// the last re-tune). Every family has # HELP and # TYPE (promtool check metrics passes);
// colltune_build_info{version,sqlite} 1 says what is running.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "campaign/store.h"

namespace colltune {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // `name` with optional `labels` ("route=\"/x\""), as _bucket, _sum and _count lines.
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bound, then +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();

  // `route`: the route's template ("/api/v1/campaigns/{id}"), never the raw path, so the
  // label set stays small.
  void observe_request(const std::string& method, const std::string& route, int status,
                       double seconds);
  // Time between a campaign's previous job (or its context's start) and its next search job.
  void observe_decision(double seconds);
  void count_event(const std::string& type);
  // A gauge the caller refreshes before render(); `help` is its # HELP text.
  void set_gauge(const std::string& name, const std::string& help, double value);
  // A counter kept elsewhere (a monotonic total since the daemon started) that the caller
  // copies in before render(); rendered with # TYPE counter. `name` ends in "_total".
  void set_counter(const std::string& name, const std::string& help, double value);

  std::string render(Store& store);

 private:
  std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t> requests_;
  std::map<std::pair<std::string, std::string>, Histogram> request_seconds_;
  Histogram decision_seconds_;
  std::map<std::string, std::uint64_t> events_;
  std::map<std::string, std::pair<std::string, double>> gauges_;    // name -> help, value
  std::map<std::string, std::pair<std::string, double>> counters_;  // name -> help, value
};

// The event the daemon records for each sentinel report (POST /api/v1/sentinel): payload
// {"regression": bool, ...the report}. The metrics read the newest one.
inline constexpr const char* kSentinelReportEvent = "sentinel_report";
// The event of a re-tuning campaign started by POST /api/v1/retune.
inline constexpr const char* kRetuneStartedEvent = "retune_started";

// Escapes a Prometheus label value.
std::string prometheus_label(const std::string& value);

}  // namespace colltune
