#include "campaign/comm_sizes.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace colltune {
namespace {

constexpr long long kMaxSize = 10000000;  // as the campaign spec's comm_size

[[noreturn]] void bad_flag(const std::string& flag, const std::string& why) {
  throw std::invalid_argument(flag + ": " + why);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text) {
    if (c == sep) {
      out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  out.push_back(item);
  return out;
}

long long number(const std::string& text, const std::string& flag) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    bad_flag(flag, "'" + text + "' is not a whole number");
  return std::stoll(text);
}

// Sizes, ranges and steps (see the header) with every value >= `min`.
std::vector<int> parse_counts(const std::string& text, const std::string& flag, long long min,
                              const std::string& what) {
  std::vector<long long> sizes;
  for (const std::string& item : split(text, ',')) {
    const auto parts = split(item, ':');
    if (parts.size() == 1) {
      sizes.push_back(number(item, flag));
    } else if (parts.size() == 2 || parts.size() == 3) {
      const long long first = number(parts[0], flag), last = number(parts[1], flag);
      if (first < min) bad_flag(flag, "'" + item + "' starts below " + std::to_string(min));
      if (last < first) bad_flag(flag, "'" + item + "' ends below its start");
      if (last > kMaxSize) bad_flag(flag, "'" + item + "' goes above " + std::to_string(kMaxSize));
      long long p = first;
      if (parts.size() == 2) {  // doubling
        for (; p < last; p *= 2) sizes.push_back(p);
      } else {
        const long long step = number(parts[2], flag);
        if (step < 1) bad_flag(flag, "'" + item + "' has a step below 1");
        for (; p < last; p += step) sizes.push_back(p);
      }
      if (p != last)
        bad_flag(flag, "'" + item + "' does not reach " + std::to_string(last) + " (" +
                           (parts.size() == 2 ? "A:B doubles from A" : "A:B:S steps by S") +
                           "; write the sizes out or end on a size of the sequence)");
      sizes.push_back(last);
    } else {
      bad_flag(flag, "'" + item + "' is neither a size, A:B (doubling) nor A:B:S (steps)");
    }
  }
  std::set<long long> seen;
  std::vector<int> out;
  for (long long p : sizes) {
    if (p < min)
      bad_flag(flag, what + " " + std::to_string(p) + " is below " + std::to_string(min));
    if (p > kMaxSize) bad_flag(flag, what + " " + std::to_string(p) + " is too large");
    if (!seen.insert(p).second) bad_flag(flag, what + " " + std::to_string(p) + " given twice");
    out.push_back(static_cast<int>(p));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<int> parse_comm_sizes(const std::string& text, const std::string& flag) {
  return parse_counts(text, flag, 2, "communicator size");
}

std::vector<CommLayout> plan_layouts(const std::string& np, const std::string& nodes,
                                     const std::string& ppn, const std::string& layout) {
  const bool policy = layout == "packed" || layout == "spread";
  std::vector<CommLayout> out;
  if (!layout.empty() && !policy) {
    // Explicit NxPPN list.
    if (!np.empty() || !nodes.empty() || !ppn.empty())
      bad_flag("--layout", "an explicit NxPPN list replaces --np, --nodes and --ppn");
    std::set<int> seen;
    for (const std::string& item : split(layout, ',')) {
      const auto x = item.find('x');
      if (x == std::string::npos)
        bad_flag("--layout", "'" + item + "' is not packed, spread or NODESxPPN (e.g. 4x16)");
      const long long n = number(item.substr(0, x), "--layout"),
                      r = number(item.substr(x + 1), "--layout");
      if (n < 1 || r < 1) bad_flag("--layout", "'" + item + "' needs at least 1 node and 1 rank");
      if (n * r < 2) bad_flag("--layout", "'" + item + "' is below 2 ranks");
      if (n * r > kMaxSize) bad_flag("--layout", "'" + item + "' is too large");
      const int p = static_cast<int>(n * r);
      if (!seen.insert(p).second)
        bad_flag("--layout",
                 "two layouts of " + std::to_string(p) +
                     " ranks (the rules file has no node dimension: one layout per size)");
      out.push_back({p, static_cast<int>(n), static_cast<int>(r)});
    }
  } else if (!ppn.empty()) {
    // Every nodes x ppn combination; one layout per communicator size.
    if (!np.empty()) bad_flag("--np", "give either --np or --nodes with --ppn");
    std::map<int, std::vector<CommLayout>> by_size;
    for (int n : parse_counts(nodes.empty() ? "1" : nodes, "--nodes", 1, "node count"))
      for (int r : parse_counts(ppn, "--ppn", 1, "ranks per node")) {
        const long long p = static_cast<long long>(n) * r;
        if (p < 2) continue;  // coll_tuned does not run on one rank
        if (p > kMaxSize)
          bad_flag("--ppn", std::to_string(n) + "x" + std::to_string(r) + " is too large");
        by_size[static_cast<int>(p)].push_back({static_cast<int>(p), n, r});
      }
    if (by_size.empty())
      bad_flag("--ppn", "no combination of --nodes and --ppn has 2 ranks or more");
    for (auto& [p, layouts] : by_size) {
      if (layouts.size() > 1 && !policy) {
        std::string list;
        for (const auto& l : layouts)
          list +=
              (list.empty() ? "" : ", ") + std::to_string(l.nodes) + "x" + std::to_string(l.ppn);
        bad_flag("--layout",
                 std::to_string(p) + " ranks can be " + list +
                     ": name one with --layout packed (fewest nodes), spread (most nodes) "
                     "or an explicit NODESxPPN list");
      }
      // layouts ascend in nodes (outer loop): packed = first, spread = last.
      out.push_back(layout == "spread" ? layouts.back() : layouts.front());
    }
  } else {
    if (policy) bad_flag("--layout", "packed and spread choose among --nodes x --ppn combinations");
    const auto sizes = parse_comm_sizes(np.empty() ? "4" : np);
    const auto node_counts = parse_counts(nodes.empty() ? "1" : nodes, "--nodes", 1, "node count");
    if (node_counts.size() != 1) bad_flag("--nodes", "a list of node counts needs --ppn");
    for (int p : sizes) {
      if (node_counts.front() > p)
        bad_flag("--nodes", std::to_string(node_counts.front()) + " nodes for " +
                                std::to_string(p) + " ranks");
      out.push_back({p, node_counts.front(), 0});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const CommLayout& a, const CommLayout& b) { return a.comm_size < b.comm_size; });
  return out;
}

}  // namespace colltune
