#include "cli/report_file.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "cli/report_html.h"

namespace colltune {

bool is_html_path(std::string_view path) {
  auto ends_with = [&](std::string_view suffix) {
    if (path.size() < suffix.size()) return false;
    for (std::size_t i = 0; i < suffix.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(path[path.size() - suffix.size() + i])) !=
          suffix[i])
        return false;
    return true;
  };
  return ends_with(".html") || ends_with(".htm");
}

std::string report_text_for(std::string_view path, const nlohmann::json& report) {
  return is_html_path(path) ? render_report_html(report) : report.dump(2) + "\n";
}

void write_report_file(const std::string& path, const nlohmann::json& report) {
  const std::string text = report_text_for(path, report);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    if (!out) throw std::runtime_error("cannot write " + path);
    out << text;
    if (!out.flush()) {
      std::remove(tmp.c_str());
      throw std::runtime_error("failed writing " + path);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + ec.message());
  }
}

}  // namespace colltune
