// The campaign report written to a file, in the format its name asks for: HTML (.html, .htm;
// cli/report_html.h) or JSON (anything else). Used by `colltune report --out` and
// `colltune tune --report-out`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace colltune {

// True when `path` names an HTML file (.html or .htm, any case).
bool is_html_path(std::string_view path);

// `report` (the JSON of campaign_report()) as the text `path` asks for.
std::string report_text_for(std::string_view path, const nlohmann::json& report);

// Writes report_text_for(path, report) to `path` through a temporary file renamed into place, so
// that an existing report is never left half-written. Throws std::runtime_error naming the path.
void write_report_file(const std::string& path, const nlohmann::json& report);

}  // namespace colltune
