// `colltune campaign create|list|show|pause|resume|cancel|watch`: talks to a running daemon
// over its REST API. --server (env COLLTUNE_SERVER, default http://127.0.0.1:8080) and --token
// (env COLLTUNE_TOKEN) on every subcommand.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/conventions.h"
#include "cli/progress.h"

namespace colltune {
namespace {

struct ClientArgs {
  std::string server;
  std::string token;
  std::string ca_cert;
};

struct CampaignArgs {
  ClientArgs client;
  std::string spec_file = "-";
  std::string state;
  int limit = 50;
  int offset = 0;
  std::int64_t id = 0;
  bool report = false;
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

class ApiClient {
 public:
  explicit ApiClient(const ClientArgs& args) : client_(server_of(args)) {
    const std::string token = args.token.empty() ? env_or("COLLTUNE_TOKEN", "") : args.token;
    if (!token.empty()) headers_.emplace("Authorization", "Bearer " + token);
    if (!args.ca_cert.empty()) client_.set_ca_cert_path(args.ca_cert.c_str());
    client_.set_connection_timeout(10);
    client_.set_read_timeout(60);
  }

  nlohmann::json get(const std::string& path) { return check(client_.Get(path, headers_), "GET", path); }
  nlohmann::json post(const std::string& path, const std::string& body) {
    return check(client_.Post(path, headers_, body, "application/json"), "POST", path);
  }

  // Streams /api/v1/events; `on_event` returns false to stop.
  void events(const std::string& path,
              const std::function<bool(const std::string& type, const nlohmann::json& data)>& on_event) {
    std::string buffer;
    client_.set_read_timeout(3600);
    auto res = client_.Get(path, headers_, [&](const char* data, std::size_t n) {
      buffer.append(data, n);
      for (std::size_t end; (end = buffer.find("\n\n")) != std::string::npos;) {
        const std::string block = buffer.substr(0, end);
        buffer.erase(0, end + 2);
        std::string type;
        std::string payload;
        std::istringstream lines(block);
        for (std::string line; std::getline(lines, line);) {
          if (line.rfind("event: ", 0) == 0) type = line.substr(7);
          if (line.rfind("data: ", 0) == 0) payload += line.substr(6);
        }
        if (type.empty() || payload.empty()) continue;
        auto j = nlohmann::json::parse(payload, nullptr, false);
        if (!j.is_discarded() && !on_event(type, j)) return false;
      }
      return true;
    });
    if (!res && res.error() != httplib::Error::Canceled)
      throw std::runtime_error("event stream: " + httplib::to_string(res.error()));
  }

 private:
  static std::string server_of(const ClientArgs& args) {
    std::string server = args.server.empty() ? env_or("COLLTUNE_SERVER", "http://127.0.0.1:8080") : args.server;
    if (server.rfind("http://", 0) != 0 && server.rfind("https://", 0) != 0)
      throw std::invalid_argument("--server must start with http:// or https:// (got '" + server + "')");
    while (!server.empty() && server.back() == '/') server.pop_back();
    return server;
  }

  static nlohmann::json check(const httplib::Result& res, const char* method, const std::string& path) {
    if (!res)
      throw std::runtime_error(std::string(method) + " " + path + ": " + httplib::to_string(res.error()) +
                               " (is the daemon running? see --server)");
    auto body = nlohmann::json::parse(res->body, nullptr, false);
    if (res->status >= 400) {
      std::string message = res->body;
      if (!body.is_discarded() && body.contains("error"))
        message = body["error"].value("message", res->body);
      throw std::runtime_error("server answered " + std::to_string(res->status) + ": " + message);
    }
    if (body.is_discarded()) throw std::runtime_error(std::string(method) + " " + path + ": answer is not JSON");
    return body;
  }

  httplib::Client client_;
  httplib::Headers headers_;
};

std::string read_spec(const std::string& file) {
  if (file == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string format_time(double t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&tt));
  return buf;
}

void add_client_options(CLI::App* cmd, ClientArgs& client) {
  cmd->add_option("--server", client.server, "Daemon URL (env COLLTUNE_SERVER, default http://127.0.0.1:8080)");
  cmd->add_option("--token", client.token, "Bearer token (env COLLTUNE_TOKEN)");
  cmd->add_option("--ca-cert", client.ca_cert, "CA certificate to trust for https");
  set_exit_codes(cmd, {});
}

}  // namespace

void add_campaign_command(CLI::App& app) {
  auto* group = app.add_subcommand("campaign", "Create and follow campaigns on a running daemon");
  group->require_subcommand(1);
  set_exit_codes(group, {});  // each subcommand lists its own

  {
    auto args = std::make_shared<CampaignArgs>();
    auto* cmd = group->add_subcommand("create", "Create a campaign from a JSON spec (file or - for stdin)");
    add_client_options(cmd, args->client);
    cmd->add_option("spec", args->spec_file, "Campaign spec JSON file, - = stdin")->capture_default_str();
    cmd->callback([args] {
      ApiClient client(args->client);
      const std::string text = read_spec(args->spec_file);
      auto spec = nlohmann::json::parse(text, nullptr, false);
      if (spec.is_discarded()) throw std::runtime_error(args->spec_file + ": invalid JSON");
      auto campaign = client.post("/api/v1/campaigns", spec.dump());
      std::printf("%s\n", campaign.dump(2).c_str());
    });
  }
  {
    auto args = std::make_shared<CampaignArgs>();
    auto* cmd = group->add_subcommand("list", "List campaigns, newest first");
    add_client_options(cmd, args->client);
    cmd->add_option("--state", args->state, "Only this state")
        ->check(CLI::IsMember({"queued", "running", "paused", "done", "failed", "cancelled"}));
    cmd->add_option("--limit", args->limit, "Page size")->check(CLI::Range(1, 1000))->capture_default_str();
    cmd->add_option("--offset", args->offset, "Campaigns to skip")->check(CLI::Range(0, 1000000000));
    cmd->callback([args] {
      ApiClient client(args->client);
      httplib::Params params = {{"limit", std::to_string(args->limit)}, {"offset", std::to_string(args->offset)}};
      if (!args->state.empty()) params.emplace("state", args->state);
      auto page = client.get(httplib::append_query_params("/api/v1/campaigns", params));
      std::printf("%-6s %-10s %-8s %-19s %s\n", "ID", "STATE", "BACKEND", "UPDATED", "NAME");
      for (const auto& c : page.at("items"))
        std::printf("%-6lld %-10s %-8s %-19s %s\n", static_cast<long long>(c.at("id").get<std::int64_t>()),
                    c.at("state").get<std::string>().c_str(), c.value("backend", "").c_str(),
                    format_time(c.value("updated_at", 0.0)).c_str(), c.value("name", "").c_str());
      std::printf("(%zu of %lld)\n", page.at("items").size(),
                  static_cast<long long>(page.at("total").get<std::int64_t>()));
    });
  }
  {
    auto args = std::make_shared<CampaignArgs>();
    auto* cmd = group->add_subcommand("show", "Show a campaign (JSON); --report for its report");
    add_client_options(cmd, args->client);
    cmd->add_option("id", args->id, "Campaign id")->required()->check(CLI::PositiveNumber);
    cmd->add_flag("--report", args->report, "Print the campaign's report instead");
    cmd->callback([args] {
      ApiClient client(args->client);
      const std::string path = "/api/v1/campaigns/" + std::to_string(args->id) + (args->report ? "/report" : "");
      std::printf("%s\n", client.get(path).dump(2).c_str());
    });
  }
  for (const char* action : {"pause", "resume", "cancel"}) {
    auto args = std::make_shared<CampaignArgs>();
    const std::string verb = action;
    const std::string help = verb == "pause"    ? "Pause a queued or running campaign"
                             : verb == "resume" ? "Resume a paused or failed campaign"
                                                : "Cancel an unfinished campaign";
    auto* cmd = group->add_subcommand(verb, help);
    add_client_options(cmd, args->client);
    cmd->add_option("id", args->id, "Campaign id")->required()->check(CLI::PositiveNumber);
    cmd->callback([args, verb] {
      ApiClient client(args->client);
      auto c = client.post("/api/v1/campaigns/" + std::to_string(args->id) + "/" + verb, "{}");
      std::printf("campaign %lld: %s%s\n", static_cast<long long>(c.at("id").get<std::int64_t>()),
                  c.at("state").get<std::string>().c_str(),
                  c.at("pending_action").is_string() ? (" (" + c.at("pending_action").get<std::string>() + " pending)").c_str() : "");
    });
  }
  {
    auto args = std::make_shared<CampaignArgs>();
    auto* cmd = group->add_subcommand("watch", "Follow a campaign's events until it ends");
    add_client_options(cmd, args->client);
    cmd->add_option("id", args->id, "Campaign id")->required()->check(CLI::PositiveNumber);
    cmd->callback([args] {
      ApiClient client(args->client);
      auto c = client.get("/api/v1/campaigns/" + std::to_string(args->id));
      const auto ended = [](const std::string& s) { return s == "done" || s == "failed" || s == "cancelled"; };
      if (ended(c.at("state").get<std::string>())) {
        std::printf("campaign %lld is %s\n", static_cast<long long>(args->id), c.at("state").get<std::string>().c_str());
        return;
      }
      // The same progress lines as `colltune tune` (timestamps when stdout is not a terminal).
      ProgressDisplay progress(stdout);
      // From the campaign's first durable event (last_event_id=0): what happened so far, then
      // live; and a campaign that ends between the state check above and the stream's start
      // still ends the watch (its final campaign_state is replayed).
      client.events("/api/v1/events?campaign_id=" + std::to_string(args->id) + "&last_event_id=0",
                    [&](const std::string& type, const nlohmann::json& e) {
                      auto payload = e.value("payload", nlohmann::json::object());
                      if (!payload.is_object()) payload = nlohmann::json::object();
                      progress.on_event(type, payload);
                      return !(type == "campaign_state" && ended(payload.value("state", "")));
                    });
      progress.finish_line();
    });
  }
}

}  // namespace colltune
