#include "osu/bench/bench_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdio>

namespace colltune::osu_bench {
namespace {

constexpr std::string_view kProgramName = "colltune-osu-bench";
constexpr std::string_view kOsuPrefix = "osu_";

std::string_view basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Whole-string decimal integer; no sign unless `allow_negative`, no spaces, no suffix.
template <typename Int>
std::optional<Int> parse_integer(std::string_view text, bool allow_negative = false) {
  if (text.empty()) return std::nullopt;
  if (!allow_negative && text.front() == '-') return std::nullopt;
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool is_gather_like(Collective c) {
  return c == Collective::gather || c == Collective::scatter || c == Collective::allgather ||
         c == Collective::alltoall;
}

bool uses_float_default(Collective c) {
  return c == Collective::allreduce || c == Collective::reduce || c == Collective::reduce_scatter;
}

// OMB's set_message_size: "MAX", "MIN:MAX", "MIN:", ":MAX". Strict numbers, MIN >= 1,
// MAX >= 0, both <= INT_MAX (sizes are ints in OMB), MIN <= MAX when both are given.
bool set_message_size(std::string_view text, BenchOptions& options) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) {
    const auto max = parse_integer<std::int64_t>(text);
    if (!max || *max > INT_MAX) return false;
    options.max_size = *max;
    return true;
  }
  if (text.find(':', colon + 1) != std::string_view::npos) return false;
  const std::string_view min_text = text.substr(0, colon);
  const std::string_view max_text = text.substr(colon + 1);
  if (min_text.empty() && max_text.empty()) return false;
  std::int64_t min = options.min_size;
  std::int64_t max = options.max_size;
  if (!min_text.empty()) {
    const auto value = parse_integer<std::int64_t>(min_text);
    if (!value || *value < 1 || *value > INT_MAX) return false;
    min = *value;
  }
  if (!max_text.empty()) {
    const auto value = parse_integer<std::int64_t>(max_text);
    if (!value || *value > INT_MAX) return false;
    max = *value;
  }
  if (!min_text.empty() && !max_text.empty() && min > max) return false;
  options.min_size = min;
  options.max_size = max;
  return true;
}

std::optional<ElementType> parse_type(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (lower == "mpi_char") return ElementType::mpi_char;
  if (lower == "mpi_int") return ElementType::mpi_int;
  if (lower == "mpi_float") return ElementType::mpi_float;
  return std::nullopt;
}

struct OptionSpec {
  char short_name;
  std::string_view long_name;
  bool takes_argument;
};

constexpr OptionSpec kOptions[] = {
    {'h', "help", false},        {'v', "version", false},   {'f', "full", false},
    {'m', "message-size", true}, {'i', "iterations", true}, {'x', "warmup", true},
    {'M', "mem-limit", true},    {'T', "type", true},       {'c', "validation", false},
};

// Options OMB does not offer for barrier (its optstring has no T, and no c).
bool offered(char option, Collective c) {
  if (c == Collective::barrier && (option == 'T' || option == 'c')) return false;
  return true;
}

const OptionSpec* find_short(char name, Collective c) {
  for (const auto& spec : kOptions)
    if (spec.short_name == name) return offered(name, c) ? &spec : nullptr;
  return nullptr;
}

const OptionSpec* find_long(std::string_view name, Collective c) {
  for (const auto& spec : kOptions)
    if (spec.long_name == name) return offered(spec.short_name, c) ? &spec : nullptr;
  return nullptr;
}

ParsedCommand bad(ParsedCommand command, std::string message, std::string option,
                  std::optional<std::string> argument = std::nullopt) {
  command.kind = CommandKind::bad_usage;
  command.bad_usage = BadUsage{std::move(message), std::move(option), std::move(argument)};
  return command;
}

// Applies one option; returns false (and fills `command`) on bad usage, help or version.
bool apply_option(const OptionSpec& spec, const std::string& shown_name,
                  const std::string& argument, ParsedCommand& command) {
  BenchOptions& options = command.options;
  switch (spec.short_name) {
    case 'h':
      command.kind = CommandKind::help;
      return false;
    case 'v':
      command.kind = CommandKind::version;
      return false;
    case 'f':
      options.full = true;
      return true;
    case 'c':
      options.validate = true;
      return true;
    case 'm':
      if (!set_message_size(argument, options)) {
        command = bad(command, "Invalid Message Size", shown_name, argument);
        return false;
      }
      return true;
    case 'i': {
      const auto value = parse_integer<int>(argument);
      if (!value || *value < 1) {
        command = bad(command, "Invalid Number of Iterations", shown_name, argument);
        return false;
      }
      options.iterations_small = options.iterations_large = *value;
      return true;
    }
    case 'x': {
      const auto value = parse_integer<int>(argument);
      if (!value) {
        command = bad(command, "Invalid Number of Warmup Iterations", shown_name, argument);
        return false;
      }
      options.warmup_small = options.warmup_large = *value;
      return true;
    }
    case 'M': {
      const auto value = parse_integer<std::int64_t>(argument, /*allow_negative=*/true);
      if (!value) {
        command = bad(command, "Invalid Memory Limit", shown_name, argument);
        return false;
      }
      options.mem_limit_raised = *value < kMinMemLimit;
      options.mem_limit = std::max(*value, kMinMemLimit);
      return true;
    }
    case 'T': {
      const auto type = parse_type(argument);
      if (!type) {
        command = bad(command, "Invalid Data Type", shown_name, argument);
        return false;
      }
      options.type = type;
      return true;
    }
  }
  return true;
}

// getopt_long with OMB's "+:" optstring semantics: options may be clustered (-fm 4:8) and take
// attached (-m4:8) or separate (-m 4:8, even if it starts with '-') arguments; parsing stops at
// "--" or the first non-option argument, and what follows is ignored (as OMB does).
ParsedCommand parse_options(const std::vector<std::string>& argv, std::size_t first,
                            ParsedCommand command) {
  const Collective c = command.options.collective;
  for (std::size_t index = first; index < argv.size(); ++index) {
    const std::string& arg = argv[index];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') break;
    if (arg[1] == '-') {  // --name[=value]
      const auto equals = arg.find('=');
      const std::string name = arg.substr(2, equals == std::string::npos ? arg.npos : equals - 2);
      const std::string shown = "-" + name;  // printed after OMB's "-": "[--name]"
      const OptionSpec* spec = find_long(name, c);
      if (spec == nullptr) return bad(command, "Invalid Option", arg.substr(1));
      std::string argument;
      if (spec->takes_argument) {
        if (equals != std::string::npos) {
          argument = arg.substr(equals + 1);
        } else if (index + 1 < argv.size()) {
          argument = argv[++index];
        } else {
          return bad(command, "Option Missing Required Argument", shown);
        }
      } else if (equals != std::string::npos) {
        return bad(command, "Invalid Option", arg.substr(1));
      }
      if (!apply_option(*spec, shown, argument, command)) return command;
      continue;
    }
    for (std::size_t pos = 1; pos < arg.size(); ++pos) {  // -abc cluster
      const char name = arg[pos];
      const OptionSpec* spec = find_short(name, c);
      if (spec == nullptr) return bad(command, "Invalid Option", std::string(1, name));
      std::string argument;
      if (spec->takes_argument) {
        if (pos + 1 < arg.size()) {
          argument = arg.substr(pos + 1);
        } else if (index + 1 < argv.size()) {
          argument = argv[++index];
        } else {
          return bad(command, "Option Missing Required Argument", std::string(1, name));
        }
        pos = arg.size();  // the rest of this argv element was the argument
      }
      if (!apply_option(*spec, std::string(1, name), argument, command)) return command;
    }
  }
  return command;
}

std::string collective_list() {
  std::string out;
  for (const Collective c : supported_collectives()) {
    if (!out.empty()) out += ' ';
    out += name(c);
  }
  return out;
}

}  // namespace

const std::vector<Collective>& supported_collectives() {
  static const std::vector<Collective> all{
      Collective::bcast,    Collective::allreduce, Collective::reduce,
      Collective::gather,   Collective::scatter,   Collective::allgather,
      Collective::alltoall, Collective::barrier,   Collective::reduce_scatter};
  return all;
}

bool is_supported(Collective c) {
  const auto& all = supported_collectives();
  return std::find(all.begin(), all.end(), c) != all.end();
}

std::string_view mpi_type_name(ElementType t) {
  switch (t) {
    case ElementType::mpi_char:
      return "MPI_CHAR";
    case ElementType::mpi_int:
      return "MPI_INT";
    case ElementType::mpi_float:
      return "MPI_FLOAT";
  }
  return "MPI_CHAR";
}

int type_size(ElementType t) {
  switch (t) {
    case ElementType::mpi_char:
      return 1;
    case ElementType::mpi_int:
      return static_cast<int>(sizeof(int));
    case ElementType::mpi_float:
      return static_cast<int>(sizeof(float));
  }
  return 1;
}

ElementType effective_type(const BenchOptions& options) {
  if (options.type) return *options.type;
  return uses_float_default(options.collective) ? ElementType::mpi_float : ElementType::mpi_char;
}

std::string program_usage() {
  std::string out;
  out += "Usage: colltune-osu-bench COLLECTIVE [options]\n";
  out += "       osu_COLLECTIVE [options]    (the osu_* links installed next to it)\n";
  out += "colltune's OSU Micro-Benchmarks-compatible collective latency benchmark; prints\n";
  out += "OMB 5.6.2's output format. COLLECTIVE is one of:\n";
  out += "  " + collective_list() + "\n";
  out += "Options are OMB's; see `colltune-osu-bench COLLECTIVE -h`.\n";
  return out;
}

ParsedCommand parse_command_line(const std::vector<std::string>& argv) {
  ParsedCommand command;
  const std::string_view program = argv.empty() ? kProgramName : basename_of(argv[0]);
  std::size_t first_option = 1;
  std::string collective_text;
  if (program.starts_with(kOsuPrefix)) {
    collective_text = std::string(program.substr(kOsuPrefix.size()));
  } else {
    if (argv.size() < 2) {
      command.kind = CommandKind::program_error;
      command.error = "missing COLLECTIVE";
      return command;
    }
    if (argv[1] == "-h" || argv[1] == "--help") {
      command.kind = CommandKind::program_help;
      return command;
    }
    collective_text = argv[1];
    first_option = 2;
  }
  const auto collective = parse_collective(collective_text);
  if (!collective || !is_supported(*collective)) {
    command.kind = CommandKind::program_error;
    command.error = "unsupported collective '" + collective_text + "'";
    return command;
  }
  command.options.collective = *collective;
  command.options.benchmark_name = std::string(kOsuPrefix) + collective_text;
  return parse_options(argv, first_option, std::move(command));
}

std::vector<SizeStep> message_sizes(const BenchOptions& options, std::int64_t max_size) {
  std::vector<SizeStep> steps;
  if (!has_message_size(options.collective)) return steps;
  if (!options.type && uses_float_default(options.collective)) {
    constexpr std::int64_t kFloat = sizeof(float);
    for (std::int64_t count = std::max<std::int64_t>(1, options.min_size / kFloat);
         count * kFloat <= max_size; count *= 2)
      steps.push_back({count * kFloat, count, count > kLargeMessageSize});
    return steps;
  }
  const std::int64_t element = type_size(effective_type(options));
  for (std::int64_t bytes = options.min_size; bytes <= max_size; bytes *= 2) {
    if (bytes < element) continue;
    steps.push_back({bytes, bytes / element, bytes > kLargeMessageSize});
  }
  return steps;
}

std::vector<int> reduce_scatter_counts(int count, int comm_size) {
  std::vector<int> counts(static_cast<std::size_t>(std::max(comm_size, 0)), 0);
  if (comm_size <= 0) return counts;
  const int portion = count / comm_size;
  const int remainder = count % comm_size;
  for (int i = 0; i < comm_size; ++i) {
    int& n = counts[static_cast<std::size_t>(i)];
    n = count < comm_size ? (i < count ? 1 : 0) : portion + (i < remainder ? 1 : 0);
  }
  return counts;
}

MemoryCap apply_memory_limit(const BenchOptions& options, int comm_size) {
  MemoryCap cap{options.max_size, std::nullopt};
  if (!has_message_size(options.collective)) return cap;
  const std::int64_t ranks = std::max(comm_size, 1);
  const std::int64_t limit =
      is_gather_like(options.collective) ? options.mem_limit / ranks : options.mem_limit;
  if (options.max_size <= limit) return cap;
  char text[256];
  std::snprintf(text, sizeof text,
                "Warning! Increase the Max Memory Limit to be able to run up to %lld bytes.\n"
                "Continuing with max message size of %lld bytes\n",
                static_cast<long long>(options.max_size), static_cast<long long>(limit));
  cap.max_size = limit;
  cap.warning = text;
  return cap;
}

}  // namespace colltune::osu_bench
