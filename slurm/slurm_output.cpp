#include "slurm/slurm_output.h"

#include <charconv>

#include "core/text.h"

namespace colltune::slurm {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace

std::optional<std::string> parse_sbatch_parsable(std::string_view stdout_text) {
  // sbatch may print warnings on stdout before the id on some sites: take the last line.
  auto lines = nonblank_lines(stdout_text);
  if (lines.empty()) return std::nullopt;
  auto last = lines.back();
  auto id = last.substr(0, last.find(';'));
  if (!all_digits(id)) return std::nullopt;
  return std::string(id);
}

std::optional<QueueEntry> parse_squeue(std::string_view stdout_text, std::string_view job_id) {
  for (auto line : nonblank_lines(stdout_text)) {
    auto first = line.find('|');
    if (first == std::string_view::npos) continue;
    auto second = line.find('|', first + 1);
    if (second == std::string_view::npos) continue;
    if (trim(line.substr(0, first)) != job_id) continue;
    auto state = parse_job_state(line.substr(first + 1, second - first - 1));
    if (!state) return std::nullopt;
    return QueueEntry{std::string(job_id), *state, std::string(trim(line.substr(second + 1)))};
  }
  return std::nullopt;
}

std::optional<AccountingRecord> parse_sacct(std::string_view stdout_text, std::string_view job_id) {
  std::optional<AccountingRecord> found;
  for (auto line : nonblank_lines(stdout_text)) {
    auto fields = split(line, '|');
    if (fields.size() < 8 || trim(fields[0]) != job_id) continue;
    auto state = parse_job_state(fields[2]);
    if (!state) continue;
    AccountingRecord r;
    r.job_id = std::string(job_id);
    r.job_name = std::string(fields[1]);
    r.state = *state;
    r.state_text = std::string(trim(fields[2]));
    r.exit_code = parse_job_exit_code(fields[3]);
    r.start = std::string(trim(fields[4]));
    r.end = std::string(trim(fields[5]));
    r.elapsed = std::string(trim(fields[6]));
    r.node_list = std::string(trim(fields[7]));
    found = std::move(r);
  }
  return found;
}

namespace {

// The common head of squeue's and sacct's by-name lines, "id|name|state|x|workdir": a job called
// `name` with a plain numeric id (steps such as "12.batch" and array ids are not ours).
std::optional<NamedJob> named_job(const std::vector<std::string_view>& fields,
                                  std::string_view name) {
  if (fields.size() < 5 || trim(fields[1]) != name) return std::nullopt;
  auto state = parse_job_state(fields[2]);
  const auto id = trim(fields[0]);
  if (!state || id.empty() || id.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  NamedJob job;
  job.job_id = std::string(id);
  job.name = std::string(name);
  job.state = *state;
  job.work_dir = std::string(trim(fields[4]));
  return job;
}

}  // namespace

std::vector<NamedJob> parse_squeue_named(std::string_view stdout_text, std::string_view name) {
  std::vector<NamedJob> jobs;
  for (auto line : nonblank_lines(stdout_text)) {
    auto fields = split(line, '|');
    auto job = named_job(fields, name);
    if (!job) continue;
    job->reason = std::string(trim(fields[3]));
    jobs.push_back(std::move(*job));
  }
  return jobs;
}

std::vector<NamedJob> parse_sacct_named(std::string_view stdout_text, std::string_view name) {
  std::vector<NamedJob> jobs;
  for (auto line : nonblank_lines(stdout_text)) {
    auto fields = split(line, '|');
    auto job = named_job(fields, name);
    if (!job) continue;
    job->reason = std::string(trim(fields[2]));
    job->exit_code = parse_job_exit_code(fields[3]);
    // A requeued job appears more than once in the completion log: the last line wins.
    std::erase_if(jobs, [&](const NamedJob& j) { return j.job_id == job->job_id; });
    jobs.push_back(std::move(*job));
  }
  return jobs;
}

std::map<std::string, std::string> parse_scontrol_record(std::string_view line) {
  std::map<std::string, std::string> record;
  std::string* last = nullptr;
  for (auto token : split(trim(line), ' ')) {
    if (token.empty()) continue;
    auto eq = token.find('=');
    // A key is a word of letters, digits and a few punctuation marks ("Socks/Node", "ReqB:S:C:T").
    bool is_key = eq != std::string_view::npos && eq > 0;
    if (is_key) {
      for (char c : token.substr(0, eq)) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '/' || c == ':' || c == '_';
        if (!ok) {
          is_key = false;
          break;
        }
      }
    }
    if (is_key) {
      last = &record[std::string(token.substr(0, eq))];
      *last = std::string(token.substr(eq + 1));
    } else if (last) {
      *last += " ";
      *last += token;
    }
  }
  return record;
}

bool ping_says_up(std::string_view stdout_text) { return contains(stdout_text, "is UP"); }

std::vector<NodeInfo> parse_sinfo_nodes(std::string_view stdout_text) {
  std::vector<NodeInfo> nodes;
  for (auto line : nonblank_lines(stdout_text)) {
    auto fields = split(line, '|');
    if (fields.size() < 4) continue;
    NodeInfo n;
    n.name = std::string(trim(fields[0]));
    n.state = std::string(trim(fields[1]));
    auto cpus = trim(fields[2]);
    std::from_chars(cpus.data(), cpus.data() + cpus.size(), n.cpus);
    // The reason is free text and may itself contain '|'.
    auto reason_start = fields[0].size() + fields[1].size() + fields[2].size() + 3;
    n.reason = std::string(trim(line.substr(reason_start)));
    nodes.push_back(std::move(n));
  }
  return nodes;
}

std::optional<std::vector<std::string>> expand_hostlist(std::string_view text,
                                                        std::size_t max_hosts) {
  std::vector<std::string> hosts;
  text = trim(text);
  std::size_t pos = 0;
  while (pos < text.size()) {
    // One element: a prefix, optionally one [ranges] group, optionally a suffix; up to a comma
    // outside brackets.
    std::size_t end = pos;
    int depth = 0;
    while (end < text.size() && (depth > 0 || text[end] != ',')) {
      if (text[end] == '[') ++depth;
      if (text[end] == ']' && --depth < 0) return std::nullopt;
      ++end;
    }
    if (depth != 0) return std::nullopt;
    const std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) return std::nullopt;
    const auto open = item.find('[');
    if (open == std::string_view::npos) {
      hosts.emplace_back(item);
    } else {
      const auto close = item.find(']', open);
      const std::string_view prefix = item.substr(0, open);
      const std::string_view suffix = item.substr(close + 1);
      if (suffix.find('[') != std::string_view::npos) return std::nullopt;  // one group only
      for (auto range : split(item.substr(open + 1, close - open - 1), ',')) {
        const auto dash = range.find('-');
        const std::string_view lo_text = range.substr(0, dash);
        const std::string_view hi_text =
            dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
        long long lo = 0, hi = 0;
        auto number = [](std::string_view t, long long& v) {
          if (t.empty() || t.size() > 9) return false;
          auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
          return ec == std::errc() && p == t.data() + t.size();
        };
        if (!number(lo_text, lo) || !number(hi_text, hi) || hi < lo) return std::nullopt;
        if (static_cast<std::size_t>(hi - lo) >= max_hosts) return std::nullopt;
        for (long long v = lo; v <= hi; ++v) {
          std::string digits = std::to_string(v);
          if (digits.size() < lo_text.size()) digits.insert(0, lo_text.size() - digits.size(), '0');
          hosts.push_back(std::string(prefix) + digits + std::string(suffix));
          if (hosts.size() > max_hosts) return std::nullopt;
        }
      }
    }
    if (hosts.size() > max_hosts) return std::nullopt;
  }
  return hosts;
}

bool says_invalid_job_id(std::string_view stderr_text) {
  return contains(stderr_text, "Invalid job id");
}

bool says_accounting_disabled(std::string_view stderr_text) {
  return contains(stderr_text, "accounting storage is disabled");
}

bool is_transient_slurm_error(std::string_view stderr_text) {
  for (std::string_view marker :
       {"Unable to contact slurm controller", "Socket timed out", "Connection refused",
        "connect failure", "Resource temporarily unavailable", "try again",
        "Slurm temporarily unable", "Zero Bytes were transmitted",
        "Communication connection failure"})
    if (contains(stderr_text, marker)) return true;
  return false;
}

}  // namespace colltune::slurm
