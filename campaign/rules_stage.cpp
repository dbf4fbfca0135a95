#include "campaign/rules_stage.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>

#include "campaign/campaign_spec.h"
#include "campaign/campaign_states.h"
#include "campaign/cluster_rules.h"
#include "campaign/context_request.h"
#include "campaign/context_result.h"
#include "campaign/final_choice.h"
#include "core/ompi_version.h"
#include "optimizer/paired_test.h"
#include "rules/rules_builder.h"
#include "rules/rules_validate.h"
#include "rules/rules_writer.h"
#include "rules/trace.h"
#include "rules/tracer_location.h"
#include "rules/verify.h"

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

namespace {

// The re-measurement of one context with a rules file loaded: per size, the interval of the
// tuned/default latency ratio from `rounds` pairs taken in A B / B A order.
struct Remeasure {
  std::vector<std::int64_t> sizes;
  std::vector<PairedInterval> intervals;
};

std::string describe_config(const AlgorithmTable& table, Collective c, const TuningConfig& config) {
  std::string text = table.algorithm_name(c, config.algorithm) + " (" + to_string(config) + ")";
  return text;
}

}  // namespace

RulesStageResult finish_campaign_rules(Store& store, JobExecutor& executor,
                                       const AlgorithmTable& table, std::int64_t campaign_id,
                                       const RulesStageOptions& options, const CancelFlag& cancel) {
  RulesStageResult result;
  auto campaign = store.campaign(campaign_id);
  if (!campaign) {
    result.error = "no campaign " + std::to_string(campaign_id);
    return result;
  }
  const CampaignSpec spec = options.spec ? *options.spec : parse_campaign_spec(campaign->spec);
  for (const auto& ctx : store.contexts(campaign_id))
    if (ctx.state != ContextState::done || !ctx.result.is_object()) {
      result.error = "context " + std::string(name(ctx.collective)) +
                     " P=" + std::to_string(ctx.comm_size) + " is not done";
      return result;
    }

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

  // Runs a job by its deterministic tag unless it already completed (resume).
  auto run_job = [&](const ContextRecord& ctx, JobPurpose purpose,
                     const BenchmarkRequest& request) -> std::optional<std::int64_t> {
    if (auto existing = store.job_by_tag(request.tag)) {
      if (existing->state != JobState::done) {
        if (!executor.execute(*existing, cancel)) return std::nullopt;
        store.set_job_state(existing->id, JobState::done);
      }
      return existing->id;
    }
    bool completed = false;
    const auto id = executor.submit(campaign_id, ctx.id, purpose, request, cancel, completed);
    if (!completed) return std::nullopt;
    store.set_job_state(id, JobState::done);
    return id;
  };

  // Every pass: the model from the current picks, the file, its validation and, on the real
  // library, the trace proof and the paired re-measurement. A size where the file is measured
  // significantly slower than the default is reverted to the default and the next pass checks
  // the rewritten file again; the pass after the last re-measuring one only proves the trace.
  nlohmann::json reverted_all = nlohmann::json::array();
  for (int pass = 1;; ++pass) {
    const auto contexts = store.contexts(campaign_id);
    std::vector<TunedPoint> points;
    RulesBuildOptions build;
    build.algorithms = &table;
    // Whole-cluster campaigns (server/cluster_rules.h): measured and predicted blocks from 2
    // ranks to the largest size, each block up to the next one; probes = predicted sizes the
    // tracer checks too.
    ClusterRulesInput cluster;
    RulesModel model;
    try {
      if (spec.cluster.enabled) {
        cluster = cluster_rules_input(contexts);
        points = cluster.points;
        build.comm_coverage_factor = 0;
      } else {
        for (const auto& ctx : contexts)
          for (const ContextPick& pick : ctx.result.get<ContextResult>().picks)
            points.push_back({ctx.collective, ctx.comm_size, pick.msg_size, pick.best});
      }
      model = build_rules_model(points, build);
    } catch (const std::exception& e) {
      result.error = std::string("cannot build rules: ") + e.what();
      return result;
    }
    RulesWriteOptions write;
    write.algorithms = &table;
    write.comment_lines = {"colltune rules for Open MPI " + version.to_string() + ", campaign " +
                               std::to_string(campaign_id) + " (" + campaign->name + ")",
                           "tuned on " + info.backend + " backend, host " + info.host};
    if (spec.cluster.enabled) {
      write.comment_lines.push_back(
          "Whole-cluster rules: every communicator size from 2 ranks to the end of the campaign's "
          "range; "
          "a PREDICTED block was not run at that size (this file has no node dimension: each "
          "block names the layout it was tuned for)");
      for (const auto& line : cluster.comments) write.comment_lines.push_back(line);
    }
    result.content = write_rules(model, format, write);

    // Exactly what Open MPI makes of it.
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
    record.verification = {{"verified", false},
                           {"skipped", !options.verify},
                           {"deployable", false},
                           {"reason", "not verified yet"}};
    record.fingerprint = options.fingerprint;
    // A resumed stage reuses the version it recorded before the interruption.
    result.rules_version_id = 0;
    for (const auto& existing : store.rules_versions(campaign_id))
      if (existing.content == record.content && existing.format == record.format)
        result.rules_version_id = existing.id;
    if (result.rules_version_id == 0) result.rules_version_id = store.add_rules_version(record);
    if (!result.deployable) {
      result.error = "the generated rules file is not deployable: " + report.verdict();
      store.set_rules_verification(result.rules_version_id, {{"verified", false},
                                                             {"skipped", false},
                                                             {"deployable", false},
                                                             {"reason", result.error}});
      return result;
    }
    write_file_atomically(options.rules_path, result.content);
    const fs::path rules_abs = fs::absolute(options.rules_path);

    if (!options.verify || !backend.runs_real_open_mpi()) {
      result.verification_skipped = true;
      result.verification_text = options.verify ? "verification skipped: the " + backend.name() +
                                                      " backend does not run the real Open MPI"
                                                : "verification skipped (--no-verify)";
      store.set_rules_verification(
          result.rules_version_id,
          {{"verified", false},
           {"skipped", true},
           {"deployable", false},
           {"reason", "not verified on the real Open MPI: " + result.verification_text}});
      return result;
    }

    const bool remeasure = pass <= options.remeasure_passes && options.remeasure_rounds > 0;
    const std::string version_tag = "v" + std::to_string(result.rules_version_id) + "-";
    nlohmann::json verified_contexts = nlohmann::json::array();
    nlohmann::json reverted = nlohmann::json::array();
    std::map<std::int64_t, ContextResult> new_results;  // context id -> result with reverts
    bool all_match = true;
    std::string text;
    std::vector<ContextRecord> checked = contexts;
    checked.insert(checked.end(), cluster.probes.begin(), cluster.probes.end());
    for (std::size_t n = 0; n < checked.size(); ++n) {
      const ContextRecord& ctx = checked[n];
      // A predicted size (whole-cluster): traced like the others, not re-measured (no picks).
      const bool probe = n >= contexts.size();
      const std::string verify_name =
          probe ? "verify-p" + std::to_string(ctx.comm_size) + "-" : std::string("verify");
      // Verification: the file loaded, nothing forced, the tracer records what ran. A new job
      // each time (trace files are scratch data).
      const fs::path trace_dir =
          options.work_dir /
          ("trace-c" + std::to_string(campaign_id) + "-x" + std::to_string(ctx.id) +
           (probe ? "-p" + std::to_string(ctx.comm_size) : std::string()));
      fs::remove_all(trace_dir);
      fs::create_directories(trace_dir);
      int attempt = 1;
      while (store.job_by_tag(tag_for(campaign_id, ctx.id, verify_name + std::to_string(attempt))))
        ++attempt;
      auto request =
          verification_request(tag_for(campaign_id, ctx.id, verify_name + std::to_string(attempt)),
                               ctx.collective, ctx.comm_size, ctx.nodes, ctx.ppn, spec.min_size,
                               spec.max_size, options.verify_iterations, rules_abs, trace_dir);
      request.run_timeout_s = spec.run_timeout_s;
      auto job_id = run_job(ctx, JobPurpose::verify, request);
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
      const std::string label =
          std::string(name(ctx.collective)) + " P=" + std::to_string(ctx.comm_size);
      if (!run_ok)
        text += label + ": the verification run failed: " +
                (runs.empty() ? std::string("no result") : runs.front().error) + "\n";
      text += vr.to_text(table) + "\n";
      nlohmann::json context_json = {{"collective", std::string(name(ctx.collective))},
                                     {"comm_size", ctx.comm_size},
                                     {"predicted", probe},
                                     {"matches", vr.matches()},
                                     {"sizes", vr.rows.size()},
                                     {"run_ok", run_ok},
                                     {"rows", verification_rows_json(vr, table)}};

      if (remeasure && !probe) {
        // Re-measurement: tuned (file loaded) and default in A B / B A rounds; round r's tuned
        // run is paired with round r's default run.
        std::map<std::int64_t, std::size_t> index;
        for (std::size_t i = 0; i < sizes.size(); ++i) index[sizes[i]] = i;
        std::vector<std::map<std::size_t, double>> tuned_rounds, default_rounds;
        // Runs rounds [first, first + count); false when interrupted.
        const auto run_rounds = [&](int first, int count) {
          for (int round = first; round < first + count; ++round) {
            std::map<std::size_t, double> by_size[2];
            for (int k = 0; k < 2; ++k) {
              const bool tuned = (k == 0) == (round % 2 == 0);
              const JobPurpose what =
                  tuned ? JobPurpose::remeasure_tuned : JobPurpose::remeasure_default;
              auto r = context_request(
                  ctx, spec,
                  tag_for(campaign_id, ctx.id,
                          version_tag + to_string(what) + std::to_string(round + 1)));
              if (tuned) r.extra_mca = {{"coll_tuned_dynamic_rules_filename", rules_abs.string()}};
              auto id = run_job(ctx, what, r);
              if (!id) return false;
              for (const auto& run : store.runs_of_job(*id)) {
                if (run.outcome != RunOutcome::ok) continue;
                for (const auto& row : run.rows)
                  if (auto it = index.find(row.size); it != index.end() && row.avg_us > 0)
                    by_size[tuned ? 0 : 1][it->second] = row.avg_us;
              }
            }
            tuned_rounds.push_back(by_size[0]);
            default_rounds.push_back(by_size[1]);
          }
          return true;
        };
        const ContextResult picked = ctx.result.get<ContextResult>();
        const auto changed_at = [&](std::size_t i) {
          const ContextPick* pick = picked.pick_at(sizes[i]);
          return pick && !pick->best.is_default();
        };
        PairedTestOptions test;
        test.looks = std::max(1, options.remeasure_looks);
        std::vector<PairedInterval> intervals;
        int looks = 0;
        for (int look = 0; look < test.looks; ++look) {
          ++looks;
          if (!run_rounds(look * options.remeasure_rounds, options.remeasure_rounds)) {
            result.interrupted = true;
            return result;
          }
          std::vector<std::vector<double>> d(sizes.size());
          for (std::size_t r = 0; r < tuned_rounds.size(); ++r)
            for (const auto& [i, us] : tuned_rounds[r])
              if (auto it = default_rounds[r].find(i); it != default_rounds[r].end())
                d[i].push_back(std::log(us / it->second));
          intervals = paired_intervals(d, 0.0, test);
          // Another look only where the file's change measured slower than the default without
          // proof either way (a burst in one run widens every interval of that round).
          bool suspect = false;
          for (std::size_t i = 0; i < sizes.size(); ++i)
            suspect = suspect || (changed_at(i) && intervals[i].verdict == PairedVerdict::open &&
                                  intervals[i].ratio > 1);
          if (!suspect) break;
        }
        ContextResult context_result = picked;
        nlohmann::json rows = nlohmann::json::array();
        bool changed_any = false;
        for (std::size_t i = 0; i < sizes.size(); ++i) {
          const PairedInterval& iv = intervals[i];
          ContextPick* pick = context_result.pick_at(sizes[i]);
          const TuningConfig chosen = pick ? pick->best : TuningConfig::default_decision();
          nlohmann::json row = interval_json(iv);
          row["msg_size"] = sizes[i];
          row["changed"] = !chosen.is_default();
          rows.push_back(row);
          if (chosen.is_default() || iv.verdict != PairedVerdict::slower) continue;
          // Significantly slower with the file than without: back to Open MPI's default.
          char reason[200];
          std::snprintf(reason, sizeof reason,
                        "measured slower with the file: %.2fx the default's latency "
                        "(%.0f %% interval %.2f-%.2f, %d pairs)",
                        iv.ratio, 100 * iv.confidence, iv.lower, iv.upper, iv.pairs);
          nlohmann::json entry = {{"collective", std::string(name(ctx.collective))},
                                  {"comm_size", ctx.comm_size},
                                  {"msg_size", sizes[i]},
                                  {"from", chosen},
                                  {"from_name", describe_config(table, ctx.collective, chosen)},
                                  {"ratio", iv.ratio},
                                  {"ratio_low", iv.lower},
                                  {"ratio_high", iv.upper},
                                  {"pairs", iv.pairs},
                                  {"pass", pass},
                                  {"reason", reason}};
          reverted.push_back(entry);
          pick->reverted = entry;
          pick->best = TuningConfig::default_decision();
          pick->default_within_noise = true;
          changed_any = true;
          text += label + " " + std::to_string(sizes[i]) + " B: reverted to the default, " +
                  reason + "\n";
        }
        context_json["remeasure"] = rows;
        context_json["remeasure_looks"] = looks;
        if (changed_any) new_results[ctx.id] = context_result;
      }
      verified_contexts.push_back(context_json);
    }
    for (const auto& r : reverted) reverted_all.push_back(r);
    result.verified = all_match;
    result.verification_text = text;
    const bool final_pass = reverted.empty() || !all_match;
    std::string reason;
    if (!all_match)
      reason = "Open MPI did not run what the rules file says (see the verification rows)";
    else if (!final_pass)
      reason = "sizes measured slower were reverted; the rewritten file is verified next";
    nlohmann::json verification = {{"verified", all_match},
                                   {"skipped", false},
                                   {"deployable", all_match && final_pass},
                                   {"reason", reason},
                                   {"pass", pass},
                                   {"remeasured", remeasure},
                                   {"rules_path", rules_abs.string()},
                                   {"contexts", verified_contexts},
                                   {"reverted", reverted},
                                   {"reverted_before", reverted_all}};
    store.set_rules_verification(result.rules_version_id, verification);
    if (!all_match) {
      result.deployable = false;
      result.error = reason;
      return result;
    }
    if (final_pass) {
      result.reverted = reverted_all;
      return result;
    }
    for (const auto& [id, r] : new_results) store.save_context_result(id, r);
  }
}

}  // namespace colltune
