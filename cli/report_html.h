// The campaign report as one self-contained HTML page: per collective and communicator size, a
// log-log chart of latency against message size for Open MPI's default and the tuned file (lines
// at the medians, bands over the range of the runs behind them), the chosen algorithm per range
// of sizes, a table with the speed-up and its interval per size, and the campaign's cost; for a
// whole-cluster campaign, per collective a map of the choice per (comm size, message size) with
// measured and predicted cells apart.
//
// The page holds everything inline (CSS and SVG): no script, no font, no image, nothing fetched,
// so it can be mailed, archived or opened offline. Every text taken from the report (campaign
// name, algorithm names, errors) is HTML-escaped. docs/report-html.md describes how to read it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace colltune {

// `report` is the JSON of campaign_report(). Fields it lacks are shown as "–", never invented;
// throws nlohmann::json::exception when "campaign", "results" or "cost" is missing.
std::string render_report_html(const nlohmann::json& report);

// `text` with &, <, >, " and ' replaced by their character references (safe in element content
// and in quoted attribute values).
std::string html_escape(std::string_view text);

}  // namespace colltune
