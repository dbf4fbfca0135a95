#include "runner/ompi_info.h"

#include "core/ompi_version.h"
#include "runner/process.h"

namespace colltune {

std::string query_ompi_version(const std::string& ompi_info) {
  auto result = run_process({ompi_info, "--version"}, {.timeout_s = 30});
  auto v = parse_ompi_version(result.stdout_text);
  return v ? v->to_string() : std::string();
}

std::string query_coll_tuned_params(const std::string& ompi_info) {
  auto result = run_process({ompi_info, "--param", "coll", "tuned", "--level", "9", "--parsable"},
                            {.timeout_s = 60});
  return result.succeeded() ? result.stdout_text : std::string();
}

std::string query_ompi_sysconfdir(const std::string& ompi_info) {
  auto result = run_process({ompi_info, "--path", "sysconfdir", "--parsable"}, {.timeout_s = 30});
  if (!result.succeeded()) return {};
  const std::string key = "path:sysconfdir:";
  std::size_t at = result.stdout_text.find(key);
  if (at == std::string::npos) return {};
  std::size_t begin = at + key.size();
  std::size_t end = result.stdout_text.find_first_of("\r\n", begin);
  std::string dir = result.stdout_text.substr(begin, end == std::string::npos ? end : end - begin);
  return dir.empty() || dir.front() != '/' ? std::string() : dir;
}

}  // namespace colltune
