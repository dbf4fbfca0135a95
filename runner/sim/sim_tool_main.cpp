// colltune-sim: inspect the simulated clusters, compare a profile with measurements and fit it.
//
//   colltune-sim profiles
//   colltune-sim latency --profile pise --collective bcast -n 576 --config 6:65536:0 --config 0
//   colltune-sim compare --profile local --csv measured.csv [--where dataset=peak-2020-05]
//   colltune-sim fit --profile local --csv measured.csv --out local.json
//   colltune-sim measure --collective bcast -n 4 --config 1 --config 6:8192 --repeats 3 > m.csv
//     (runs the bundled OSU benchmark with the local backend; CSV in the replay format)
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "runner/local_backend.h"
#include "runner/replay_backend.h"
#include "runner/sim/calibration.h"
#include "runner/sim/osu_text.h"
#include "runner/sim/sim_model.h"

using namespace colltune;
using namespace colltune::sim;

namespace {

TuningConfig parse_config(const std::string& text) {
  TuningConfig c;
  int fields[3] = {0, 0, 0};
  std::size_t start = 0;
  for (int i = 0; i < 3 && start <= text.size(); ++i) {
    const std::size_t colon = text.find(':', start);
    fields[i] = std::stoi(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  c.algorithm = fields[0];
  c.segsize = fields[1];
  c.fanout = fields[2];
  return c;
}

ReplayDataset::Filter parse_where(const std::vector<std::string>& items) {
  ReplayDataset::Filter f;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--where needs COLUMN=VALUE");
    f[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"colltune simulated clusters: latencies, comparison with measurements, fitting"};
  app.require_subcommand(1);

  auto* profiles = app.add_subcommand("profiles", "list the profiles found");

  std::string profile = std::string(kDefaultProfile);
  std::string collective = "bcast";
  int comm_size = 4, nodes = 0, ppn = 0;
  std::vector<std::string> configs;
  std::string sizes = "4:1048576";
  auto* latency = app.add_subcommand("latency", "noise-free OSU Avg latency per size");
  latency->add_option("--profile", profile, "profile name or JSON file");
  latency->add_option("--collective", collective, "bcast, reduce, allreduce or gather");
  latency->add_option("-n,--comm-size", comm_size, "ranks");
  latency->add_option("--nodes", nodes, "nodes (default: the profile's placement)");
  latency->add_option("--ppn", ppn, "ranks per node");
  latency->add_option("--config", configs, "ALG[:SEGSIZE[:FANOUT]], repeatable (0 = default)");
  latency->add_option("--sizes", sizes, "MIN:MAX bytes");

  std::string csv, out, cells_out;
  std::vector<std::string> where, params;
  int max_comm_size = 1 << 30, max_evals = 600;
  bool no_default = false;
  auto* cmp = app.add_subcommand("compare", "compare a profile with a measured landscape CSV");
  cmp->add_option("--profile", profile);
  cmp->add_option("--csv", csv, "landscape CSV (replay format)")->required();
  cmp->add_option("--where", where, "COLUMN=VALUE row filter, repeatable");
  cmp->add_option("--max-comm-size", max_comm_size);
  cmp->add_option("--cells", cells_out, "write per-cell sim/measured CSV here");
  cmp->add_flag("--no-default", no_default, "leave out algorithm 0 (another Open MPI's defaults)");
  auto* fit = app.add_subcommand("fit", "fit a profile's numbers to a measured landscape CSV");
  fit->add_option("--profile", profile);
  fit->add_option("--csv", csv)->required();
  fit->add_option("--where", where);
  fit->add_option("--param", params, "JSON pointer of a parameter to fit, repeatable");
  fit->add_option("--max-evals", max_evals);
  fit->add_option("--max-comm-size", max_comm_size);
  fit->add_option("--out", out, "write the fitted profile here")->required();
  fit->add_flag("--no-default", no_default, "leave out algorithm 0");

  int repeats = 3, iterations = 200, warmup = 20;
  std::uint64_t order_seed = 1;
  auto* measure = app.add_subcommand("measure", "measure with the local backend, print CSV");
  measure->add_option("--collective", collective)->required();
  measure->add_option("-n,--comm-size", comm_size)->required();
  measure->add_option("--config", configs, "ALG[:SEGSIZE[:FANOUT]], repeatable")->required();
  measure->add_option("--sizes", sizes, "MIN:MAX bytes");
  measure->add_option("--repeats", repeats);
  measure->add_option("-i,--iterations", iterations);
  measure->add_option("-x,--warmup", warmup);
  measure->add_option("--order-seed", order_seed);
  std::string osu_dir;
  measure->add_option("--osu-dir", osu_dir, "OMB folder (default: the bundled benchmark)");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*profiles) {
      for (const auto& n : available_profiles()) {
        const auto p = load_profile(n);
        std::printf("%-16s %3d nodes x %3d cores  %s\n", n.c_str(), p.nodes, p.cores_per_node,
                    p.description.c_str());
      }
      return 0;
    }
    if (*measure) {
      const auto coll = parse_collective(collective);
      if (!coll) throw std::invalid_argument("unknown collective " + collective);
      BenchmarkRequest request;
      request.tag = "colltune-sim-measure";
      request.collective = *coll;
      request.comm_size = comm_size;
      const auto colon = sizes.find(':');
      request.min_size = std::stoll(sizes.substr(0, colon));
      request.max_size = std::stoll(sizes.substr(colon + 1));
      request.iterations = iterations;
      request.warmup = warmup;
      request.repeats = repeats;
      request.order_seed = order_seed;
      for (const auto& c : configs) request.configs.push_back(parse_config(c));
      struct Print : RunSink {
        void on_result(const RunResult& r) override {
          if (r.outcome != RunOutcome::ok) {
            std::fprintf(stderr, "run %zu/%d: %s %s\n", r.config_index, r.repeat,
                         std::string(to_string(r.outcome)).c_str(), r.error.c_str());
            return;
          }
          for (const auto& row : r.rows)
            std::printf("%s,%d,1,%d,%d,%d,%lld,%.2f,%.2f,%.2f,%lld,%d\n",
                        std::string(name(collective)).c_str(), comm_size, r.config.algorithm,
                        r.config.segsize, r.config.fanout, static_cast<long long>(row.size),
                        row.avg_us, row.min_us.value_or(row.avg_us),
                        row.max_us.value_or(row.avg_us),
                        static_cast<long long>(row.iterations.value_or(0)), r.repeat);
          std::fflush(stdout);
        }
        Collective collective;
        int comm_size;
      } print;
      print.collective = *coll;
      print.comm_size = comm_size;
      std::printf(
          "collective,comm_size,nodes,algorithm,segsize,fanout,msg_size,latency_us,"
          "min_latency_us,max_latency_us,iterations,repeat\n");
      LocalBackendOptions local;
      local.osu_dir = osu_dir;
      LocalBackend backend{local};
      CancelFlag cancel;
      backend.run(request, print, cancel);
      return 0;
    }
    const SimModel model = SimModel::load(profile);
    if (*latency) {
      const auto coll = parse_collective(collective);
      if (!coll) throw std::invalid_argument("unknown collective " + collective);
      const Placement placement =
          nodes > 0 ? model.profile().placement(comm_size, nodes, ppn) : model.placement(comm_size);
      if (configs.empty()) configs = {"0"};
      const auto colon = sizes.find(':');
      const auto list = osu_message_sizes(*coll, std::stoll(sizes.substr(0, colon)),
                                          std::stoll(sizes.substr(colon + 1)));
      std::printf("# %s on %s: %d ranks, %d nodes x %d ppn\n%-10s", collective.c_str(),
                  model.profile().name.c_str(), comm_size, placement.nodes, placement.ppn, "size");
      for (const auto& c : configs) std::printf("%24s", to_string(parse_config(c)).c_str());
      std::printf("\n");
      for (auto s : list) {
        std::printf("%-10lld", static_cast<long long>(s));
        for (const auto& c : configs) {
          try {
            std::printf("%24.2f", model.latency_us(*coll, placement, parse_config(c), s));
          } catch (const std::exception&) {
            std::printf("%24s", "n/a");
          }
        }
        std::printf("\n");
      }
      return 0;
    }
    const auto data = ReplayDataset::load_csv(csv, parse_where(where));
    if (*cmp) {
      CompareOptions options;
      options.max_comm_size = max_comm_size;
      options.include_default = !no_default;
      const auto report = compare(model, data, options);
      std::cout << report.to_json().dump(2) << "\n";
      if (!cells_out.empty()) {
        std::ofstream f(cells_out);
        f << "collective,comm_size,nodes,algorithm,segsize,fanout,msg_size,measured_us,"
             "simulated_us\n";
        for (const auto& c : report.cells)
          f << name(c.collective) << "," << c.comm_size << "," << c.nodes << ","
            << c.config.algorithm << "," << c.config.segsize << "," << c.config.fanout << ","
            << c.msg_size << "," << c.measured_us << "," << c.simulated_us << "\n";
      }
      return 0;
    }
    FitOptions options;
    options.parameters = params;
    options.max_evaluations = max_evals;
    options.compare.max_comm_size = max_comm_size;
    options.compare.include_default = !no_default;
    const auto result = fit_profile(model.profile(), data, options);
    std::printf("loss (mean squared log ratio): %.4f -> %.4f after %d evaluations\n",
                result.initial_loss, result.final_loss, result.evaluations);
    for (const auto& [p, v] : result.values) std::printf("  %-40s %.4g\n", p.c_str(), v);
    std::ofstream(out) << result.profile.to_json().dump(2) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "colltune-sim: %s\n", e.what());
    return 1;
  }
}
