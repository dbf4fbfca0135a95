// Timestamps for machines and logs: ISO-8601 / RFC 3339 in UTC ("2026-11-24T03:13:34Z").
#pragma once

#include <chrono>
#include <ctime>
#include <string>

namespace colltune {

// `epoch_seconds` (seconds since 1970 UTC, fractions dropped) as "YYYY-MM-DDTHH:MM:SSZ".
inline std::string iso8601_utc(double epoch_seconds) {
  const std::time_t t = static_cast<std::time_t>(epoch_seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The current time in seconds since 1970 UTC, fractions kept (the system clock: what run
// provenance, the store's records and the deploy log stamp).
inline double unix_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The current time as iso8601_utc.
inline std::string iso8601_now() { return iso8601_utc(static_cast<double>(std::time(nullptr))); }

}  // namespace colltune
