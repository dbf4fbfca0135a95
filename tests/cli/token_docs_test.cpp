// `colltune token new` (a strong token and config lines the daemon accepts), and the man pages
// and bash completion the build generated from the command tree (cli/docgen_main.cpp): one page
// per command of the tree as it is now, and a completion naming every command and option.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "cli/app.h"
#include "core/file_text.h"
#include "server/auth.h"
#include "server/config.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

std::string run_cli(std::vector<std::string> args) {
  CLI::App app;
  configure_app(app);
  std::vector<const char*> argv{"colltune"};
  for (const auto& a : args) argv.push_back(a.c_str());
  ::testing::internal::CaptureStdout();
  app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  return ::testing::internal::GetCapturedStdout();
}

TEST(TokenNew, TokensAreLongRandomAndBearerSafe) {
  std::set<std::string> seen;
  for (int i = 0; i < 500; ++i) {
    const std::string t = generate_token();
    EXPECT_EQ(t.size(), 43u);  // 256 bits in base64url without padding
    EXPECT_TRUE(std::regex_match(t, std::regex("[A-Za-z0-9_-]+"))) << t;
    EXPECT_NE(t.front(), '-') << "reads as an option after --token";
    EXPECT_TRUE(parse_bearer("Bearer " + t).has_value()) << t;
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 500u);
}

TEST(TokenNew, PrintedConfigEntryMakesTheDaemonAcceptTheToken) {
  const std::string out = run_cli({"token", "new", "--role", "viewer", "--name", "ci"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("token: ([A-Za-z0-9_-]{43})\n"))) << out;
  const std::string token = m[1];
  ASSERT_TRUE(std::regex_search(out, m, std::regex("\n  \"tokens\": (\\[.*\\])\n"))) << out;
  EXPECT_EQ(out.find(token, out.find("tokens")), std::string::npos)
      << "the config lines hold the token";
  const DaemonConfig config =
      parse_daemon_config(nlohmann::json{{"tokens", nlohmann::json::parse(m[1].str())}});
  const auto entry = TokenAuthenticator(config.tokens).authenticate(token);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->role, Role::viewer);
  EXPECT_FALSE(TokenAuthenticator(config.tokens).authenticate(token + "x").has_value());
}

TEST(TokenNew, UnknownRoleIsRefused) {
  CLI::App app;
  configure_app(app);
  const char* argv[] = {"colltune", "token", "new", "--role", "root"};
  EXPECT_THROW(app.parse(5, const_cast<char**>(argv)), CLI::ValidationError);
}

void for_each_command(CLI::App* app, const std::string& name,
                      const std::function<void(CLI::App*, const std::string&)>& visit) {
  visit(app, name);
  for (CLI::App* sub : app->get_subcommands([](CLI::App* s) { return !s->get_name().empty(); }))
    for_each_command(sub, name + "-" + sub->get_name(), visit);
}

TEST(GeneratedDocs, EveryCommandHasAManPageWithItsOptions) {
  CLI::App app;
  configure_app(app);
  std::set<std::string> expected;
  for_each_command(&app, "colltune", [&](CLI::App* cmd, const std::string& name) {
    expected.insert(name + ".1");
    const std::string page =
        read_file_text(fs::path(COLLTUNE_MAN_DIR) / (name + ".1")).value_or("");
    ASSERT_FALSE(page.empty()) << name << ".1 missing";
    std::string title;  // roff writes each '-' of the name as \-
    for (char c : name) title += c == '-' ? std::string("\\-") : std::string(1, c);
    EXPECT_NE(page.find(".TH \"" + title + "\" 1"), std::string::npos) << name;
    for (const CLI::Option* o : cmd->get_options()) {
      if (o->get_group().empty()) continue;  // hidden (deprecated aliases): not documented
      for (const auto& l : o->get_lnames()) {
        std::string roff = "\\-\\-";  // roff writes each '-' as \-
        for (char c : l) roff += c == '-' ? std::string("\\-") : std::string(1, c);
        EXPECT_NE(page.find(roff), std::string::npos) << name << ".1 lacks --" << l;
      }
    }
  });
  std::set<std::string> found;
  for (const auto& e : fs::directory_iterator(COLLTUNE_MAN_DIR))
    found.insert(e.path().filename().string());
  EXPECT_EQ(found, expected) << "man pages of commands that no longer exist, or missing ones";
}

TEST(GeneratedDocs, CompletionNamesEveryCommandAndOption) {
  const std::string script = read_file_text(COLLTUNE_COMPLETION_FILE).value_or("");
  ASSERT_FALSE(script.empty());
  EXPECT_NE(script.find("complete -F _colltune colltune"), std::string::npos);
  CLI::App app;
  configure_app(app);
  for_each_command(&app, "colltune", [&](CLI::App* cmd, const std::string& name) {
    std::string path = name;
    for (auto& c : path)
      if (c == '-') c = ' ';
    // "colltune rules validate") words="... --ompi ..."
    const auto at = script.find("\"" + path + "\") words=\"");
    ASSERT_NE(at, std::string::npos) << path;
    const std::string line = script.substr(at, script.find('\n', at) - at);
    for (const CLI::Option* o : cmd->get_options())
      for (const auto& l : o->get_lnames())
        EXPECT_NE(line.find(" --" + l), std::string::npos) << path << " lacks --" << l;
  });
}

}  // namespace
}  // namespace colltune
