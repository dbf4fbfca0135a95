// Reading a whole (small) file into memory: the one helper for it, so that every caller reports
// an unreadable file in its own words.
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace colltune {

// The bytes of the file at `path`; nullopt when it cannot be opened or read.
inline std::optional<std::string> read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(out).str();
}

}  // namespace colltune
