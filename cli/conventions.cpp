#include "cli/conventions.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/text.h"

namespace colltune {

void set_exit_codes(CLI::App* cmd, std::vector<std::pair<int, std::string>> specific,
                    bool interruptible) {
  if (specific.empty() || specific.front().first != kExitOk)
    specific.insert(specific.begin(), {kExitOk, "success"});
  specific.emplace_back(kExitFailure, "error (message on stderr)");
  if (interruptible)
    specific.emplace_back(kExitInterrupted, "interrupted (Ctrl-C, SIGTERM); progress is kept");
  specific.emplace_back(kExitUsage, "bad command line");
  std::stable_sort(specific.begin(), specific.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text = "Exit codes:\n";
  for (const auto& [code, meaning] : specific) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "  %3d  ", code);
    text += buf + meaning + "\n";
  }
  // After what the command's footer already says (serve's precedence note, ...).
  const std::string before = cmd->get_footer();
  cmd->footer(before.empty() ? text : before + "\n\n" + text);
}

CLI::Option* add_db_option(CLI::App* cmd, std::string& db, const std::string& what) {
  return cmd->add_option("--db", db, what)->type_name("FILE")->capture_default_str();
}

CLI::Option* add_backend_config_option(CLI::App* cmd, std::string& value) {
  auto* main = cmd->add_option("--backend-config", value,
                               "Backend settings: a JSON file, or an inline JSON object "
                               "('{\"partition\": \"batch\"}')")
                   ->type_name("FILE|JSON");
  // Older spelling (sentinel): hidden, warns, same value.
  cmd->add_option("--backend-settings", value)
      ->group("")
      ->excludes(main)
      ->each([](const std::string&) {
        std::fprintf(stderr,
                     "colltune: warning: --backend-settings is deprecated; use --backend-config\n");
      });
  return main;
}

bool backend_config_given(const CLI::App* cmd) {
  return cmd->count("--backend-config") + cmd->count("--backend-settings") > 0;
}

nlohmann::json read_backend_config(const std::string& value) {
  if (value.empty()) return nlohmann::json::object();
  const std::string_view text = trim(value);
  std::string what;
  nlohmann::json j;
  if (!text.empty() && text.front() == '{') {
    what = "--backend-config (inline JSON)";
    j = nlohmann::json::parse(text, nullptr, false);
  } else {
    what = value;
    std::ifstream in(value);
    if (!in) throw std::runtime_error("--backend-config: cannot read " + value);
    j = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
  }
  if (j.is_discarded()) throw std::runtime_error(what + ": invalid JSON");
  if (!j.is_object()) throw std::runtime_error(what + ": backend settings must be a JSON object");
  return j;
}

void require_existing_db(const std::string& db) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(db, ec))
    throw std::runtime_error("no store at " + db +
                             " (give the database a campaign wrote with --db FILE)");
}

}  // namespace colltune
