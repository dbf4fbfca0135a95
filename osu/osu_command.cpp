#include "osu/osu_command.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "core/text.h"

namespace colltune {
namespace {

// OMB's BENCHMARK macros ("OSU MPI%s <Name> Latency Test") with the accelerator slot removed.
constexpr std::array<std::pair<Collective, std::string_view>, 12> kTitles{{
    {Collective::allgather, "OSU MPI Allgather Latency Test"},
    {Collective::allgatherv, "OSU MPI Allgatherv Latency Test"},
    {Collective::allreduce, "OSU MPI Allreduce Latency Test"},
    {Collective::alltoall, "OSU MPI All-to-All Personalized Exchange Latency Test"},
    {Collective::alltoallv, "OSU MPI All-to-Allv Personalized Exchange Latency Test"},
    {Collective::barrier, "OSU MPI Barrier Latency Test"},
    {Collective::bcast, "OSU MPI Broadcast Latency Test"},
    {Collective::gather, "OSU MPI Gather Latency Test"},
    {Collective::reduce, "OSU MPI Reduce Latency Test"},
    {Collective::reduce_scatter, "OSU MPI Reduce_scatter Latency Test"},
    {Collective::reduce_scatter_block, "OSU MPI Reduce_scatter_block Latency Test"},
    {Collective::scatter, "OSU MPI Scatter Latency Test"},
}};

constexpr std::string_view kTitlePrefix = "OSU MPI";
// Values OMB substitutes for the "%s" right after "OSU MPI".
constexpr std::array<std::string_view, 3> kAcceleratorTags{"-CUDA", "-OPENACC", "-ROCM"};

// The literal that precedes PACKAGE_VERSION in OMB's HEADER macro.
constexpr std::string_view kVersionMarker = "Latency Test v";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// OMB >= 7 reductions default to MPI_CHAR; `-T mpi_float` restores the 5.x-6.x workload when
// the binary takes it.
bool uses_float_type_option(Collective collective, const OsuCapabilities& capabilities) {
  return is_reduction(collective) && capabilities.major && *capabilities.major >= 7 &&
         capabilities.accepts_type_option();
}

bool is_option_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool is_executable_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // follows symlinks
  return ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<int> detect_omb_major_version(const std::filesystem::path& binary) {
  std::ifstream in(binary, std::ios::binary);
  if (!in) return std::nullopt;
  // Streamed in chunks; `window` carries over a marker whose digits may continue in the next.
  constexpr std::size_t kChunk = 1 << 20;
  constexpr std::size_t kMaxDigits = 6;
  std::string chunk(kChunk, '\0');
  std::string window;
  while (true) {
    in.read(chunk.data(), static_cast<std::streamsize>(kChunk));
    const auto got = static_cast<std::size_t>(in.gcount());
    const bool at_end = got < kChunk || !in;
    window.append(chunk.data(), got);
    std::size_t from = 0;
    std::size_t keep_from = window.size() - std::min(window.size(), kVersionMarker.size() - 1);
    for (std::size_t at; (at = window.find(kVersionMarker, from)) != std::string::npos;
         from = at + 1) {
      std::size_t pos = at + kVersionMarker.size();
      int major = 0;
      std::size_t digits = 0;
      for (; pos < window.size() && is_digit(window[pos]) && digits <= kMaxDigits; ++pos, ++digits)
        major = major * 10 + (window[pos] - '0');
      if (pos == window.size() && !at_end) {  // digits may go on in the next chunk
        keep_from = at;
        break;
      }
      if (digits > 0 && digits <= kMaxDigits) return major;
    }
    if (at_end) return std::nullopt;
    window.erase(0, keep_from);
  }
}

std::optional<std::filesystem::path> find_osu_binary(const std::filesystem::path& osu_dir,
                                                     Collective collective) {
  const std::string file = "osu_" + std::string(name(collective));
  const std::array<std::filesystem::path, 6> candidates{
      osu_dir / file,
      osu_dir / "libexec/osu-micro-benchmarks/mpi/collective" / file,
      osu_dir / "libexec/osu-micro-benchmarks/mpi/collective/blocking" / file,
      osu_dir / "mpi/collective" / file,
      osu_dir / "mpi/collective/blocking" / file,
      osu_dir / "c/mpi/collective/blocking" / file,
  };
  for (const auto& candidate : candidates)
    if (is_executable_file(candidate)) return candidate;
  return std::nullopt;
}

bool OsuCapabilities::accepts_type_option() const {
  if (help_read()) return options.count('T') > 0;
  return major && *major >= 7;
}

OsuCapabilities parse_osu_capabilities(std::string_view help_text, std::string_view version_text) {
  OsuCapabilities caps;
  // Option lines start with blanks then "-X" followed by ',' (long form), a blank or the end.
  // Indented example lines ("  -m 2:128  // ...") also start so: their letter is a known one.
  for (std::string_view line : lines_of(help_text)) {
    if (line.empty() || (line[0] != ' ' && line[0] != '\t')) continue;
    line = trim(line);
    if (line.size() < 2 || line[0] != '-' || !is_option_letter(line[1])) continue;
    if (line.size() > 2 && line[2] != ',' && line[2] != ' ' && line[2] != '\t' && line[2] != '[')
      continue;
    caps.options.insert(line[1]);
  }
  // The version: what follows the last " v" of the header line.
  for (std::string_view line : lines_of(version_text)) {
    line = trim(line);
    if (!line.starts_with("# OSU") && !line.starts_with("OSU")) continue;
    const std::size_t v = line.rfind(" v");
    if (v == std::string_view::npos || v + 2 >= line.size() || !is_digit(line[v + 2])) continue;
    caps.version = std::string(line.substr(v + 2));
    int major = 0;
    std::size_t digits = 0;
    for (std::size_t i = v + 2; i < line.size() && is_digit(line[i]) && digits < 6; ++i, ++digits)
      major = major * 10 + (line[i] - '0');
    caps.major = major;
    break;
  }
  return caps;
}

std::vector<std::string> osu_arguments(const OsuOptions& options,
                                       std::optional<int> omb_major_version) {
  OsuCapabilities caps;
  caps.major = omb_major_version;
  return osu_arguments(options, caps);
}

std::vector<std::string> osu_arguments(const OsuOptions& options,
                                       const OsuCapabilities& capabilities) {
  if (options.iterations < 1) throw std::invalid_argument("OSU iterations (-i) must be >= 1");
  if (options.warmup < 0) throw std::invalid_argument("OSU warm-up (-x) must be >= 0");
  std::vector<std::string> args;
  if (has_message_size(options.collective)) {
    if (options.min_size < 1 || options.max_size < options.min_size)
      throw std::invalid_argument("OSU message sizes need 1 <= min <= max, got " +
                                  std::to_string(options.min_size) + ":" +
                                  std::to_string(options.max_size));
    std::int64_t min_size = options.min_size;
    if (uses_float_type_option(options.collective, capabilities)) {
      // OMB 7 labels each row with the bytes asked for but reduces size/4 floats, so a MIN that
      // is not a multiple of 4 mislabels the first row (-m 6: row "6" reduces 4 bytes). OMB
      // 5.x-6.x and the bundled benchmark count floats (MIN/4, at least 1) and print 4*count;
      // starting OMB 7 at that same multiple of 4 gives the same rows and keys.
      min_size = std::max<std::int64_t>(4, min_size / 4 * 4);
    }
    args.push_back("-m");
    args.push_back(std::to_string(min_size) + ":" + std::to_string(options.max_size));
  }
  args.push_back("-i");
  args.push_back(std::to_string(options.iterations));
  args.push_back("-x");
  args.push_back(std::to_string(options.warmup));
  if (options.full) args.push_back("-f");
  if (uses_float_type_option(options.collective, capabilities)) {
    args.push_back("-T");
    args.push_back("mpi_float");
  }
  return args;
}

std::string_view osu_benchmark_title(Collective collective) {
  for (const auto& [coll, title] : kTitles)
    if (coll == collective) return title;
  return {};
}

std::optional<Collective> collective_from_osu_title(std::string_view benchmark) {
  if (!benchmark.starts_with(kTitlePrefix)) return std::nullopt;
  std::string_view rest = benchmark.substr(kTitlePrefix.size());
  for (std::string_view tag : kAcceleratorTags) {
    if (rest.starts_with(tag)) {
      rest.remove_prefix(tag.size());
      break;
    }
  }
  for (const auto& [coll, title] : kTitles)
    if (title.substr(kTitlePrefix.size()) == rest) return coll;
  return std::nullopt;
}

}  // namespace colltune
