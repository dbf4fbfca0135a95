#include "bench/optimizer/landscape.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "core/stats.h"
#include "optimizer/search_space.h"

namespace colltune::bench {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"')
        field += '"', ++i;
      else if (ch == '"')
        quoted = false;
      else
        field += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(field);
      field.clear();
    } else if (ch != '\r') {
      field += ch;
    }
  }
  out.push_back(field);
  return out;
}

// Per size, the default and the configuration the fixed decision runs there get the union
// of their repeats (the default's first, so that the held-out split takes from both).
void pool_default_with_alias(Landscape& l, const SearchSpace& space) {
  auto def = l.points.find(TuningConfig{});
  if (def == l.points.end()) return;
  for (auto& [size, point] : def->second) {
    const auto alias = space.default_alias(size);
    if (!alias) continue;
    auto a = l.points.find(*alias);
    if (a == l.points.end()) continue;
    auto at = a->second.find(size);
    if (at == a->second.end()) continue;
    std::vector<double> both = point.repeats;
    both.insert(both.end(), at->second.repeats.begin(), at->second.repeats.end());
    point.repeats = both;
    at->second.repeats = std::move(both);
  }
}

}  // namespace

std::vector<TuningConfig> Landscape::configs() const {
  std::vector<TuningConfig> out;
  for (const auto& [c, sizes] : points) out.push_back(c);
  return out;
}

const LandscapePoint* Landscape::find(const TuningConfig& config, std::int64_t msg_size) const {
  auto it = points.find(config);
  if (it == points.end()) return nullptr;
  auto s = it->second.find(msg_size);
  return s == it->second.end() ? nullptr : &s->second;
}

double Landscape::optimum(std::int64_t msg_size) const {
  const auto best = optimal_config(msg_size);
  return best ? find(*best, msg_size)->truth : std::nan("");
}

std::optional<TuningConfig> Landscape::optimal_config(std::int64_t msg_size) const {
  std::optional<TuningConfig> out;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [c, sizes] : points)
    if (auto s = sizes.find(msg_size); s != sizes.end() && s->second.truth < best)
      best = s->second.truth, out = c;
  return out;
}

std::vector<double> Landscape::draw(const TuningConfig& config,
                                    const std::vector<std::int64_t>& sizes, Rng& rng) const {
  std::vector<double> out;
  for (auto size : sizes) {
    const LandscapePoint* p = find(config, size);
    out.push_back(p ? p->drawn[rng.below(p->drawn.size())] : std::nan(""));
  }
  return out;
}

std::vector<Landscape> load_landscapes(const std::string& path, const AlgorithmTable& table,
                                       bool holdout_truth, bool pool_default_alias) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open landscape file " + path);
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path + ": empty file");
  auto header = split_csv(line);
  const char* required[] = {"collective", "comm_size", "algorithm", "segsize",
                            "fanout",     "msg_size",  "latency_us"};
  int col[7];
  for (int k = 0; k < 7; ++k) {
    auto it = std::find(header.begin(), header.end(), required[k]);
    if (it == header.end())
      throw std::runtime_error(path + ": missing column '" + required[k] + "'");
    col[k] = static_cast<int>(it - header.begin());
  }

  std::map<std::pair<int, int>, Landscape> groups;
  std::map<std::pair<int, int>, SearchSpace> spaces;  // for canonical()
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    auto f = split_csv(line);
    auto fail = [&](const std::string& why) {
      throw std::runtime_error(path + ":" + std::to_string(line_no) + ": " + why);
    };
    if (f.size() < header.size()) fail("expected " + std::to_string(header.size()) + " fields");
    auto coll = parse_collective(f[col[0]]);
    if (!coll) fail("unknown collective '" + f[col[0]] + "'");
    try {
      int comm_size = std::stoi(f[col[1]]);
      TuningConfig c{std::stoi(f[col[2]]), std::stoi(f[col[3]]), std::stoi(f[col[4]])};
      std::int64_t size = std::stoll(f[col[5]]);
      double latency = std::stod(f[col[6]]);
      if (!std::isfinite(latency) || latency <= 0) fail("latency must be > 0");
      auto key = std::make_pair(ompi_id(*coll), comm_size);
      auto space = spaces.find(key);
      if (space == spaces.end())
        space =
            spaces.emplace(key, SearchSpace(*coll, comm_size, table, std::vector<TuningConfig>{}))
                .first;
      Landscape& l = groups[key];
      l.collective = *coll;
      l.comm_size = comm_size;
      l.points[space->second.canonical(c)][size].repeats.push_back(latency);
    } catch (const std::logic_error& e) {
      fail(std::string("bad number: ") + e.what());
    }
  }
  if (pool_default_alias)
    for (auto& [key, l] : groups) pool_default_with_alias(l, spaces.at(key));
  std::vector<Landscape> out;
  for (auto& [key, l] : groups) {
    std::vector<std::int64_t> sizes;
    for (auto& [c, per_size] : l.points)
      for (auto& [size, p] : per_size) {
        sizes.push_back(size);
        p.drawn = p.repeats;
        p.truth = colltune::median(p.repeats);
        if (holdout_truth && p.repeats.size() > 1) {
          std::vector<double> held_in, held_out;
          for (std::size_t i = 0; i < p.repeats.size(); ++i)
            (i % 2 == 0 ? held_in : held_out).push_back(p.repeats[i]);
          p.drawn = held_in;
          p.truth = colltune::median(held_out);
        }
        if (p.repeats.size() > 1) {
          double mean = 0, ss = 0;
          for (double x : p.repeats) mean += x;
          mean /= p.repeats.size();
          for (double x : p.repeats) ss += (x - mean) * (x - mean);
          p.noise_sd = std::sqrt(ss / (p.repeats.size() - 1));
        }
      }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    l.msg_sizes = sizes;
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace colltune::bench
