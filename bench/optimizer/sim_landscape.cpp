#include "bench/optimizer/sim_landscape.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "optimizer/search_space.h"
#include "runner/sim/noise.h"
#include "runner/sim/osu_text.h"
#include "runner/sim/schedule.h"
#include "runner/sim/sim_model.h"

namespace colltune::bench {
namespace {

// (collective id, comm size, algorithm, segsize, fanout, msg size)
using CellKey = std::tuple<int, int, int, int, int, std::int64_t>;
using Cells = std::map<CellKey, double>;  // noise-free latency; NaN: cannot be simulated

std::string profile_fingerprint(const sim::ClusterProfile& profile) {
  char text[32];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(sim::mix_seed(0, profile.to_json().dump())));
  return text;
}

// Reads a cache written for the same profile; anything else (missing, other profile) is empty.
Cells read_cache(const std::string& path, const std::string& fingerprint) {
  Cells cells;
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) ||
      line != "# colltune sim landscape cache, profile " + fingerprint)
    return cells;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream s(line);
    int c, p, a, seg, fan;
    long long size;
    std::string value;
    char comma;
    if (!(s >> c >> comma >> p >> comma >> a >> comma >> seg >> comma >> fan >> comma >> size >>
          comma >> value))
      throw std::runtime_error(path + ": malformed cache line '" + line + "'");
    cells[{c, p, a, seg, fan, size}] = value == "nan" ? std::nan("") : std::stod(value);
  }
  return cells;
}

void write_cache(const std::string& path, const std::string& fingerprint, const Cells& cells) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error("cannot write sim cache " + tmp);
    out << "# colltune sim landscape cache, profile " << fingerprint << "\n"
        << "collective,comm_size,algorithm,segsize,fanout,msg_size,latency_us\n";
    char value[40];
    for (const auto& [k, v] : cells) {
      if (std::isfinite(v))
        std::snprintf(value, sizeof value, "%.17g", v);
      else
        std::snprintf(value, sizeof value, "nan");
      out << std::get<0>(k) << "," << std::get<1>(k) << "," << std::get<2>(k) << ","
          << std::get<3>(k) << "," << std::get<4>(k) << "," << std::get<5>(k) << "," << value
          << "\n";
    }
  }
  std::rename(tmp.c_str(), path.c_str());
}

double sample_sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0, ss = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

}  // namespace

std::vector<Landscape> sim_landscapes(const SimLandscapeOptions& options,
                                      const AlgorithmTable& table) {
  const sim::SimModel model = sim::SimModel::load(options.profile);
  const auto& profile = model.profile();
  const int comm_size =
      options.comm_size > 0 ? options.comm_size : profile.nodes * profile.cores_per_node;
  if (comm_size < 2) throw std::invalid_argument("--comm-size must be at least 2");
  if (options.repeats < 1) throw std::invalid_argument("sim repeats must be at least 1");
  std::vector<Collective> collectives = options.collectives;
  if (collectives.empty())
    collectives = {Collective::bcast, Collective::reduce, Collective::allreduce,
                   Collective::gather};
  for (auto c : collectives)
    if (!sim::SimModel::models(c))
      throw std::invalid_argument("the simulator does not model " + std::string(name(c)));
  const sim::Placement placement = model.placement(comm_size);
  const std::string fingerprint = profile_fingerprint(profile);
  Cells cache = options.cache_path.empty() ? Cells{} : read_cache(options.cache_path, fingerprint);
  const std::size_t cached_before = cache.size();

  std::vector<Landscape> out;
  for (Collective collective : collectives) {
    const auto start = std::chrono::steady_clock::now();
    const SearchSpace space(collective, comm_size, table);
    const auto sizes = sim::osu_message_sizes(collective, options.min_size, options.max_size);
    const auto& configs = space.points();
    auto key = [&](const TuningConfig& c, std::int64_t size) {
      return CellKey{ompi_id(collective), comm_size, c.algorithm, c.segsize, c.fanout, size};
    };

    // Noise-free latencies, configurations shared out among threads.
    std::vector<std::vector<double>> truth(configs.size(), std::vector<double>(sizes.size()));
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t i; (i = next++) < configs.size();)
        for (std::size_t s = 0; s < sizes.size(); ++s) {
          auto hit = cache.find(key(configs[i], sizes[s]));
          if (hit != cache.end()) {
            truth[i][s] = hit->second;
            continue;
          }
          try {
            truth[i][s] = model.latency_us(collective, placement, configs[i], sizes[s]);
          } catch (const sim::ScheduleTooLarge&) {
            truth[i][s] = std::nan("");
          }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < options.threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();

    Landscape l;
    l.collective = collective;
    l.comm_size = comm_size;
    l.msg_sizes = sizes;
    const sim::NoiseModel& noise = profile.noise;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const TuningConfig& c = configs[i];
      std::map<std::int64_t, LandscapePoint> points;
      for (std::size_t s = 0; s < sizes.size(); ++s) {
        cache[key(c, sizes[s])] = truth[i][s];
        if (std::isfinite(truth[i][s])) points[sizes[s]].truth = truth[i][s];
      }
      // Repeat r is one OSU run of this configuration: its noise from (seed, configuration, r).
      std::uint64_t config_seed =
          sim::mix_seed(options.seed, static_cast<std::uint64_t>(ompi_id(collective)));
      config_seed = sim::mix_seed(config_seed, static_cast<std::uint64_t>(comm_size));
      config_seed = sim::mix_seed(config_seed, static_cast<std::uint64_t>(c.algorithm));
      config_seed = sim::mix_seed(config_seed, static_cast<std::uint64_t>(c.segsize));
      config_seed = sim::mix_seed(config_seed, static_cast<std::uint64_t>(c.fanout));
      for (int r = 0; r < options.repeats; ++r) {
        sim::RunNoise run(noise, sim::mix_seed(config_seed, static_cast<std::uint64_t>(r)));
        for (std::size_t s = 0; s < sizes.size(); ++s) {
          const double factor = run.factor(sizes[s]);  // drawn for every size: same stream
          if (std::isfinite(truth[i][s])) points[sizes[s]].repeats.push_back(truth[i][s] * factor);
        }
      }
      for (auto& [size, p] : points) {
        p.drawn = p.repeats;
        p.noise_sd = sample_sd(p.repeats);
      }
      if (!points.empty()) l.points[c] = std::move(points);
    }
    if (options.verbose)
      std::cerr << "sim landscape " << profile.name << " " << name(collective) << " P=" << comm_size
                << ": " << configs.size() << " configurations x " << sizes.size() << " sizes in "
                << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                << " s\n";
    out.push_back(std::move(l));
  }
  if (!options.cache_path.empty() && cache.size() != cached_before)
    write_cache(options.cache_path, fingerprint, cache);
  return out;
}

}  // namespace colltune::bench
