#include "server/config.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <stdexcept>

#include "runner/backend_factory.h"

namespace colltune {
namespace {

[[noreturn]] void bad(const std::string& key, const std::string& why) {
  throw std::invalid_argument("config " + key + ": " + why);
}

std::string get_string(const nlohmann::json& j, const std::string& key, std::size_t max_len) {
  if (!j.is_string()) bad(key, "must be a string");
  auto s = j.get<std::string>();
  if (s.size() > max_len) bad(key, "longer than " + std::to_string(max_len) + " characters");
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20) bad(key, "contains control characters");
  return s;
}

std::int64_t get_int(const nlohmann::json& j, const std::string& key, std::int64_t lo,
                     std::int64_t hi) {
  if (!j.is_number_integer()) bad(key, "must be an integer");
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    bad(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  const auto v = j.get<std::int64_t>();
  if (v < lo || v > hi)
    bad(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return v;
}

bool get_bool(const nlohmann::json& j, const std::string& key) {
  if (!j.is_boolean()) bad(key, "must be true or false");
  return j.get<bool>();
}

enum class KeyKind { string, integer, boolean, structured };

const std::map<std::string, KeyKind>& key_kinds() {
  static const std::map<std::string, KeyKind> kinds = {
      {"listen", KeyKind::string},
      {"database", KeyKind::string},
      {"rules_dir", KeyKind::string},
      {"osu_dir", KeyKind::string},
      {"backends", KeyKind::structured},
      {"tokens", KeyKind::structured},
      {"anonymous_read", KeyKind::boolean},
      {"max_concurrent_jobs", KeyKind::integer},
      {"tls_cert", KeyKind::string},
      {"tls_key", KeyKind::string},
      {"max_body_bytes", KeyKind::integer},
      {"http_threads", KeyKind::integer},
      {"max_event_streams", KeyKind::integer},
      {"max_event_streams_per_client", KeyKind::integer},
      {"http_header_timeout", KeyKind::integer},
      {"http_idle_timeout", KeyKind::integer},
      {"max_connections", KeyKind::integer},
      {"max_connections_per_client", KeyKind::integer},
      {"web_root", KeyKind::string}};
  return kinds;
}

std::vector<TokenEntry> parse_tokens(const nlohmann::json& j) {
  if (!j.is_array()) bad("tokens", "must be an array of {\"token\"|\"sha256\", \"role\"}");
  if (j.size() > 1000) bad("tokens", "at most 1000 tokens");
  std::vector<TokenEntry> out;
  std::set<std::string> digests;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string where = "tokens[" + std::to_string(i) + "]";
    const auto& t = j[i];
    if (!t.is_object()) bad(where, "must be an object");
    for (const auto& [key, value] : t.items())
      if (key != "token" && key != "sha256" && key != "role" && key != "name")
        bad(where + "." + key, "unknown field");
    if (t.contains("token") == t.contains("sha256"))
      bad(where, "give exactly one of \"token\" and \"sha256\"");
    TokenEntry entry;
    if (t.contains("token")) {
      const auto token = get_string(t.at("token"), where + ".token", 512);
      if (token.size() < 16) bad(where + ".token", "must be at least 16 characters");
      if (!parse_bearer("Bearer " + token))
        bad(where + ".token", "only letters, digits and -._~+/= are allowed");
      entry.digest = sha256(token);
    } else {
      auto digest = parse_sha256_hex(get_string(t.at("sha256"), where + ".sha256", 64));
      if (!digest) bad(where + ".sha256", "must be 64 hex digits (SHA-256 of the token)");
      entry.digest = *digest;
    }
    if (!t.contains("role")) bad(where + ".role", "required (admin or viewer)");
    auto role = parse_role(get_string(t.at("role"), where + ".role", 16));
    if (!role) bad(where + ".role", "must be admin or viewer");
    entry.role = *role;
    entry.name = t.contains("name") ? get_string(t.at("name"), where + ".name", 64)
                                    : "token" + std::to_string(i);
    if (!digests.insert(to_hex(entry.digest)).second) bad(where, "duplicate token");
    out.push_back(entry);
  }
  return out;
}

std::vector<BackendConfig> parse_backends(const nlohmann::json& j, int default_cap,
                                          const std::string& osu_dir) {
  if (!j.is_object() || j.empty())
    bad("backends", "must be a non-empty object {\"<backend>\": {settings}}");
  const auto known = backend_names();
  std::vector<BackendConfig> out;
  for (const auto& [name, value] : j.items()) {
    const std::string where = "backends." + name;
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      bad(where, "unknown backend (this build knows: " + list + ")");
    }
    if (!value.is_object()) bad(where, "must be an object of settings");
    BackendConfig b;
    b.name = name;
    b.settings = value;
    b.max_concurrent_jobs = default_cap;
    if (b.settings.contains("max_concurrent_jobs")) {
      b.max_concurrent_jobs = static_cast<int>(
          get_int(b.settings.at("max_concurrent_jobs"), where + ".max_concurrent_jobs", 1, 1024));
      b.settings.erase("max_concurrent_jobs");
    }
    if (name == "local" && !osu_dir.empty() && !b.settings.contains("osu_dir"))
      b.settings["osu_dir"] = osu_dir;
    try {
      make_backend(name, b.settings);  // checks the settings; builds nothing that lasts
    } catch (const std::exception& e) {
      bad(where, e.what());
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

const BackendConfig* DaemonConfig::backend(const std::string& name) const {
  for (const auto& b : backends)
    if (b.name == name) return &b;
  return nullptr;
}

const std::vector<std::string>& daemon_config_keys() {
  static const std::vector<std::string> keys = {"listen",
                                                "database",
                                                "rules_dir",
                                                "osu_dir",
                                                "backends",
                                                "tokens",
                                                "anonymous_read",
                                                "max_concurrent_jobs",
                                                "tls_cert",
                                                "tls_key",
                                                "max_body_bytes",
                                                "http_threads",
                                                "max_event_streams",
                                                "web_root",
                                                "max_event_streams_per_client",
                                                "http_header_timeout",
                                                "http_idle_timeout",
                                                "max_connections",
                                                "max_connections_per_client"};
  return keys;
}

std::pair<std::string, int> parse_listen_address(const std::string& text) {
  std::string host;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      bad("listen", "'" + text + "' is not [ipv6]:port");
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) bad("listen", "'" + text + "' is not host:port");
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (host.empty()) bad("listen", "missing host (use 0.0.0.0 to listen on every address)");
  for (char c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != ':')
      bad("listen", "'" + host + "' is not a host name or address");
  if (port_text.empty() || port_text.size() > 5 ||
      !std::all_of(port_text.begin(), port_text.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    bad("listen", "'" + port_text + "' is not a port number");
  const int port = std::stoi(port_text);
  if (port > 65535) bad("listen", "port above 65535");
  return {host, port};
}

DaemonConfig parse_daemon_config(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("config must be a JSON object");
  for (const auto& [key, value] : j.items())
    if (!key_kinds().count(key)) bad(key, "unknown key");
  DaemonConfig c;
  if (j.contains("listen"))
    std::tie(c.listen_host, c.listen_port) =
        parse_listen_address(get_string(j.at("listen"), "listen", 300));
  if (j.contains("database")) c.database = get_string(j.at("database"), "database", 4096);
  if (c.database.empty()) bad("database", "must not be empty");
  if (j.contains("rules_dir")) c.rules_dir = get_string(j.at("rules_dir"), "rules_dir", 4096);
  if (j.contains("osu_dir")) c.osu_dir = get_string(j.at("osu_dir"), "osu_dir", 4096);
  if (j.contains("anonymous_read"))
    c.anonymous_read = get_bool(j.at("anonymous_read"), "anonymous_read");
  if (j.contains("max_concurrent_jobs"))
    c.max_concurrent_jobs =
        static_cast<int>(get_int(j.at("max_concurrent_jobs"), "max_concurrent_jobs", 1, 1024));
  if (j.contains("tls_cert")) c.tls_cert = get_string(j.at("tls_cert"), "tls_cert", 4096);
  if (j.contains("tls_key")) c.tls_key = get_string(j.at("tls_key"), "tls_key", 4096);
  if (j.contains("web_root")) c.web_root = get_string(j.at("web_root"), "web_root", 4096);
  if (c.tls_cert.empty() != c.tls_key.empty()) bad("tls_cert", "tls_cert and tls_key go together");
  if (j.contains("max_body_bytes"))
    c.max_body_bytes =
        static_cast<std::size_t>(get_int(j.at("max_body_bytes"), "max_body_bytes", 1024, 64 << 20));
  if (j.contains("http_threads"))
    c.http_threads = static_cast<int>(get_int(j.at("http_threads"), "http_threads", 4, 1024));
  if (j.contains("max_event_streams"))
    c.max_event_streams =
        static_cast<int>(get_int(j.at("max_event_streams"), "max_event_streams", 1, 1024));
  if (j.contains("max_event_streams_per_client"))
    c.max_event_streams_per_client = static_cast<int>(
        get_int(j.at("max_event_streams_per_client"), "max_event_streams_per_client", 1, 1024));
  if (j.contains("http_header_timeout"))
    c.http_header_timeout =
        static_cast<int>(get_int(j.at("http_header_timeout"), "http_header_timeout", 1, 300));
  if (j.contains("http_idle_timeout"))
    c.http_idle_timeout =
        static_cast<int>(get_int(j.at("http_idle_timeout"), "http_idle_timeout", 1, 3600));
  if (j.contains("max_connections"))
    c.max_connections =
        static_cast<int>(get_int(j.at("max_connections"), "max_connections", 16, 1 << 20));
  if (j.contains("max_connections_per_client"))
    c.max_connections_per_client = static_cast<int>(
        get_int(j.at("max_connections_per_client"), "max_connections_per_client", 1, 1 << 20));
  if (c.max_event_streams >= c.http_threads)
    bad("max_event_streams", "must be below http_threads (each stream holds a thread)");
  if (j.contains("tokens")) c.tokens = parse_tokens(j.at("tokens"));
  c.backends =
      parse_backends(j.contains("backends") ? j.at("backends")
                                            : nlohmann::json{{"local", nlohmann::json::object()}},
                     c.max_concurrent_jobs, c.osu_dir);
  return c;
}

void apply_config_override(nlohmann::json& config, const std::string& key, const std::string& text,
                           const std::string& source) {
  auto it = key_kinds().find(key);
  if (it == key_kinds().end()) throw std::invalid_argument(source + ": unknown config key " + key);
  switch (it->second) {
    case KeyKind::string:
      config[key] = text;
      break;
    case KeyKind::integer: {
      std::size_t pos = 0;
      long long v = 0;
      try {
        v = std::stoll(text, &pos);
      } catch (const std::exception&) {
        pos = 0;
      }
      if (pos == 0 || pos != text.size())
        throw std::invalid_argument(source + ": '" + text + "' is not an integer");
      config[key] = v;
      break;
    }
    case KeyKind::boolean:
      if (text == "1" || text == "true" || text == "yes" || text == "on")
        config[key] = true;
      else if (text == "0" || text == "false" || text == "no" || text == "off")
        config[key] = false;
      else
        throw std::invalid_argument(source + ": '" + text + "' is not true or false");
      break;
    case KeyKind::structured:
      try {
        config[key] = nlohmann::json::parse(text);
      } catch (const nlohmann::json::exception& e) {  // also out_of_range: "1e999" (fuzzing)
        throw std::invalid_argument(source + ": invalid JSON: " + e.what());
      }
      break;
  }
}

nlohmann::json layered_daemon_config(const std::string& file,
                                     const std::function<const char*(const char*)>& getenv_fn,
                                     const std::map<std::string, std::string>& flags) {
  nlohmann::json config = nlohmann::json::object();
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) throw std::invalid_argument("cannot read config file " + file);
    try {
      config = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {  // also out_of_range: 1e999
      throw std::invalid_argument(file + ": invalid JSON: " + e.what());
    }
    if (!config.is_object()) throw std::invalid_argument(file + ": must hold a JSON object");
  }
  for (const auto& key : daemon_config_keys()) {
    std::string var = "COLLTUNE_" + key;
    std::transform(var.begin(), var.end(), var.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (const char* value = getenv_fn(var.c_str()); value != nullptr)
      apply_config_override(config, key, value, "environment " + var);
  }
  for (const auto& [key, value] : flags) apply_config_override(config, key, value, "flag --" + key);
  return config;
}

}  // namespace colltune
