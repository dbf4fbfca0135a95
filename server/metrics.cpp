#include "server/metrics.h"

#include <sqlite3.h>

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/version.h"

namespace colltune {
namespace {

// Shortest text that reads back as the same double ("0.1", not "0.10000000000000001").
std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

const std::vector<double> kRequestBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                            0.1,    0.25,  0.5,    1,     2.5,  5,     10};
const std::vector<double> kDecisionBounds = {0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5,
                                             1,     2.5,   5,    10,   30,  60};

// One line per value of `all`, in label order, with its count in `counts` (0 if absent).
template <typename E, std::size_t N>
std::string gauge_by_label(const char* metric, const char* label, const E (&all)[N],
                           const std::vector<std::pair<E, std::int64_t>>& counts) {
  std::map<std::string, std::int64_t> by_label;
  for (E value : all) by_label[std::string(to_string(value))] = 0;
  for (const auto& [value, n] : counts) by_label[std::string(to_string(value))] = n;
  std::string out;
  for (const auto& [name, n] : by_label)
    out += std::string(metric) + "{" + label + "=\"" + prometheus_label(name) + "\"} " +
           std::to_string(n) + "\n";
  return out;
}

}  // namespace

std::string prometheus_label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  const std::string sep = labels.empty() ? "" : ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    out += name + "_bucket{" + labels + sep + "le=\"" + le + "\"} " + std::to_string(cumulative) +
           "\n";
  }
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += name + "_sum" + braces + " " + number(sum_) + "\n";
  out += name + "_count" + braces + " " + std::to_string(count_) + "\n";
}

Metrics::Metrics() : decision_seconds_(kDecisionBounds) {}

void Metrics::observe_request(const std::string& method, const std::string& route, int status,
                              double seconds) {
  std::lock_guard lock(mutex_);
  ++requests_[{method, route, status}];
  auto it = request_seconds_.find({method, route});
  if (it == request_seconds_.end())
    it = request_seconds_.emplace(std::make_pair(method, route), Histogram(kRequestBounds)).first;
  it->second.observe(seconds);
}

void Metrics::observe_decision(double seconds) {
  std::lock_guard lock(mutex_);
  decision_seconds_.observe(seconds);
}

void Metrics::count_event(const std::string& type) {
  std::lock_guard lock(mutex_);
  ++events_[type];
}

void Metrics::set_gauge(const std::string& name, const std::string& help, double value) {
  std::lock_guard lock(mutex_);
  gauges_[name] = {help, value};
}

void Metrics::set_counter(const std::string& name, const std::string& help, double value) {
  std::lock_guard lock(mutex_);
  counters_[name] = {help, value};
}

std::string Metrics::render(Store& store) {
  // Store counts first, outside our lock.
  const auto campaigns = store.campaign_state_counts();
  const auto jobs = store.job_state_counts();
  const auto runs = store.run_outcome_counts();
  const auto measurements = store.count_measurements(0);
  std::map<std::string, std::int64_t> deployed;  // target -> rules version id
  for (const auto& v : store.rules_versions())
    if (!v.deployed_to.empty() && !deployed.count(v.deployed_to)) deployed[v.deployed_to] = v.id;
  const auto sentinel = store.last_event_of_type(kSentinelReportEvent);
  const auto retune = store.last_event_of_type(kRetuneStartedEvent);

  std::string out;
  out +=
      "# HELP colltune_build_info The running colltune (always 1; the labels say which).\n"
      "# TYPE colltune_build_info gauge\n";
  out += "colltune_build_info{version=\"" + prometheus_label(std::string(kColltuneVersion)) +
         "\",sqlite=\"" + prometheus_label(sqlite3_libversion()) + "\"} 1\n";
  out +=
      "# HELP colltune_rules_deployed_version Rules version id live at each deploy target "
      "(0 without a target label: nothing deployed).\n"
      "# TYPE colltune_rules_deployed_version gauge\n";
  if (deployed.empty()) out += "colltune_rules_deployed_version 0\n";
  for (const auto& [target, id] : deployed)
    out += "colltune_rules_deployed_version{target=\"" + prometheus_label(target) + "\"} " +
           std::to_string(id) + "\n";
  out +=
      "# HELP colltune_sentinel_last_verdict The newest sentinel report: 1 on the verdict it "
      "gave (ok, regression), 0 on the others; none = no report yet.\n"
      "# TYPE colltune_sentinel_last_verdict gauge\n";
  const std::string verdict =
      !sentinel ? "none" : (sentinel->payload.value("regression", false) ? "regression" : "ok");
  for (const char* v : {"none", "ok", "regression"})
    out += std::string("colltune_sentinel_last_verdict{verdict=\"") + v + "\"} " +
           (verdict == v ? "1" : "0") + "\n";
  out +=
      "# HELP colltune_sentinel_last_report_timestamp_seconds When the newest sentinel report "
      "arrived (Unix time; 0 = never).\n"
      "# TYPE colltune_sentinel_last_report_timestamp_seconds gauge\n";
  out += "colltune_sentinel_last_report_timestamp_seconds " +
         number(sentinel ? sentinel->time : 0) + "\n";
  out +=
      "# HELP colltune_retune_last_timestamp_seconds When the newest re-tuning campaign was "
      "started (Unix time; 0 = never).\n"
      "# TYPE colltune_retune_last_timestamp_seconds gauge\n";
  out += "colltune_retune_last_timestamp_seconds " + number(retune ? retune->time : 0) + "\n";
  // Every state and outcome is present, 0 when none (alerts see a series, not a gap).
  out += "# HELP colltune_campaigns by state.\n# TYPE colltune_campaigns gauge\n";
  out += gauge_by_label("colltune_campaigns", "state", kCampaignStates, campaigns);
  out += "# HELP colltune_jobs Backend jobs by state.\n# TYPE colltune_jobs gauge\n";
  out += gauge_by_label("colltune_jobs", "state", kJobStates, jobs);
  out += "# HELP colltune_runs Benchmark runs by outcome.\n# TYPE colltune_runs gauge\n";
  out += gauge_by_label("colltune_runs", "outcome", kRunOutcomes, runs);
  out +=
      "# HELP colltune_measurements Stored measurements (run x message size).\n"
      "# TYPE colltune_measurements gauge\n";
  out += "colltune_measurements " + std::to_string(measurements) + "\n";

  std::lock_guard lock(mutex_);
  out +=
      "# HELP colltune_http_requests_total HTTP requests by method, route and status.\n"
      "# TYPE colltune_http_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    const auto& [method, route, status] = key;
    out += "colltune_http_requests_total{method=\"" + prometheus_label(method) + "\",route=\"" +
           prometheus_label(route) + "\",status=\"" + std::to_string(status) + "\"} " +
           std::to_string(n) + "\n";
  }
  out +=
      "# HELP colltune_http_request_duration_seconds Time to answer a request (handler).\n"
      "# TYPE colltune_http_request_duration_seconds histogram\n";
  for (const auto& [key, histogram] : request_seconds_)
    histogram.render(out, "colltune_http_request_duration_seconds",
                     "method=\"" + prometheus_label(key.first) + "\",route=\"" +
                         prometheus_label(key.second) + "\"");
  out +=
      "# HELP colltune_optimizer_decision_seconds Time from a job's end (or a context's "
      "start) to the next search job: the strategy's decision and its bookkeeping.\n"
      "# TYPE colltune_optimizer_decision_seconds histogram\n";
  decision_seconds_.render(out, "colltune_optimizer_decision_seconds", "");
  out +=
      "# HELP colltune_events_total Events published, by type.\n"
      "# TYPE colltune_events_total counter\n";
  for (const auto& [type, n] : events_)
    out += "colltune_events_total{type=\"" + prometheus_label(type) + "\"} " + std::to_string(n) +
           "\n";
  for (const auto& [name, gauge] : gauges_)
    out += "# HELP " + name + " " + gauge.first + "\n# TYPE " + name + " gauge\n" + name + " " +
           number(gauge.second) + "\n";
  for (const auto& [name, counter] : counters_)
    out += "# HELP " + name + " " + counter.first + "\n# TYPE " + name + " counter\n" + name + " " +
           number(counter.second) + "\n";
  return out;
}

}  // namespace colltune
