// Prometheus metrics of the daemon (text exposition format 0.0.4 at GET /metrics): request
// counts and latency per route, optimizer decision time, events, and counts read from the store
// at scrape time (campaigns by state, jobs by state, runs by outcome, measurements).
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
  void set_gauge(const std::string& name, double value);

  std::string render(Store& store);

 private:
  std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t> requests_;
  std::map<std::pair<std::string, std::string>, Histogram> request_seconds_;
  Histogram decision_seconds_;
  std::map<std::string, std::uint64_t> events_;
  std::map<std::string, double> gauges_;
};

// Escapes a Prometheus label value.
std::string prometheus_label(const std::string& value);

}  // namespace colltune
