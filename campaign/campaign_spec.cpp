#include "campaign/campaign_spec.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

namespace colltune {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw std::invalid_argument(field + ": " + why);
}

template <typename T>
T get_number(const nlohmann::json& j, const std::string& field, T lo, T hi) {
  if (!j.is_number_integer() && !(std::is_floating_point_v<T> && j.is_number()))
    bad(field, std::is_floating_point_v<T> ? "must be a number" : "must be an integer");
  if constexpr (std::is_floating_point_v<T>) {
    T v = j.get<T>();
    if (!(v >= lo && v <= hi)) bad(field, "out of range");
    return v;
  } else {
    if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      bad(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    auto v = j.get<std::int64_t>();
    if (v < static_cast<std::int64_t>(lo) || v > static_cast<std::int64_t>(hi))
      bad(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    return static_cast<T>(v);
  }
}

std::string get_string(const nlohmann::json& j, const std::string& field, std::size_t max_len) {
  if (!j.is_string()) bad(field, "must be a string");
  auto s = j.get<std::string>();
  // Characters are UTF-8 code points (the JSON parser checked the encoding), not bytes: a name
  // of 200 accented letters is 400 bytes and allowed.
  const auto characters = std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
  if (static_cast<std::size_t>(characters) > max_len)
    bad(field, "longer than " + std::to_string(max_len) + " characters");
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20) bad(field, "contains control characters");
  return s;
}

void reject_unknown(const nlohmann::json& j, const std::set<std::string>& known,
                    const std::string& where) {
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) bad(where + key, "unknown field");
}

std::int64_t parse_size(const std::string& text, const std::string& field) {
  if (text.empty()) bad(field, "empty size");
  // std::stoll would skip blanks and take a sign: " 4" and "+4" are not sizes.
  if (text[0] < '0' || text[0] > '9') bad(field, "'" + text + "' is not a size");
  std::size_t pos = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &pos, 10);
  } catch (const std::exception&) {
    bad(field, "'" + text + "' is not a size");
  }
  std::string suffix = text.substr(pos);
  std::int64_t mult = 1;
  if (suffix == "" || suffix == "B")
    mult = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KiB")
    mult = 1 << 10;
  else if (suffix == "M" || suffix == "MiB")
    mult = 1 << 20;
  else if (suffix == "G" || suffix == "GiB")
    mult = 1 << 30;
  else
    bad(field, "'" + text + "' has an unknown unit (use K, M or G)");
  if (value < 0) bad(field, "negative size");
  // value * mult must not overflow (found by fuzzing: "666666666666666666K" wrapped around).
  if (value > std::numeric_limits<std::int64_t>::max() / mult)
    bad(field, "'" + text + "' is too large");
  return value * mult;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> parse_size_range(const std::string& text) {
  auto colon = text.find(':');
  std::int64_t lo, hi;
  if (colon == std::string::npos) {
    lo = hi = parse_size(text, "sizes");
  } else {
    lo = parse_size(text.substr(0, colon), "sizes");
    hi = parse_size(text.substr(colon + 1), "sizes");
  }
  if (lo < 1) bad("sizes", "minimum must be at least 1 byte");
  if (hi < lo) bad("sizes", "maximum below minimum");
  if (hi > (std::int64_t{1} << 30)) bad("sizes", "maximum above 1 GiB");
  return {lo, hi};
}

std::string format_size_range(std::int64_t min_size, std::int64_t max_size) {
  return std::to_string(min_size) + ":" + std::to_string(max_size);
}

std::vector<std::int64_t> osu_message_sizes(Collective collective, std::int64_t min_size,
                                            std::int64_t max_size) {
  if (!has_message_size(collective)) return {0};
  std::int64_t s = min_size;
  // OSU reduces floats: the first size is rounded down to whole floats, at least one.
  if (is_reduction(collective)) s = std::max<std::int64_t>(4, s / 4 * 4);
  std::vector<std::int64_t> out;
  for (; s <= max_size; s *= 2) out.push_back(s);
  return out;
}

const std::set<std::string>& campaign_spec_fields(CampaignSpecPart part) {
  static const std::set<std::string> spec = {"name",
                                             "backend",
                                             "contexts",
                                             "sizes",
                                             "strategy",
                                             "budget",
                                             "repeats",
                                             "seed",
                                             "stop",
                                             "iterations",
                                             "warmup",
                                             "batch_size",
                                             "final_candidates",
                                             "final_repeats",
                                             "final_method",
                                             "min_gain",
                                             "final_max_runs",
                                             "run_timeout_s",
                                             "rules_format",
                                             "verify",
                                             "warm_start_from",
                                             "cluster"};
  static const std::set<std::string> context = {"collective", "comm_size", "nodes", "ppn"};
  static const std::set<std::string> stop = {"max_evaluations", "max_benchmark_seconds",
                                             "thesis_rule"};
  switch (part) {
    case CampaignSpecPart::context:
      return context;
    case CampaignSpecPart::stop:
      return stop;
    case CampaignSpecPart::spec:
      break;
  }
  return spec;
}

CampaignSpec parse_campaign_spec(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("campaign spec must be a JSON object");
  reject_unknown(j, campaign_spec_fields(CampaignSpecPart::spec), "");
  CampaignSpec spec;
  for (const char* required : {"backend", "contexts", "sizes"})
    if (!j.contains(required)) bad(required, "required");
  spec.backend = get_string(j.at("backend"), "backend", 32);
  if (spec.backend.empty()) bad("backend", "must not be empty");
  for (char c : spec.backend)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      bad("backend", "only letters, digits, '-' and '_'");
  if (j.contains("name")) spec.name = get_string(j.at("name"), "name", 200);

  const auto& contexts = j.at("contexts");
  if (!contexts.is_array() || contexts.empty()) bad("contexts", "must be a non-empty array");
  if (contexts.size() > 1000) bad("contexts", "at most 1000 contexts");
  for (std::size_t i = 0; i < contexts.size(); ++i) {
    const auto& c = contexts[i];
    const std::string where = "contexts[" + std::to_string(i) + "].";
    if (!c.is_object()) bad("contexts[" + std::to_string(i) + "]", "must be an object");
    reject_unknown(c, campaign_spec_fields(CampaignSpecPart::context), where);
    if (!c.contains("collective")) bad(where + "collective", "required");
    ContextSpec ctx;
    auto coll_name = get_string(c.at("collective"), where + "collective", 32);
    auto coll = parse_collective(coll_name);
    if (!coll) bad(where + "collective", "unknown collective '" + coll_name + "'");
    ctx.collective = *coll;
    if (c.contains("nodes")) ctx.nodes = get_number<int>(c.at("nodes"), where + "nodes", 1, 100000);
    if (c.contains("ppn")) ctx.ppn = get_number<int>(c.at("ppn"), where + "ppn", 0, 4096);
    if (c.contains("comm_size"))
      ctx.comm_size = get_number<int>(c.at("comm_size"), where + "comm_size", 2, 10000000);
    else if (ctx.ppn > 0)
      ctx.comm_size = ctx.nodes * ctx.ppn;
    else
      bad(where + "comm_size", "required (or give nodes and ppn)");
    if (ctx.ppn > 0 && ctx.ppn * ctx.nodes != ctx.comm_size)
      bad(where + "ppn", "nodes x ppn must equal comm_size");
    if (ctx.comm_size < 2) bad(where + "comm_size", "must be at least 2");
    for (const auto& existing : spec.contexts)
      if (existing == ctx) bad(where.substr(0, where.size() - 1), "duplicate context");
    spec.contexts.push_back(ctx);
  }

  auto [lo, hi] = parse_size_range(get_string(j.at("sizes"), "sizes", 64));
  spec.min_size = lo;
  spec.max_size = hi;
  if (j.contains("strategy")) spec.strategy = get_string(j.at("strategy"), "strategy", 32);
  if (j.contains("budget")) spec.budget = get_number<int>(j.at("budget"), "budget", 0, 100000);
  if (j.contains("repeats")) spec.repeats = get_number<int>(j.at("repeats"), "repeats", 1, 100);
  if (j.contains("seed"))
    spec.seed =
        static_cast<std::uint64_t>(get_number<std::int64_t>(j.at("seed"), "seed", 0, INT64_MAX));
  if (j.contains("iterations"))
    spec.iterations = get_number<int>(j.at("iterations"), "iterations", 1, 1000000);
  if (j.contains("warmup")) spec.warmup = get_number<int>(j.at("warmup"), "warmup", 0, 1000000);
  if (j.contains("batch_size"))
    spec.batch_size = get_number<int>(j.at("batch_size"), "batch_size", 1, 1000);
  if (j.contains("final_candidates"))
    spec.final_candidates = get_number<int>(j.at("final_candidates"), "final_candidates", 1, 20);
  if (j.contains("final_repeats"))
    spec.final_repeats = get_number<int>(j.at("final_repeats"), "final_repeats", 1, 100);
  if (j.contains("final_method")) {
    spec.final_method = get_string(j.at("final_method"), "final_method", 16);
    if (spec.final_method != "paired" && spec.final_method != "median")
      bad("final_method", "one of paired, median");
  }
  if (j.contains("min_gain"))
    spec.min_gain = get_number<double>(j.at("min_gain"), "min_gain", 0, 0.5);
  if (j.contains("final_max_runs"))
    spec.final_max_runs = get_number<int>(j.at("final_max_runs"), "final_max_runs", 0, 100000);
  if (j.contains("run_timeout_s"))
    spec.run_timeout_s = get_number<double>(j.at("run_timeout_s"), "run_timeout_s", 1, 86400);
  if (j.contains("rules_format")) {
    spec.rules_format = get_string(j.at("rules_format"), "rules_format", 16);
    if (spec.rules_format != "auto" && spec.rules_format != "classic" &&
        spec.rules_format != "v2" && spec.rules_format != "json")
      bad("rules_format", "one of auto, classic, v2, json");
  }
  if (j.contains("verify")) {
    if (!j.at("verify").is_boolean()) bad("verify", "must be true or false");
    spec.verify = j.at("verify").get<bool>();
  }
  if (j.contains("warm_start_from") && !j.at("warm_start_from").is_null())
    spec.warm_start_from = get_number<std::int64_t>(j.at("warm_start_from"), "warm_start_from", 0,
                                                    std::int64_t{1} << 53);
  if (j.contains("stop")) {
    const auto& s = j.at("stop");
    if (!s.is_object()) bad("stop", "must be an object");
    reject_unknown(s, campaign_spec_fields(CampaignSpecPart::stop), "stop.");
    if (s.contains("max_evaluations"))
      spec.stop.max_evaluations =
          get_number<int>(s.at("max_evaluations"), "stop.max_evaluations", 0, 100000);
    if (s.contains("max_benchmark_seconds"))
      spec.stop.max_benchmark_seconds =
          get_number<double>(s.at("max_benchmark_seconds"), "stop.max_benchmark_seconds", 0, 1e9);
    if (s.contains("thesis_rule")) {
      if (!s.at("thesis_rule").is_boolean()) bad("stop.thesis_rule", "must be true or false");
      spec.stop.thesis_rule = s.at("thesis_rule").get<bool>();
    }
  }
  if (j.contains("cluster") && !j.at("cluster").is_null()) {
    const auto& c = j.at("cluster");
    if (!c.is_object()) bad("cluster", "must be an object");
    reject_unknown(c,
                   {"strategy", "min_confidence", "budget", "budget_node_seconds",
                    "total_node_seconds", "predict_up_to", "settings"},
                   "cluster.");
    spec.cluster.enabled = true;
    if (c.contains("strategy"))
      spec.cluster.strategy = get_string(c.at("strategy"), "cluster.strategy", 32);
    if (c.contains("min_confidence"))
      spec.cluster.min_confidence =
          get_number<double>(c.at("min_confidence"), "cluster.min_confidence", 0.5, 1);
    if (c.contains("budget"))
      spec.cluster.budget = get_number<int>(c.at("budget"), "cluster.budget", 0, 1000000);
    if (c.contains("budget_node_seconds"))
      spec.cluster.budget_node_seconds =
          get_number<double>(c.at("budget_node_seconds"), "cluster.budget_node_seconds", 0, 1e12);
    if (c.contains("total_node_seconds"))
      spec.cluster.total_node_seconds =
          get_number<double>(c.at("total_node_seconds"), "cluster.total_node_seconds", 0, 1e12);
    if (spec.cluster.budget_node_seconds > 0 && spec.cluster.total_node_seconds > 0)
      bad("cluster.total_node_seconds",
          "give one node-second budget: budget_node_seconds (the search's) or "
          "total_node_seconds (the search's and the final phases')");
    if (c.contains("predict_up_to")) {
      spec.cluster.predict_up_to =
          get_number<int>(c.at("predict_up_to"), "cluster.predict_up_to", 0, 10000000);
      for (const auto& ctx : spec.contexts)
        if (spec.cluster.predict_up_to > 0 && ctx.comm_size > spec.cluster.predict_up_to)
          bad("cluster.predict_up_to",
              "below the campaign's size " + std::to_string(ctx.comm_size));
    }
    if (c.contains("settings")) {
      if (!c.at("settings").is_object()) bad("cluster.settings", "must be an object");
      spec.cluster.settings = c.at("settings");
    }
    // One block per communicator size in a file without a node dimension: one layout per
    // (collective, size).
    for (std::size_t i = 0; i < spec.contexts.size(); ++i)
      for (std::size_t k = 0; k < i; ++k)
        if (spec.contexts[k].collective == spec.contexts[i].collective &&
            spec.contexts[k].comm_size == spec.contexts[i].comm_size)
          bad("contexts[" + std::to_string(i) + "]",
              std::string(name(spec.contexts[i].collective)) +
                  " P=" + std::to_string(spec.contexts[i].comm_size) +
                  " is given twice (the rules file has no node dimension: pick one layout per "
                  "communicator size)");
  }
  if (spec.name.empty()) {
    spec.name =
        (spec.cluster.enabled ? spec.cluster.strategy + " (whole cluster)" : spec.strategy) +
        " on " + spec.backend;
  }
  return spec;
}

nlohmann::json to_json(const CampaignSpec& spec) {
  nlohmann::json contexts = nlohmann::json::array();
  for (const auto& c : spec.contexts)
    contexts.push_back({{"collective", std::string(name(c.collective))},
                        {"comm_size", c.comm_size},
                        {"nodes", c.nodes},
                        {"ppn", c.ppn}});
  nlohmann::json j = {{"name", spec.name},
                      {"backend", spec.backend},
                      {"contexts", contexts},
                      {"sizes", format_size_range(spec.min_size, spec.max_size)},
                      {"strategy", spec.strategy},
                      {"budget", spec.budget},
                      {"repeats", spec.repeats},
                      {"seed", spec.seed},
                      {"iterations", spec.iterations},
                      {"warmup", spec.warmup},
                      {"batch_size", spec.batch_size},
                      {"final_candidates", spec.final_candidates},
                      {"final_repeats", spec.final_repeats},
                      {"final_method", spec.final_method},
                      {"min_gain", spec.min_gain},
                      {"final_max_runs", spec.final_max_runs},
                      {"run_timeout_s", spec.run_timeout_s},
                      {"rules_format", spec.rules_format},
                      {"verify", spec.verify},
                      {"stop",
                       {{"max_evaluations", spec.stop.max_evaluations},
                        {"max_benchmark_seconds", spec.stop.max_benchmark_seconds},
                        {"thesis_rule", spec.stop.thesis_rule}}}};
  if (spec.warm_start_from > 0) j["warm_start_from"] = spec.warm_start_from;
  if (spec.cluster.enabled)
    j["cluster"] = {{"strategy", spec.cluster.strategy},
                    {"min_confidence", spec.cluster.min_confidence},
                    {"budget", spec.cluster.budget},
                    {"budget_node_seconds", spec.cluster.budget_node_seconds},
                    {"total_node_seconds", spec.cluster.total_node_seconds},
                    {"predict_up_to", spec.cluster.predict_up_to},
                    {"settings", spec.cluster.settings}};
  return j;
}

}  // namespace colltune
