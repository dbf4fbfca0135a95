#include "campaign/context_result.h"

namespace colltune {
namespace {

const char* const kPickFields[] = {"msg_size",   "best",   "best_us",
                                   "default_us", "noise",  "default_within_noise",
                                   "samples",    "method", "reverted"};

}  // namespace

const ContextPick* ContextResult::pick_at(std::int64_t msg_size) const {
  for (const auto& p : picks)
    if (p.msg_size == msg_size) return &p;
  return nullptr;
}

ContextPick* ContextResult::pick_at(std::int64_t msg_size) {
  for (auto& p : picks)
    if (p.msg_size == msg_size) return &p;
  return nullptr;
}

void to_json(nlohmann::json& j, const ContextPick& p) {
  j = p.extra.is_object() ? p.extra : nlohmann::json::object();
  j["msg_size"] = p.msg_size;
  j["best"] = p.best;
  j["best_us"] = p.best_us;
  j["default_us"] = p.default_us;
  j["noise"] = p.noise;
  j["default_within_noise"] = p.default_within_noise;
  j["samples"] = p.samples;
  if (p.method) j["method"] = *p.method;
  if (!p.reverted.is_null()) j["reverted"] = p.reverted;
}

void from_json(const nlohmann::json& j, ContextPick& p) {
  p = ContextPick{};
  p.msg_size = j.at("msg_size").get<std::int64_t>();
  p.best = j.at("best").get<TuningConfig>();
  p.best_us = j.value("best_us", nlohmann::json());
  p.default_us = j.value("default_us", nlohmann::json());
  p.noise = j.value("noise", nlohmann::json());
  p.default_within_noise = j.value("default_within_noise", false);
  p.samples = j.value("samples", nlohmann::json());
  if (j.contains("method")) p.method = j.at("method").get<std::string>();
  p.reverted = j.value("reverted", nlohmann::json());
  p.extra = j;
  for (const char* field : kPickFields) p.extra.erase(field);
}

void to_json(nlohmann::json& j, const ContextResult& r) {
  j = {{"picks", r.picks},
       {"evaluations", r.evaluations},
       {"space", r.space},
       {"strategy", r.strategy}};
  if (r.failed_sizes.is_array() && !r.failed_sizes.empty()) j["failed_sizes"] = r.failed_sizes;
  if (!r.final_passes.empty()) j["final_passes"] = r.final_passes;
}

void from_json(const nlohmann::json& j, ContextResult& r) {
  r = ContextResult{};
  r.picks = j.at("picks").get<std::vector<ContextPick>>();
  r.evaluations = j.value("evaluations", 0);
  r.space = j.value("space", std::int64_t{0});
  r.strategy = j.value("strategy", std::string());
  r.failed_sizes = j.value("failed_sizes", nlohmann::json::array());
  r.final_passes = j.value("final_passes", std::vector<int>{});
}

std::optional<ContextResult> context_result_of(const nlohmann::json& stored) {
  if (!stored.is_object() || !stored.contains("picks")) return std::nullopt;
  return stored.get<ContextResult>();
}

}  // namespace colltune
