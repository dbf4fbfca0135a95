#include "cli/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "campaign/campaign_states.h"
#include "rules/rules_writer.h"

namespace colltune {
namespace {

using json = nlohmann::json;

// A number of the report, or nothing when the field is absent, null, not finite (or, for a
// latency on a log axis, not positive).
std::optional<double> number(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nullopt;
  const double v = j.at(key).get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> positive(std::optional<double> v) { return v && *v > 0 ? v : std::nullopt; }

// [low, high] of a "..._us_range" field.
std::optional<std::pair<double, double>> range(const json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_array() || j.at(key).size() != 2) return std::nullopt;
  const auto& a = j.at(key);
  if (!a[0].is_number() || !a[1].is_number()) return std::nullopt;
  const double lo = a[0].get<double>(), hi = a[1].get<double>();
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo <= 0 || hi < lo) return std::nullopt;
  return std::pair{lo, hi};
}

// A tie: the default kept, or an interval that does not exclude 1 (older reports: the default
// within the search's noise).
bool is_tie(const json& r) {
  if (r.contains("tie") && r.at("tie").is_boolean()) return r.at("tie").get<bool>();
  return r.contains("default_within_noise") && r.at("default_within_noise").is_boolean() &&
         r.at("default_within_noise").get<bool>();
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Coordinates: one decimal is finer than a pixel.
std::string px(double v) { return fmt("%.1f", v); }
// Values in data-* attributes: enough digits to compare with the JSON.
std::string exact(double v) { return fmt("%.10g", v); }

std::string us(std::optional<double> v) {
  if (!v) return "–";
  if (*v >= 1000) return fmt(*v >= 10000 ? "%.1f ms" : "%.2f ms", *v / 1000);
  return fmt(*v >= 100 ? "%.1f µs" : "%.2f µs", *v);
}

// An axis tick: 0.5 µs, 20 µs, 1 ms.
std::string tick_us(double v) { return v >= 1000 ? fmt("%g ms", v / 1000) : fmt("%g µs", v); }

std::string text_of(const json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object() || !j.contains(key)) return fallback;
  const auto& v = j.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return fallback;
  return v.dump();
}

std::string attr(const char* name, const std::string& value) {
  return std::string(" ") + name + "=\"" + html_escape(value) + "\"";
}

// The chosen configuration as a label: "binomial seg 8 KiB", "default".
std::string config_label(const json& r) {
  const json best = r.value("best", json::object());
  const int algorithm = best.value("algorithm", 0);
  std::string label = algorithm == 0 ? "default" : text_of(r, "best_name", "?");
  if (algorithm != 0) {
    label += " (" + std::to_string(algorithm) + ")";
    if (best.value("segsize", 0) > 0) label += " seg " + human_bytes(best.value("segsize", 0));
    if (best.value("fanout", 0) > 0) label += " fan " + std::to_string(best.value("fanout", 0));
  }
  return label;
}

// Colours of algorithm ids in the strip (0, the default, is grey).
const char* algorithm_colour(int algorithm) {
  static constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948",
                                             "#76b7b2", "#ff9da7", "#9c755f", "#e15759", "#bab0ac"};
  // The dashboard's charts/latency.ts uses the same colours.
  if (algorithm <= 0) return "#d0d0d0";
  return kColours[(algorithm - 1) % 10];
}

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2330;margin:0;background:#f6f7f9}
main{max-width:1060px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 8px}
.muted{color:#5b6475}.card{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:16px 18px;margin:16px 0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}
dl.facts dt{color:#5b6475}dl.facts dd{margin:0;font-variant-numeric:tabular-nums}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums;margin-top:8px}
th,td{padding:3px 8px;border-bottom:1px solid #eceef2;text-align:left;white-space:nowrap}
td.num,th.num{text-align:right}.tie{color:#5b6475}.gain{color:#1a7f37;font-weight:600}.loss{color:#b42318}
svg.latency-chart,svg.speedup-chart{display:block;width:100%;height:auto;background:#fff}
.one{stroke:#5b6475;stroke-width:1;stroke-dasharray:4 3}.whisker{stroke:#1d4ed8;stroke-width:2;stroke-opacity:.45}
.pt-gain{fill:#1a7f37}.pt-tie{fill:#8a93a3}
svg text{font:11px system-ui,sans-serif;fill:#3b4352}
.grid{stroke:#eceef2;stroke-width:1}.axis{stroke:#8a93a3;stroke-width:1}
.line-default{fill:none;stroke:#c2410c;stroke-width:2;stroke-dasharray:6 4}
.line-tuned{fill:none;stroke:#1d4ed8;stroke-width:2}
.band-default{fill:#c2410c;fill-opacity:.16;stroke:none}.band-tuned{fill:#1d4ed8;fill-opacity:.18;stroke:none}
.pt-default{fill:#c2410c}.pt-tuned{fill:#1d4ed8}
.algo-range{stroke:#fff;stroke-width:1}
.legend{display:flex;gap:18px;flex-wrap:wrap;margin:6px 0 0;color:#3b4352}
.swatch{display:inline-block;width:22px;height:10px;vertical-align:middle;margin-right:6px;border-radius:2px}
.error-text{color:#b42318}footer{color:#5b6475;font-size:12px;margin:24px 0}
table.cluster-map td.cell{text-align:center;min-width:22px;padding:3px 4px;color:#1d2330}
table.cluster-map td.predicted{font-style:italic;background-image:repeating-linear-gradient(45deg,rgba(255,255,255,.6) 0 3px,transparent 3px 7px)}
table.cluster-map td.not_run{color:#8a93a3;background-image:repeating-linear-gradient(45deg,#eceef2 0 3px,transparent 3px 7px)}
)";

// One (collective, comm size) chart: latency vs message size, both axes logarithmic.
class LatencyChart {
 public:
  explicit LatencyChart(const std::vector<const json*>& rows) : rows_(rows) {
    for (const json* r : rows_) {
      const double s = std::max<double>(1, r->value("msg_size", std::int64_t{1}));
      xmin_ = std::min(xmin_, s);
      xmax_ = std::max(xmax_, s);
      for (auto v : {positive(number(*r, "default_us")), positive(number(*r, "best_us"))})
        if (v) take_y(*v);
      for (const char* key : {"default_us_range", "best_us_range"})
        if (auto rg = range(*r, key)) {
          take_y(rg->first);
          take_y(rg->second);
        }
    }
    if (xmin_ > xmax_) xmin_ = xmax_ = 1;
    if (ymin_ > ymax_) ymin_ = ymax_ = 1;
    // A little room above and below; at least a factor 10 of latency on the axis.
    ylo_ = std::log10(ymin_) - 0.05;
    yhi_ = std::log10(ymax_) + 0.05;
    if (yhi_ - ylo_ < 1) {
      const double mid = (yhi_ + ylo_) / 2;
      ylo_ = mid - 0.5;
      yhi_ = mid + 0.5;
    }
    xlo_ = std::log2(xmin_) - 0.5;
    xhi_ = std::log2(xmax_) + 0.5;
  }

  std::string svg(const std::string& label) const {
    std::string out = "<svg class=\"latency-chart\" width=\"" + std::to_string(kWidth) +
                      "\" height=\"" + std::to_string(kHeight) + "\" viewBox=\"0 0 " +
                      std::to_string(kWidth) + " " + std::to_string(kHeight) + "\" role=\"img\"" +
                      attr("aria-label", label) + ">";
    out += "<title>" + html_escape(label) + "</title>";
    out += y_axis() + x_axis();
    out += bands("default_us_range", "band-default") + bands("best_us_range", "band-tuned");
    // The default last: dashed over the tuned line where the file keeps the default.
    out += line("best_us", "line-tuned") + points("best_us", "pt-tuned", "tuned");
    out += line("default_us", "line-default") + points("default_us", "pt-default", "default");
    out += strip();
    out += "</svg>";
    return out;
  }

  // Speed-up (default / tuned) per size on a linear axis under the same message-size axis: a
  // point per size, a whisker over its 95 % interval where the report has one, a line at 1x.
  std::string speedup_svg(const std::string& label) const {
    double lo = 0.9, hi = 1.1;
    for (const json* r : rows_)
      for (const char* key : {"speedup", "speedup_low", "speedup_high"})
        if (auto v = number(*r, key)) {
          lo = std::min(lo, *v);
          hi = std::max(hi, *v);
        }
    lo = std::max(0.0, std::floor(lo * 10 - 0.5) / 10);
    hi = std::ceil(hi * 10 + 0.5) / 10;
    constexpr double top = 10, bottom = 130;
    auto sy = [&](double v) { return bottom - (v - lo) / (hi - lo) * (bottom - top); };
    std::string out = "<svg class=\"speedup-chart\" width=\"" + std::to_string(kWidth) +
                      "\" height=\"150\" viewBox=\"0 0 " + std::to_string(kWidth) +
                      " 150\" role=\"img\"" + attr("aria-label", label) + "><title>" +
                      html_escape(label) + "</title>";
    // 1-2-5 steps, at most 8 labelled lines (a 13x interval on 0.5x steps stacked 26 labels).
    double step = 0.1;
    for (int i = 0; (hi - lo) / step > 8; ++i) step *= i % 3 == 1 ? 2.5 : 2;
    for (double t = std::ceil(lo / step) * step; t <= hi + 1e-9; t += step) {
      out += "<line class=\"grid\" x1=\"" + px(kLeft) + "\" x2=\"" + px(kWidth - kRight) +
             "\" y1=\"" + px(sy(t)) + "\" y2=\"" + px(sy(t)) + "\"/>";
      out += "<text x=\"" + px(kLeft - 6) + "\" y=\"" + px(sy(t) + 4) + "\" text-anchor=\"end\">" +
             fmt("%.2g×", t) + "</text>";
    }
    out += "<line class=\"one\" x1=\"" + px(kLeft) + "\" x2=\"" + px(kWidth - kRight) + "\" y1=\"" +
           px(sy(1)) + "\" y2=\"" + px(sy(1)) + "\"/>";
    out += "<line class=\"axis\" x1=\"" + px(kLeft) + "\" x2=\"" + px(kLeft) + "\" y1=\"" +
           px(top) + "\" y2=\"" + px(bottom) + "\"/>";
    out +=
        "<text x=\"14\" y=\"70\" text-anchor=\"middle\" transform=\"rotate(-90 14 70)\">"
        "speed-up</text>";
    for (const json* r : rows_) {
      const auto s = number(*r, "speedup");
      if (!s) continue;
      const double cx = x(size_of(r));
      const auto l = number(*r, "speedup_low"), h = number(*r, "speedup_high");
      if (l && h)
        out += "<line class=\"whisker\" x1=\"" + px(cx) + "\" x2=\"" + px(cx) + "\" y1=\"" +
               px(sy(*l)) + "\" y2=\"" + px(sy(*h)) + "\"/>";
      const bool tie = is_tie(*r);
      const std::int64_t size = r->value("msg_size", std::int64_t{0});
      out += "<circle class=\"" + std::string(tie ? "pt-tie" : "pt-gain") + "\" r=\"3.5\" cx=\"" +
             px(cx) + "\" cy=\"" + px(sy(*s)) + "\"" + attr("data-msg-size", std::to_string(size)) +
             attr("data-speedup", exact(*s)) + "><title>" +
             html_escape(human_bytes(size) + ": " + fmt("%.2f×", *s) +
                         (l && h ? " (" + fmt("%.2f", *l) + "–" + fmt("%.2f", *h) + ")" : "")) +
             "</title></circle>";
    }
    return out + "</svg>";
  }

 private:
  static constexpr int kWidth = 900, kHeight = 372;
  static constexpr double kLeft = 70, kRight = 20, kTop = 14, kPlotBottom = 270;
  static constexpr double kStripTop = 330, kStripHeight = 26;

  void take_y(double v) {
    ymin_ = std::min(ymin_, v);
    ymax_ = std::max(ymax_, v);
  }
  double size_of(const json* r) const {
    return std::max<double>(1, r->value("msg_size", std::int64_t{1}));
  }
  double x(double size) const {
    return kLeft + (std::log2(size) - xlo_) / (xhi_ - xlo_) * (kWidth - kLeft - kRight);
  }
  double y(double latency) const {
    return kPlotBottom - (std::log10(latency) - ylo_) / (yhi_ - ylo_) * (kPlotBottom - kTop);
  }

  std::string y_axis() const {
    // Ticks at 1, 2, 5 times powers of ten inside the range (1 and 10 only when it is wide).
    std::string out;
    const bool wide = yhi_ - ylo_ > 2.5;
    for (int e = static_cast<int>(std::floor(ylo_)); e <= static_cast<int>(std::ceil(yhi_)); ++e)
      for (double m : {1.0, 2.0, 5.0}) {
        if (wide && m != 1.0) continue;
        const double v = m * std::pow(10.0, e);
        const double l = std::log10(v);
        if (l < ylo_ || l > yhi_) continue;
        const std::string yy = px(y(v));
        out += "<line class=\"grid\" x1=\"" + px(kLeft) + "\" x2=\"" + px(kWidth - kRight) +
               "\" y1=\"" + yy + "\" y2=\"" + yy + "\"/>";
        out += "<text x=\"" + px(kLeft - 6) + "\" y=\"" + px(y(v) + 4) + "\" text-anchor=\"end\">" +
               html_escape(tick_us(v)) + "</text>";
      }
    out += "<line class=\"axis\" x1=\"" + px(kLeft) + "\" x2=\"" + px(kLeft) + "\" y1=\"" +
           px(kTop) + "\" y2=\"" + px(kPlotBottom) + "\"/>";
    out += "<text x=\"14\" y=\"" + px((kTop + kPlotBottom) / 2) +
           "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " + px((kTop + kPlotBottom) / 2) +
           ")\">latency (log)</text>";
    return out;
  }

  std::string x_axis() const {
    std::string out = "<line class=\"axis\" x1=\"" + px(kLeft) + "\" x2=\"" + px(kWidth - kRight) +
                      "\" y1=\"" + px(kPlotBottom) + "\" y2=\"" + px(kPlotBottom) + "\"/>";
    const int first = static_cast<int>(std::ceil(xlo_)), last = static_cast<int>(std::floor(xhi_));
    const int step = last - first > 12 ? 2 : 1;
    for (int e = first; e <= last; e += step) {
      const double s = std::ldexp(1.0, e);
      const std::string xx = px(x(s));
      out += "<line class=\"grid\" x1=\"" + xx + "\" x2=\"" + xx + "\" y1=\"" + px(kTop) +
             "\" y2=\"" + px(kPlotBottom) + "\"/>";
      out += "<text x=\"" + xx + "\" y=\"" + px(kPlotBottom + 15) + "\" text-anchor=\"middle\">" +
             html_escape(human_bytes(static_cast<std::int64_t>(s))) + "</text>";
    }
    out += "<text x=\"" + px((kLeft + kWidth - kRight) / 2) + "\" y=\"" + px(kPlotBottom + 28) +
           "\" text-anchor=\"middle\">message size (log)</text>";
    return out;
  }

  // A polyline through the sizes that have the value; a gap where one lacks it.
  std::string line(const char* key, const char* cls) const {
    std::string d;
    bool pen = false;
    for (const json* r : rows_) {
      const auto v = positive(number(*r, key));
      if (!v) {
        pen = false;
        continue;
      }
      d += (pen ? " L" : (d.empty() ? "M" : " M")) + px(x(size_of(r))) + " " + px(y(*v));
      pen = true;
    }
    if (d.empty()) return "";
    return "<path class=\"" + std::string(cls) + "\" d=\"" + d + "\"/>";
  }

  std::string points(const char* key, const char* cls, const char* what) const {
    std::string out;
    for (const json* r : rows_) {
      const auto v = positive(number(*r, key));
      if (!v) continue;
      const std::int64_t size = r->value("msg_size", std::int64_t{0});
      out += "<circle class=\"" + std::string(cls) + "\" r=\"3\" cx=\"" + px(x(size_of(r))) +
             "\" cy=\"" + px(y(*v)) + "\"" + attr("data-msg-size", std::to_string(size)) +
             attr("data-latency-us", exact(*v)) + "><title>" +
             html_escape(std::string(what) + " " + human_bytes(size) + ": " + us(v)) +
             "</title></circle>";
    }
    return out;
  }

  // The band over [low, high] of each run of consecutive sizes that have a range; a lone size
  // gets a narrow box so that it stays visible.
  std::string bands(const char* key, const char* cls) const {
    std::string out;
    std::vector<std::pair<double, std::pair<double, double>>> segment;
    auto flush = [&] {
      if (segment.empty()) return;
      std::string d;
      if (segment.size() == 1) {
        const auto& [s, lh] = segment.front();
        const double cx = x(s);
        d = "M" + px(cx - 4) + " " + px(y(lh.second)) + " L" + px(cx + 4) + " " + px(y(lh.second)) +
            " L" + px(cx + 4) + " " + px(y(lh.first)) + " L" + px(cx - 4) + " " + px(y(lh.first)) +
            " Z";
      } else {
        for (std::size_t i = 0; i < segment.size(); ++i)
          d += (i ? " L" : "M") + px(x(segment[i].first)) + " " + px(y(segment[i].second.second));
        for (std::size_t i = segment.size(); i-- > 0;)
          d += " L" + px(x(segment[i].first)) + " " + px(y(segment[i].second.first));
        d += " Z";
      }
      out += "<path class=\"" + std::string(cls) + "\" d=\"" + d + "\"/>";
      segment.clear();
    };
    for (const json* r : rows_) {
      if (auto rg = range(*r, key))
        segment.push_back({size_of(r), *rg});
      else
        flush();
    }
    flush();
    return out;
  }

  // The chosen configuration per range of consecutive sizes: a strip of boxes under the chart,
  // each from halfway to the previous size to halfway to the next, named when wide enough.
  std::string strip() const {
    std::string out = "<text x=\"" + px(kLeft) + "\" y=\"" + px(kStripTop - 6) +
                      "\">chosen configuration per message size</text>";
    std::size_t i = 0;
    while (i < rows_.size()) {
      std::size_t j = i;
      const std::string label = config_label(*rows_[i]);
      while (j + 1 < rows_.size() && config_label(*rows_[j + 1]) == label) ++j;
      const double left = i == 0 ? kLeft : (x(size_of(rows_[i - 1])) + x(size_of(rows_[i]))) / 2;
      const double right = j + 1 == rows_.size()
                               ? kWidth - kRight
                               : (x(size_of(rows_[j])) + x(size_of(rows_[j + 1]))) / 2;
      const int algorithm = rows_[i]->value("best", json::object()).value("algorithm", 0);
      const std::int64_t from = rows_[i]->value("msg_size", std::int64_t{0});
      const std::int64_t to = rows_[j]->value("msg_size", std::int64_t{0});
      const std::string span =
          human_bytes(from) + (from == to ? std::string() : " – " + human_bytes(to));
      out += "<g class=\"algo-range\"" + attr("data-algorithm", std::to_string(algorithm)) +
             attr("data-from", std::to_string(from)) + attr("data-to", std::to_string(to)) +
             attr("data-label", label) + "><title>" + html_escape(span + ": " + label) +
             "</title><rect x=\"" + px(left) + "\" y=\"" + px(kStripTop) + "\" width=\"" +
             px(std::max(1.0, right - left)) + "\" height=\"" + px(kStripHeight) + "\" fill=\"" +
             algorithm_colour(algorithm) + "\"/>";
      // About 6 px per character at 11 px.
      if (right - left > 6.0 * static_cast<double>(label.size()) + 8)
        out += "<text x=\"" + px((left + right) / 2) + "\" y=\"" +
               px(kStripTop + kStripHeight / 2 + 4) + "\" text-anchor=\"middle\">" +
               html_escape(label) + "</text>";
      out += "</g>";
      i = j + 1;
    }
    return out;
  }

  const std::vector<const json*>& rows_;
  double xmin_ = 1e300, xmax_ = 0, ymin_ = 1e300, ymax_ = 0;
  double xlo_ = 0, xhi_ = 1, ylo_ = 0, yhi_ = 1;
};

// The colours named (of the strip, or of a whole-cluster map: `what`): one entry per algorithm
// chosen in `rows`.
std::string algorithm_legend(const std::vector<const json*>& rows, const char* what = "strip") {
  std::map<int, std::string> names;
  for (const json* r : rows) {
    const int algorithm = r->value("best", json::object()).value("algorithm", 0);
    names.try_emplace(algorithm, algorithm == 0 ? std::string("Open MPI's default decision")
                                                : text_of(*r, "best_name", "?") + " (" +
                                                      std::to_string(algorithm) + ")");
  }
  std::string out =
      "<p class=\"legend algorithms\"><span class=\"muted\">" + std::string(what) + ":</span>";
  for (const auto& [algorithm, label] : names)
    out += "<span" + attr("data-algorithm", std::to_string(algorithm)) +
           "><span class=\"swatch\" style=\"background:" + algorithm_colour(algorithm) +
           "\"></span>" + html_escape(label) + "</span>";
  return out + "</p>";
}

std::string range_text(const json& r, const char* key) {
  const auto rg = range(r, key);
  if (!rg) return "";
  return fmt("%.3g", rg->first) + "–" + fmt("%.3g", rg->second);
}

std::string results_table(const std::vector<const json*>& rows) {
  std::string out =
      "<table class=\"results\"><thead><tr><th>message size</th><th>chosen</th>"
      "<th class=\"num\">default (runs)</th><th class=\"num\">tuned (runs)</th>"
      "<th class=\"num\">speed-up</th><th class=\"num\">95 % interval</th>"
      "<th class=\"num\">pairs</th><th>from</th></tr></thead><tbody>";
  for (const json* rp : rows) {
    const json& r = *rp;
    const std::int64_t size = r.value("msg_size", std::int64_t{0});
    const auto d = number(r, "default_us"), b = number(r, "best_us"), s = number(r, "speedup");
    const auto lo = number(r, "speedup_low"), hi = number(r, "speedup_high");
    const bool tie = is_tie(r);
    const bool reverted = r.contains("reverted") && r.at("reverted").is_object();
    const char* cls = tie ? "tie" : (s && *s > 1 ? "gain" : (s && *s < 1 ? "loss" : "tie"));
    std::string mark = tie ? " ~" : "";
    if (reverted) mark += " R";
    out +=
        "<tr" + attr("data-msg-size", std::to_string(size)) +
        attr("data-default-us", d ? exact(*d) : "") + attr("data-best-us", b ? exact(*b) : "") +
        attr("data-speedup", s ? exact(*s) : "") + attr("data-speedup-low", lo ? exact(*lo) : "") +
        attr("data-speedup-high", hi ? exact(*hi) : "") + attr("data-tie", tie ? "1" : "0") + ">";
    out += "<td>" + html_escape(human_bytes(size)) + "</td>";
    out += "<td" +
           attr("title",
                reverted ? "reverted to the default: " + text_of(r.at("reverted"), "reason") : "") +
           ">" + html_escape(config_label(r)) + "</td>";
    // The median, then the lowest–highest run in µs (the band of the chart).
    for (const auto& [v, key] : {std::pair{d, "default_us_range"}, std::pair{b, "best_us_range"}}) {
      const std::string spread = range_text(r, key);
      out += "<td class=\"num\">" + html_escape(us(v)) +
             (spread.empty() ? "" : " <span class=\"muted\">" + html_escape(spread) + "</span>") +
             "</td>";
    }
    out += "<td class=\"num " + std::string(cls) + "\">" +
           html_escape((s ? fmt("%.2f×", *s) : "–") + mark) + "</td>";
    out += "<td class=\"num\">" +
           html_escape(lo && hi ? fmt("%.2f", *lo) + " – " + fmt("%.2f", *hi) : "–") + "</td>";
    out += "<td class=\"num\">" + std::to_string(r.value("pairs", 0)) + "</td>";
    out += "<td>" + html_escape(text_of(r, "speedup_source")) + "</td></tr>";
  }
  return out + "</tbody></table>";
}

std::string duration(double seconds) {
  if (seconds < 120) return fmt("%.1f s", seconds);
  if (seconds < 7200) return fmt("%.1f min", seconds / 60);
  return fmt("%.2f h", seconds / 3600);
}

std::string fact(const std::string& term, const std::string& value, const std::string& field) {
  return "<dt>" + html_escape(term) + "</dt><dd" + attr("data-field", field) + ">" +
         html_escape(value) + "</dd>";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  return out;
}

namespace {

// The whole-cluster part (docs/whole-cluster.md), one card per collective: the sizes measured
// (with their layouts) and predicted, the policy above the range, and a map of the choice per
// (comm size, message size) in which a measured cell (the paired test's verdict at that size)
// is drawn apart from a predicted one (the model's pick, striped, with its confidence) and from
// a size the search never reached (the default, hatched). Empty for other campaigns.
std::string cluster_sections(const json& report) {
  if (!report.contains("cluster") || !report.at("cluster").is_array()) return "";
  std::string out;
  for (const auto& c : report.at("cluster")) {
    const std::string coll = text_of(c, "collective", "?");
    std::map<int, std::map<std::int64_t, const json*>> cells;  // comm size -> message size
    std::set<std::int64_t> msg_sizes;
    std::vector<const json*> rows;  // for the legend
    for (const char* part : {"results", "predicted"}) {
      if (!report.contains(part) || !report.at(part).is_array()) continue;
      for (const auto& r : report.at(part)) {  // pointers kept: into `report`, not a copy
        if (text_of(r, "collective") != coll) continue;
        const std::int64_t m = r.value("msg_size", std::int64_t{0});
        cells[r.value("comm_size", 0)][m] = &r;
        msg_sizes.insert(m);
        rows.push_back(&r);
      }
    }
    std::string measured;
    for (const auto& l : c.value("layouts", json::array()))
      measured += (measured.empty() ? "" : ", ") + text_of(l, "comm_size", "?") + " (" +
                  text_of(l, "nodes", "?") + " x " + text_of(l, "ppn", "?") + ")";
    std::string predicted;
    for (const auto& [p, by_size] : cells)
      if (!by_size.empty() && text_of(*by_size.begin()->second, "source") == "predicted")
        predicted += (predicted.empty() ? "" : ", ") + std::to_string(p);
    const std::string top = text_of(c, "max_comm_size", "?");
    out += "<section class=\"card cluster\"" + attr("id", "cluster-" + coll) +
           attr("data-collective", coll) + "><h2>" +
           html_escape(coll + ", whole cluster: 2 to " + top + " ranks") + "</h2>";
    out += "<p>" +
           html_escape("Measured at P = " + measured + " (nodes x ranks per node); " +
                       (predicted.empty() ? "no size predicted" : "predicted at P = " + predicted) +
                       "; above " + top +
                       " ranks: Open MPI's default. Search: " + text_of(c, "strategy", "?") +
                       ", stopped by " + text_of(c, "stop_reason", "?") + ".") +
           "</p>";
    out += "<div class=\"table-wrap\"><table class=\"cluster-map\"><thead><tr><th>ranks</th>";
    for (const std::int64_t m : msg_sizes)
      out += "<th class=\"num\">" + html_escape(human_bytes(m)) + "</th>";
    out += "</tr></thead><tbody>";
    for (const auto& [p, by_size] : cells) {
      out +=
          "<tr" + attr("data-comm-size", std::to_string(p)) + "><th>" + std::to_string(p) + "</th>";
      for (const std::int64_t m : msg_sizes) {
        const auto it = by_size.find(m);
        if (it == by_size.end()) {
          out += "<td></td>";
          continue;
        }
        const json& r = *it->second;
        const std::string source = text_of(r, "source", "measured");
        const int algorithm = r.value("best", json::object()).value("algorithm", 0);
        std::string title = "P=" + std::to_string(p) + ", " + human_bytes(m) + ": " +
                            config_label(r) + ", " + source;
        std::string confidence;
        if (source == "predicted") {
          if (const auto conf = number(r, "confidence")) {
            confidence = exact(*conf);
            title += fmt(", confidence %.2f", *conf);
          }
          if (!text_of(r, "note").empty()) title += " (" + text_of(r, "note") + ")";
        } else if (const auto sp = number(r, "speedup")) {
          title += fmt(", %.2f×", *sp);
        }
        out += "<td class=\"cell " + source + "\"" + attr("data-msg-size", std::to_string(m)) +
               attr("data-source", source) + attr("data-algorithm", std::to_string(algorithm)) +
               attr("data-confidence", confidence) + attr("title", title) +
               " style=\"background-color:" + algorithm_colour(algorithm) + "\">" +
               (algorithm == 0 ? "·" : std::to_string(algorithm)) + "</td>";
      }
      out += "</tr>";
    }
    out += "</tbody></table></div>";
    out += algorithm_legend(rows, "map");
    out += "<p class=\"muted\">" +
           html_escape(
               "Each cell: the algorithm written for that size (· = Open MPI's default "
               "decision). Solid: measured at that size, changed only where the paired "
               "test proved it faster. Striped: predicted (not run at that size), written "
               "only where the model is at least " +
               fmt("%.2f", c.value("min_confidence", 0.8)) +
               " confident that it beats the default and a gain was proven at the "
               "nearest measured size; the cell's tooltip gives the confidence. Hatched: "
               "a listed size the search never reached, left at the default. Rules-file "
               "blocks between these sizes follow the file's lookup (docs/whole-cluster.md).") +
           "</p></section>";
  }
  return out;
}

}  // namespace

std::string render_report_html(const json& report) {
  const json& campaign = report.at("campaign");
  const json& results = report.at("results");
  const json& cost = report.at("cost");
  const std::string name = text_of(campaign, "name", "(unnamed)");
  const std::string id = text_of(campaign, "id", "?");
  const json spec = campaign.value("spec", json::object());

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>" + html_escape("colltune report: " + name + " (#" + id + ")") + "</title>";
  out += "<style>" + std::string(kStyle) + "</style></head><body><main>";

  out += "<header><h1" + attr("data-field", "name") + ">" + html_escape(name) + "</h1>";
  out += "<p class=\"muted\">" +
         html_escape("campaign #" + id + " · " + text_of(campaign, "state", "?") + " · backend " +
                     text_of(spec, "backend", "?") + " · strategy " +
                     (spec.contains("cluster") && spec.at("cluster").is_object()
                          ? text_of(spec.at("cluster"), "strategy", "?") + " (whole cluster)"
                          : text_of(spec, "strategy", "?")) +
                     " · sizes " + text_of(spec, "sizes", "?")) +
         "</p>";
  if (!text_of(campaign, "error").empty())
    out += "<p class=\"error-text\">" + html_escape(text_of(campaign, "error")) + "</p>";
  out += "</header>";

  // The cost.
  const double bench = number(cost, "benchmark_seconds").value_or(0);
  out += "<section class=\"card\" id=\"cost\"><h2>Cost</h2><dl class=\"facts\">";
  out += fact("Jobs", text_of(cost, "jobs", "–"), "jobs");
  out += fact("Benchmark runs", text_of(cost, "runs", "–"), "runs");
  out += fact("Benchmark time", duration(bench), "benchmark-seconds");
  out += fact("Node time",
              number(cost, "node_seconds") ? duration(*number(cost, "node_seconds")) : "–",
              "node-seconds");
  // Where the node time went: the search (what a budget limits), the final phase's paired
  // tests, the rules stage's checks.
  if (cost.contains("by_purpose") && cost.at("by_purpose").is_object() &&
      !cost.at("by_purpose").empty()) {
    std::string parts;
    for (const JobPurpose purpose : kJobPurposes) {
      const char* key = to_string(purpose);
      if (!cost.at("by_purpose").contains(key)) continue;
      const auto seconds = number(cost.at("by_purpose").at(key), "node_seconds");
      if (!seconds) continue;
      parts += (parts.empty() ? "" : " · ") + std::string(purpose_label(purpose)) + " " +
               duration(*seconds);
    }
    if (!parts.empty()) out += fact("Node time by purpose", parts, "node-seconds-by-purpose");
  }
  out +=
      "</dl><p class=\"muted\">Benchmark time sums each run's wall time; node time weights "
      "it by the nodes the run held. A node-second budget limits the search only.</p></section>";

  // The rules file.
  if (report.contains("rules") && report.at("rules").is_object()) {
    const json& rules = report.at("rules");
    out += "<section class=\"card\" id=\"rules\"><h2>Rules file</h2><dl class=\"facts\">";
    out += fact("Version", text_of(rules, "version_id", "–"), "rules-version");
    out += fact("Format", text_of(rules, "format", "–"), "rules-format");
    out += fact("Open MPI loads it", rules.value("loads", false) ? "yes" : "no", "rules-loads");
    out += fact("Verified with the tracer",
                rules.value("verified", false) ? "yes"
                : rules.value("verification_skipped", false)
                    ? "skipped (" + text_of(rules, "reason") + ")"
                    : "no",
                "rules-verified");
    out += "</dl></section>";
  }

  out += cluster_sections(report);

  // Results per (collective, comm size), in the report's order, sizes ascending.
  std::vector<std::pair<std::string, std::vector<const json*>>> groups;
  std::map<std::string, std::size_t> index;
  for (const auto& r : results) {
    const std::string key = text_of(r, "collective", "?") + " P=" + text_of(r, "comm_size", "?");
    auto [it, added] = index.try_emplace(key, groups.size());
    if (added) groups.push_back({key, {}});
    groups[it->second].second.push_back(&r);
  }
  if (groups.empty())
    out +=
        "<section class=\"card\"><p class=\"muted\">No results: no context of this campaign "
        "finished its final phase.</p></section>";
  for (auto& [key, rows] : groups) {
    std::stable_sort(rows.begin(), rows.end(), [](const json* a, const json* b) {
      return a->value("msg_size", std::int64_t{0}) < b->value("msg_size", std::int64_t{0});
    });
    const json& first = *rows.front();
    int nodes = 0;
    for (const auto& c : report.value("contexts", json::array()))
      if (text_of(c, "collective") == text_of(first, "collective") &&
          c.value("comm_size", -1) == first.value("comm_size", -2))
        nodes = c.value("nodes", 0);
    const LatencyChart chart(rows);
    const std::string label = key +
                              ": latency against message size, Open MPI's default and the "
                              "tuned file (log-log)";
    out += "<section class=\"card context\"" +
           attr("data-collective", text_of(first, "collective")) +
           attr("data-comm-size", text_of(first, "comm_size")) + "><h2>" +
           html_escape(text_of(first, "collective") + ", " + text_of(first, "comm_size") +
                       " ranks" + (nodes > 0 ? " on " + std::to_string(nodes) + " node(s)" : "")) +
           "</h2>";
    out += chart.svg(label);
    out += chart.speedup_svg(key +
                             ": speed-up over Open MPI's default per message size, with "
                             "its 95 % interval");
    out +=
        "<p class=\"legend\"><span><span class=\"swatch\" style=\"background:#c2410c\"></span>"
        "Open MPI's default</span><span><span class=\"swatch\" "
        "style=\"background:#1d4ed8\"></span>tuned file</span><span class=\"muted\">lines: "
        "median latency · bands: lowest to highest run</span></p>";
    out += algorithm_legend(rows);
    out += "<div class=\"table-wrap\">" + results_table(rows) + "</div>";
    out += "</section>";
  }

  out += "<footer>Generated by colltune from campaign #" + html_escape(id) +
         ". Speed-up = default latency / tuned latency; its 95 % interval comes from paired runs "
         "(\"from\": remeasure = the file loaded against the default after the campaign, final "
         "= the final phase's pairs). ~ marks a tie (the default is kept, or the interval does "
         "not exclude 1×); R a size reverted to the default.</footer>";
  out += "</main></body></html>\n";
  return out;
}

}  // namespace colltune
