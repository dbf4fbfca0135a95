#include "slurm/job_folder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "slurm/shell_quote.h"

namespace colltune::slurm {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_text(const fs::path& path, std::size_t max_bytes,
                                     bool* truncated = nullptr) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(max_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (truncated) *truncated = in.peek() != std::ifstream::traits_type::eof();
  return text;
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

fs::path run_file(const fs::path& job_dir, std::string_view id, std::string_view suffix) {
  return job_dir / kRunsSubdir / (std::string(id) + std::string(suffix));
}

AttemptRecord read_attempt(const fs::path& job_dir, std::string_view id, int n,
                           std::size_t max_bytes) {
  AttemptRecord a;
  a.attempt = n;
  const std::string prefix = ".a" + std::to_string(n);
  if (auto start = read_text(run_file(job_dir, id, prefix + ".start"), 4096)) {
    auto w = words(*start);
    if (!w.empty()) a.start_time = parse_epoch_seconds(w[0]).value_or(0);
    if (w.size() > 1) a.host = w[1];
  }
  bool truncated = false;
  a.stdout_text =
      read_text(run_file(job_dir, id, prefix + ".out"), max_bytes, &truncated).value_or("");
  a.output_truncated = truncated;
  a.stderr_text =
      read_text(run_file(job_dir, id, prefix + ".err"), max_bytes, &truncated).value_or("");
  a.output_truncated = a.output_truncated || truncated;
  if (auto end = read_text(run_file(job_dir, id, prefix + ".end"), 4096)) {
    auto w = words(*end);
    if (!w.empty()) {
      if (auto status = parse_int(w[0])) {
        a.finished = true;
        a.exit_status = *status;
      }
    }
    if (w.size() > 1) a.end_time = parse_epoch_seconds(w[1]).value_or(0);
  }
  return a;
}

}  // namespace

std::optional<double> parse_epoch_seconds(std::string_view text) {
  std::string s(text);
  for (char& c : s)
    if (c == ',') c = '.';
  double value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

bool run_is_done(const fs::path& job_dir, std::string_view id) {
  std::error_code ec;
  return fs::exists(run_file(job_dir, id, ".done"), ec);
}

RunRecord read_run(const fs::path& job_dir, std::string_view id, std::size_t max_output_bytes) {
  RunRecord record;
  record.id = std::string(id);
  int done_attempts = 0;
  if (auto done = read_text(run_file(job_dir, id, ".done"), 64)) {
    auto w = words(*done);
    if (!w.empty()) done_attempts = parse_int(w[0]).value_or(0);
    record.done = done_attempts > 0;
  }
  for (int n = 1;; ++n) {
    if (record.done && n > done_attempts) break;
    std::error_code ec;
    if (!fs::exists(run_file(job_dir, id, ".a" + std::to_string(n) + ".start"), ec)) break;
    record.attempts.push_back(read_attempt(job_dir, id, n, max_output_bytes));
  }
  return record;
}

std::optional<NodeFacts> read_node_facts(const fs::path& job_dir) {
  auto text = read_text(job_dir / kNodeInfoFile, 64 << 10);
  if (!text) return std::nullopt;
  NodeFacts facts;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    auto key = line.substr(0, eq);
    auto value = line.substr(eq + 1);
    if (key == "job_id")
      facts.job_id = value;
    else if (key == "host")
      facts.host = value;
    else if (key == "cores")
      facts.cores = parse_int(value).value_or(0);
    else if (key == "yield_when_idle")
      facts.yield_when_idle = value == "1";
    else if (key == "ompi")
      facts.ompi = value;
    else if (key == "nodelist")
      facts.node_list = value;
  }
  return facts;
}

fs::path recorded_job_folder(const fs::path& root, std::string_view tag, double recorded_at) {
  const auto millis = static_cast<long long>(std::llround(recorded_at * 1000));
  const std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char stamp[40] = {};
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  char ms[8] = {};
  std::snprintf(ms, sizeof ms, "-%03lld", millis % 1000);
  return root / (sanitize_name(tag.empty() ? "batch" : tag, 48) + "-" + stamp + ms);
}

std::vector<int> submitted_scripts(const fs::path& job_dir) {
  std::vector<int> numbers;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(job_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 8 || name.rfind("job-", 0) != 0 || !name.ends_with(".sh")) continue;
    const std::string_view digits(name.data() + 4, name.size() - 7);
    int k = 0;
    auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
    if (err == std::errc() && end == digits.data() + digits.size() && k > 0) numbers.push_back(k);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

fs::path job_id_path(const fs::path& job_dir, int submission) {
  return job_dir / ("job-" + std::to_string(submission) + ".id");
}

std::optional<std::string> read_submitted_job_id(const fs::path& job_dir, int submission) {
  auto text = read_text(job_id_path(job_dir, submission), 64);
  if (!text) return std::nullopt;
  auto w = words(*text);
  if (w.size() != 1 || w[0].find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return w[0];
}

fs::path script_path(const fs::path& job_dir, int submission) {
  return job_dir / ("job-" + std::to_string(submission) + ".sh");
}

fs::path slurm_output_path(const fs::path& job_dir, std::string_view job_id) {
  return job_dir / ("slurm-" + std::string(job_id) + ".out");
}

}  // namespace colltune::slurm
