// `colltune token new [--role admin|viewer] [--name NAME]`: a strong random token for the
// daemon (server/auth.h generate_token) and the lines that make the daemon accept it. The
// config gets only the token's SHA-256 digest, so colltune.json may be world-readable; the
// token itself goes to the clients (COLLTUNE_TOKEN, --token).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "cli/conventions.h"
#include "server/auth.h"

namespace colltune {
namespace {

struct TokenArgs {
  std::string role = "admin";
  std::string name;
};

void run_token_new(const TokenArgs& args) {
  if (!parse_role(args.role)) throw std::invalid_argument("--role must be admin or viewer");
  const std::string token = generate_token();
  nlohmann::json entry = {{"sha256", to_hex(sha256(token))}, {"role", args.role}};
  if (!args.name.empty()) entry["name"] = args.name;
  std::printf(
      "token: %s\n"
      "\n"
      "Give the token to its clients (COLLTUNE_TOKEN=... or --token); it is shown only now.\n"
      "Add this entry to the \"tokens\" array of the daemon's config (only the digest is kept):\n"
      "\n"
      "  \"tokens\": [%s]\n"
      "\n"
      "or pass it in the environment (flag > environment > config file):\n"
      "\n"
      "  COLLTUNE_TOKENS='[%s]'\n",
      token.c_str(), entry.dump().c_str(), entry.dump().c_str());
}

}  // namespace

void add_token_command(CLI::App& app) {
  auto args = std::make_shared<TokenArgs>();
  auto* token = app.add_subcommand("token", "Access tokens of the daemon's REST API");
  token->require_subcommand(1);
  auto* create = token->add_subcommand(
      "new", "Print a new random token (32 bytes from the kernel) and the config lines for it");
  create->add_option("--role", args->role, "What the token may do")
      ->check(CLI::IsMember({"admin", "viewer"}))
      ->capture_default_str();
  create->add_option("--name", args->name, "Label shown in the daemon's logs (never the token)");
  set_exit_codes(create, {});
  create->callback([args] { run_token_new(*args); });
}

}  // namespace colltune
