#include "server/rules_stage.h"

#include <spdlog/spdlog.h>

#include <fstream>
#include <map>
#include <stdexcept>

#include "core/ompi_version.h"
#include "core/rng.h"
#include "rules/rules_builder.h"
#include "rules/rules_validate.h"
#include "rules/rules_writer.h"
#include "rules/trace.h"
#include "rules/tracer_location.h"
#include "rules/verify.h"
#include "server/campaign_spec.h"
#include "server/context_request.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;

// temp + fsync-free rename is enough here: the deploy step (rules/rules_deploy.h) is the one
// that guarantees durability for the file admins use.
void write_file_atomically(const fs::path& path, const std::string& text) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("failed writing " + tmp.string());
  }
  fs::rename(tmp, path);
}

std::string tag_for(std::int64_t campaign_id, std::int64_t context_id, const std::string& what) {
  return "ct-c" + std::to_string(campaign_id) + "-x" + std::to_string(context_id) + "-" + what;
}

nlohmann::json validation_json(const ValidationReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : report.findings)
    findings.push_back({{"severity", std::string(to_string(f.severity))},
                        {"code", f.code},
                        {"line", f.line},
                        {"message", f.message}});
  return {{"loads", report.loads()},
          {"deployable", report.deployable()},
          {"verdict", report.verdict()},
          {"findings", findings}};
}

nlohmann::json verification_rows_json(const VerificationReport& report,
                                      const AlgorithmTable& table) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : report.rows) {
    nlohmann::json observed = nlohmann::json::array();
    for (const auto& o : row.observed)
      observed.push_back(
          {{"function", o.function},
           {"algorithm", o.algorithm},
           {"segsize", o.segsize ? nlohmann::json(*o.segsize) : nlohmann::json(nullptr)},
           {"fanout", o.fanout ? nlohmann::json(*o.fanout) : nlohmann::json(nullptr)},
           {"calls", o.min_calls}});
    rows.push_back(
        {{"osu_size", row.osu_size},
         {"rules_key", row.rules_key},
         {"expected_algorithm", row.expected.algorithm},
         {"expected_name", table.algorithm_name(report.collective, row.expected.algorithm)},
         {"expected_from_fixed_decision", row.expected.from_fixed_decision},
         {"expected_segsize",
          row.expected.segsize ? nlohmann::json(*row.expected.segsize) : nlohmann::json(nullptr)},
         {"expected_fanout",
          row.expected.fanout ? nlohmann::json(*row.expected.fanout) : nlohmann::json(nullptr)},
         {"observed", observed},
         {"status", std::string(to_string(row.status))},
         {"detail", row.detail}});
  }
  return rows;
}

}  // namespace

BenchmarkRequest verification_request(const std::string& tag, Collective collective, int comm_size,
                                      int nodes, int ppn, std::int64_t min_size,
                                      std::int64_t max_size, int iterations,
                                      const std::filesystem::path& rules_file,
                                      const std::filesystem::path& trace_dir) {
  BenchmarkRequest r;
  r.tag = tag;
  r.collective = collective;
  r.comm_size = comm_size;
  r.nodes = nodes;
  r.ppn = ppn;
  r.min_size = min_size;
  r.max_size = max_size;
  r.iterations = iterations;
  r.warmup = 2;
  r.configs = {TuningConfig::default_decision()};
  r.repeats = 1;
  r.extra_mca = {{"coll_tuned_dynamic_rules_filename", fs::absolute(rules_file).string()}};
  r.extra_env = tracer_environment(trace_dir);
  return r;
}

RulesStageResult finish_campaign_rules(Store& store, JobExecutor& executor,
                                       const AlgorithmTable& table, std::int64_t campaign_id,
                                       const RulesStageOptions& options, const CancelFlag& cancel) {
  RulesStageResult result;
  auto campaign = store.campaign(campaign_id);
  if (!campaign) {
    result.error = "no campaign " + std::to_string(campaign_id);
    return result;
  }
  const CampaignSpec spec = parse_campaign_spec(campaign->spec);
  const auto contexts = store.contexts(campaign_id);

  // 1. The model from the per-size picks.
  std::vector<TunedPoint> points;
  for (const auto& ctx : contexts) {
    if (ctx.state != "done" || !ctx.result.is_object()) {
      result.error = "context " + std::string(name(ctx.collective)) +
                     " P=" + std::to_string(ctx.comm_size) + " is not done";
      return result;
    }
    for (const auto& pick : ctx.result.at("picks"))
      points.push_back({ctx.collective, ctx.comm_size, pick.at("msg_size").get<std::int64_t>(),
                        pick.at("best").get<TuningConfig>()});
  }
  RulesBuildOptions build;
  build.algorithms = &table;
  RulesModel model;
  try {
    model = build_rules_model(points, build);
  } catch (const std::exception& e) {
    result.error = std::string("cannot build rules: ") + e.what();
    return result;
  }

  // 2. The file, in the format the target's Open MPI reads.
  Backend& backend = executor.backend();
  const BackendInfo info = backend.describe();
  const OmpiVersion version =
      parse_ompi_version(info.ompi_version).value_or(table.version.value_or(OmpiVersion{4, 1, 4}));
  RulesFormat format = rules_format_for(version);
  if (options.format != "auto") {
    auto f = parse_rules_format(options.format);
    if (!f) {
      result.error = "unknown rules format '" + options.format + "'";
      return result;
    }
    format = *f;
  }
  result.format = std::string(to_string(format));
  RulesWriteOptions write;
  write.algorithms = &table;
  write.comment_lines = {"colltune rules for Open MPI " + version.to_string() + ", campaign " +
                             std::to_string(campaign_id) + " (" + campaign->name + ")",
                         "tuned on " + info.backend + " backend, host " + info.host};
  result.content = write_rules(model, format, write);

  // 3. Exactly what Open MPI makes of it.
  ValidationOptions validation = validation_options_for(version);
  validation.algorithms = &table;
  const ValidationReport report = validate_rules_text(result.content, validation);
  result.deployable = report.deployable();
  result.validation_text = report.to_text();
  RulesVersionRecord record;
  record.campaign_id = campaign_id;
  record.format = result.format;
  record.content = result.content;
  record.validation = validation_json(report);
  record.verification = {{"verified", false}, {"skipped", !options.verify}};
  record.fingerprint = options.fingerprint;
  // A resumed stage reuses the version it recorded before the interruption.
  result.rules_version_id = 0;
  for (const auto& existing : store.rules_versions(campaign_id))
    if (existing.content == record.content && existing.format == record.format)
      result.rules_version_id = existing.id;
  if (result.rules_version_id == 0) result.rules_version_id = store.add_rules_version(record);
  if (!result.deployable) {
    result.error = "the generated rules file is not deployable: " + report.verdict();
    return result;
  }
  write_file_atomically(options.rules_path, result.content);
  const fs::path rules_abs = fs::absolute(options.rules_path);

  // 4. Proof on the real library, and the re-measured speed-up.
  if (!options.verify || !backend.runs_real_open_mpi()) {
    result.verification_skipped = true;
    result.verification_text = options.verify ? "verification skipped: the " + backend.name() +
                                                    " backend does not run the real Open MPI"
                                              : "verification skipped (--no-verify)";
    store.set_rules_verification(
        result.rules_version_id,
        {{"verified", false}, {"skipped", true}, {"reason", result.verification_text}});
    return result;
  }

  auto base_request = [&](const ContextRecord& ctx, const std::string& tag) {
    return context_request(ctx, spec, tag);
  };
  // Runs a job by its deterministic tag unless it already completed (resume).
  auto run_job = [&](const ContextRecord& ctx, const std::string& purpose,
                     const BenchmarkRequest& request) -> std::optional<std::int64_t> {
    if (auto existing = store.job_by_tag(request.tag)) {
      if (existing->state != "done") {
        if (!executor.execute(*existing, cancel)) return std::nullopt;
        store.set_job_state(existing->id, "done");
      }
      return existing->id;
    }
    bool completed = false;
    const auto id = executor.submit(campaign_id, ctx.id, purpose, request, cancel, completed);
    if (!completed) return std::nullopt;
    store.set_job_state(id, "done");
    return id;
  };

  nlohmann::json verified_contexts = nlohmann::json::array();
  bool all_match = true;
  std::string text;
  for (const auto& ctx : contexts) {
    // Verification: the file loaded, nothing forced, the tracer records what ran. A new job
    // each time (trace files are scratch data).
    const fs::path trace_dir = options.work_dir / ("trace-c" + std::to_string(campaign_id) + "-x" +
                                                   std::to_string(ctx.id));
    fs::remove_all(trace_dir);
    fs::create_directories(trace_dir);
    int attempt = 1;
    while (store.job_by_tag(tag_for(campaign_id, ctx.id, "verify" + std::to_string(attempt))))
      ++attempt;
    auto request =
        verification_request(tag_for(campaign_id, ctx.id, "verify" + std::to_string(attempt)),
                             ctx.collective, ctx.comm_size, ctx.nodes, ctx.ppn, spec.min_size,
                             spec.max_size, options.verify_iterations, rules_abs, trace_dir);
    request.run_timeout_s = spec.run_timeout_s;
    auto job_id = run_job(ctx, "verify", request);
    if (!job_id) {
      result.interrupted = true;
      return result;
    }
    const auto runs = store.runs_of_job(*job_id);
    const auto sizes = osu_message_sizes(ctx.collective, spec.min_size, spec.max_size);
    VerifyOptions verify;
    verify.min_calls = options.verify_iterations;
    verify.algorithms = &table;
    const VerificationReport vr = verify_trace(model, ctx.collective, ctx.comm_size, sizes,
                                               read_trace_dir(trace_dir), verify);
    const bool run_ok = !runs.empty() && runs.front().outcome == RunOutcome::ok;
    const bool ok = run_ok && vr.all_match();
    all_match = all_match && ok;
    if (!run_ok)
      text += std::string(name(ctx.collective)) + " P=" + std::to_string(ctx.comm_size) +
              ": the verification run failed: " +
              (runs.empty() ? std::string("no result") : runs.front().error) + "\n";
    text += vr.to_text(table) + "\n";
    verified_contexts.push_back({{"collective", std::string(name(ctx.collective))},
                                 {"comm_size", ctx.comm_size},
                                 {"matches", vr.matches()},
                                 {"sizes", vr.rows.size()},
                                 {"run_ok", run_ok},
                                 {"rows", verification_rows_json(vr, table)}});

    // Re-measurement: tuned (file loaded) and default, interleaved in a seeded random order.
    for (int round = 0; round < options.remeasure_rounds; ++round) {
      Rng rng(spec.seed * 7919ULL + static_cast<std::uint64_t>(ctx.id) * 31ULL +
              static_cast<std::uint64_t>(round));
      const bool tuned_first = rng.below(2) == 0;
      for (int k = 0; k < 2; ++k) {
        const bool tuned = (k == 0) == tuned_first;
        const std::string what = std::string(tuned ? "remeasure-tuned" : "remeasure-default");
        auto r = base_request(ctx, tag_for(campaign_id, ctx.id, what + std::to_string(round + 1)));
        if (tuned) r.extra_mca = {{"coll_tuned_dynamic_rules_filename", rules_abs.string()}};
        if (!run_job(ctx, what, r)) {
          result.interrupted = true;
          return result;
        }
      }
    }
  }
  result.verified = all_match;
  result.verification_text = text;
  store.set_rules_verification(result.rules_version_id, {{"verified", all_match},
                                                         {"skipped", false},
                                                         {"rules_path", rules_abs.string()},
                                                         {"contexts", verified_contexts}});
  if (!all_match) result.error = "Open MPI did not run what the rules file says (see the table)";
  return result;
}

}  // namespace colltune
