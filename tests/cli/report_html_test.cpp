// The HTML report (cli/report_html.h) of a real campaign on the simulated backend: the page is
// well formed and self-contained (no script, no external reference), every SVG path is finite,
// the numbers it shows are those of the report JSON, and user text is escaped. Also the CLI's
// `report` command and `tune --report-out x.html` writing it. No MPI.
#include "cli/report_html.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "campaign/campaign_engine.h"
#include "campaign/campaign_spec.h"
#include "campaign/campaign_states.h"
#include "campaign/report.h"
#include "campaign/store.h"
#include "cli/report_file.h"
#include "core/algorithm_table.h"
#include "core/file_text.h"
#include "runner/sim_backend.h"
#include "tests/support/process_runner.h"
#include "tests/support/temp_dir.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kHostileName = "<script>alert('x')</script> & \"bcast\" <img src=x onerror=1>";

// A start tag, end tag or comment, with its attributes.
struct Tag {
  std::string name;
  bool end = false;
  bool self_closing = false;
  std::map<std::string, std::string> attrs;
};

std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const auto semi = s.find(';', i);
    const std::string ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp")
      out += '&';
    else if (ent == "lt")
      out += '<';
    else if (ent == "gt")
      out += '>';
    else if (ent == "quot")
      out += '"';
    else if (ent == "#39")
      out += '\'';
    else
      ADD_FAILURE() << "unknown entity &" << ent << ";";
    i = semi;
  }
  return out;
}

// A strict tokenizer for the subset the renderer writes: every '<' opens a tag (so any
// unescaped '<' in text is caught), attributes are name="value", elements nest properly.
std::vector<Tag> parse_html(const std::string& html) {
  std::vector<Tag> tags;
  std::vector<std::string> open;
  static const std::vector<std::string> kVoid = {"meta", "br", "img", "input", "link", "hr"};
  static const std::vector<std::string> kSvgLeaf = {"line", "path", "rect"};
  std::size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    const std::size_t close = html.find('>', i);
    EXPECT_NE(close, std::string::npos) << "unterminated tag at " << i;
    if (close == std::string::npos) break;
    std::string body = html.substr(i + 1, close - i - 1);
    i = close + 1;
    if (body.rfind("!DOCTYPE", 0) == 0) continue;
    Tag tag;
    if (!body.empty() && body[0] == '/') {
      tag.end = true;
      body = body.substr(1);
    }
    if (!body.empty() && body.back() == '/') {
      tag.self_closing = true;
      body.pop_back();
    }
    static const std::regex name_re("^([a-zA-Z][a-zA-Z0-9-]*)");
    std::smatch m;
    EXPECT_TRUE(std::regex_search(body, m, name_re)) << "bad tag <" << body << ">";
    if (m.empty()) continue;
    tag.name = m[1];
    std::string rest = m.suffix();
    static const std::regex attr_re("^\\s+([a-zA-Z:-][a-zA-Z0-9:-]*)=\"([^\"<>]*)\"");
    while (std::regex_search(rest, m, attr_re)) {
      tag.attrs[m[1]] = unescape(m[2]);
      rest = m.suffix();
    }
    EXPECT_TRUE(std::all_of(rest.begin(), rest.end(), [](char c) { return std::isspace(c); }))
        << "unparsed attribute text '" << rest << "' in <" << tag.name << ">";
    const bool is_void = std::find(kVoid.begin(), kVoid.end(), tag.name) != kVoid.end();
    if (tag.end) {
      EXPECT_FALSE(open.empty()) << "</" << tag.name << "> closes nothing";
      if (!open.empty()) {
        EXPECT_EQ(open.back(), tag.name) << "</" << tag.name << "> closes <" << open.back() << ">";
        open.pop_back();
      }
    } else if (!is_void && !tag.self_closing) {
      EXPECT_TRUE(std::find(kSvgLeaf.begin(), kSvgLeaf.end(), tag.name) == kSvgLeaf.end() ||
                  tag.name == "rect")
          << "<" << tag.name << "> left open";
      open.push_back(tag.name);
    }
    tags.push_back(tag);
  }
  EXPECT_TRUE(open.empty()) << "unclosed <" << (open.empty() ? "" : open.back()) << ">";
  return tags;
}

class ReportHtmlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::path(::testing::TempDir()) /
                        ("report-html-" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    db_ = new std::string((*dir_ / "campaign.db").string());
    Store store(*db_);
    SimBackendOptions options;
    options.seed = 5;
    SimBackend backend(options);
    const CampaignSpec spec = parse_campaign_spec(
        {{"name", kHostileName},
         {"backend", "sim"},
         {"contexts", json::array({{{"collective", "bcast"}, {"comm_size", 16}},
                                   {{"collective", "allreduce"}, {"comm_size", 8}}})},
         {"sizes", "4:1M"},
         {"strategy", "bo"},
         {"budget", 24},
         {"seed", 3}});
    const AlgorithmTable table = AlgorithmTable::builtin_4_1();
    id_ = CampaignEngine::create_campaign(store, spec);
    CampaignEngine engine(store, backend, table, nullptr);
    CancelFlag cancel;
    ASSERT_EQ(engine.run(id_, cancel), EngineOutcome::completed) << engine.error();
    report_ = new json(campaign_report(store, id_, table));
    html_ = new std::string(render_report_html(*report_));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete db_;
    delete report_;
    delete html_;
  }

  static fs::path* dir_;
  static std::string* db_;
  static std::int64_t id_;
  static json* report_;
  static std::string* html_;
};

fs::path* ReportHtmlTest::dir_ = nullptr;
std::string* ReportHtmlTest::db_ = nullptr;
std::int64_t ReportHtmlTest::id_ = 0;
json* ReportHtmlTest::report_ = nullptr;
std::string* ReportHtmlTest::html_ = nullptr;

TEST_F(ReportHtmlTest, TheCampaignHasResultsWithSpeedupsAndRanges) {
  // The fixture is a real campaign: some size gains, every result has its runs' range.
  const auto& results = report_->at("results");
  ASSERT_GT(results.size(), 20u);
  bool gain = false;
  for (const auto& r : results) {
    gain = gain || (r.at("speedup").is_number() && r.at("speedup").get<double>() > 1.1);
    ASSERT_TRUE(r.at("default_us_range").is_array()) << r.dump();
    ASSERT_TRUE(r.at("best_us_range").is_array()) << r.dump();
    // The band holds the runs of the configuration whose median is drawn.
    EXPECT_LE(r.at("best_us_range")[0].get<double>(), r.at("best_us_range")[1].get<double>());
  }
  EXPECT_TRUE(gain) << "the simulated campaign found no gain";
  EXPECT_GT(report_->at("cost").at("node_seconds").get<double>(), 0);
}

TEST_F(ReportHtmlTest, IsWellFormedAndSelfContained) {
  const auto tags = parse_html(*html_);
  ASSERT_FALSE(tags.empty());
  EXPECT_EQ(html_->rfind("<!DOCTYPE html>", 0), 0u);
  for (const auto& t : tags) {
    EXPECT_NE(t.name, "script");
    EXPECT_NE(t.name, "link");
    EXPECT_NE(t.name, "img");
    EXPECT_NE(t.name, "iframe");
    for (const auto& [k, v] : t.attrs) {
      EXPECT_TRUE(k != "src" && k != "href" && k != "xlink:href" && k.rfind("on", 0) != 0)
          << "<" << t.name << " " << k << "=...>";
    }
  }
  for (const char* external : {"http:", "https:", "url(", "@import", "//"})
    EXPECT_EQ(html_->find(external), std::string::npos) << external;
}

TEST_F(ReportHtmlTest, OneChartPerContextWithFinitePathsInsideTheViewBox) {
  const auto tags = parse_html(*html_);
  int svgs = 0, speedup_svgs = 0, lines = 0, bands = 0, ranges = 0, speedup_points = 0;
  double width = 0, height = 0;
  static const std::regex number_re("-?[0-9]+(\\.[0-9]+)?");
  for (const auto& t : tags) {
    if (t.end) continue;
    if (t.name == "svg") {
      svgs += t.attrs.at("class") == "latency-chart";
      speedup_svgs += t.attrs.at("class") == "speedup-chart";
      width = std::stod(t.attrs.at("width"));
      height = std::stod(t.attrs.at("height"));
      EXPECT_EQ(t.attrs.at("viewBox"), "0 0 " + t.attrs.at("width") + " " + t.attrs.at("height"));
    }
    if (t.name == "path") {
      const std::string& cls = t.attrs.at("class");
      lines += cls.rfind("line-", 0) == 0;
      bands += cls.rfind("band-", 0) == 0;
      // Only commands and plain decimal numbers (no nan, inf or exponent), inside the box.
      std::string d = t.attrs.at("d");
      EXPECT_TRUE(std::regex_match(d, std::regex("[MLZ0-9. -]+"))) << d;
      for (std::sregex_iterator it(d.begin(), d.end(), number_re), end; it != end; ++it) {
        const double v = std::stod(it->str());
        EXPECT_TRUE(std::isfinite(v));
        EXPECT_GE(v, 0) << d;
        EXPECT_LE(v, std::max(width, height)) << d;
      }
    }
    for (const char* key : {"x", "y", "width", "height", "cx", "cy", "x1", "x2", "y1", "y2"})
      if (t.attrs.count(key) && t.name != "svg") {
        const std::string& v = t.attrs.at(key);
        EXPECT_TRUE(std::regex_match(v, number_re)) << t.name << " " << key << "=" << v;
      }
    if (t.name == "g" && t.attrs.count("class") && t.attrs.at("class") == "algo-range") ++ranges;
    if (t.name == "circle" && t.attrs.count("data-speedup")) {
      ++speedup_points;
      // The speed-up drawn is the report's at that size.
      bool found = false;
      for (const auto& r : report_->at("results"))
        found =
            found ||
            (std::to_string(r.at("msg_size").get<std::int64_t>()) == t.attrs.at("data-msg-size") &&
             r.at("speedup").is_number() &&
             std::fabs(r.at("speedup").get<double>() - std::stod(t.attrs.at("data-speedup"))) <
                 1e-9);
      EXPECT_TRUE(found) << t.attrs.at("data-msg-size") << " " << t.attrs.at("data-speedup");
    }
  }
  EXPECT_EQ(svgs, 2);
  EXPECT_EQ(speedup_svgs, 2);
  EXPECT_EQ(speedup_points, static_cast<int>(report_->at("results").size()));
  EXPECT_EQ(lines, 4);  // default and tuned, per context (no gap: every size has both)
  EXPECT_GE(bands, 4);
  EXPECT_GE(ranges, 2);
}

TEST_F(ReportHtmlTest, ShowsTheReportsNumbers) {
  const auto tags = parse_html(*html_);
  std::map<std::tuple<std::string, int, std::int64_t>, std::map<std::string, std::string>> rows;
  std::string collective;
  int comm_size = 0;
  for (const auto& t : tags) {
    if (t.end) continue;
    if (t.name == "section" && t.attrs.count("data-collective")) {
      collective = t.attrs.at("data-collective");
      comm_size = std::stoi(t.attrs.at("data-comm-size"));
    }
    if (t.name == "tr" && t.attrs.count("data-msg-size"))
      rows[{collective, comm_size, std::stoll(t.attrs.at("data-msg-size"))}] = t.attrs;
  }
  const auto& results = report_->at("results");
  ASSERT_EQ(rows.size(), results.size());
  auto near = [](const std::string& shown, const json& value) {
    if (!value.is_number()) return shown.empty();
    const double v = value.get<double>();
    return std::fabs(std::stod(shown) - v) <= 1e-9 * std::max(1.0, std::fabs(v));
  };
  for (const auto& r : results) {
    const auto key = std::tuple{r.at("collective").get<std::string>(), r.at("comm_size").get<int>(),
                                r.at("msg_size").get<std::int64_t>()};
    ASSERT_TRUE(rows.count(key)) << r.dump();
    const auto& a = rows.at(key);
    EXPECT_TRUE(near(a.at("data-default-us"), r.at("default_us"))) << r.dump();
    EXPECT_TRUE(near(a.at("data-best-us"), r.at("best_us"))) << r.dump();
    EXPECT_TRUE(near(a.at("data-speedup"), r.at("speedup"))) << r.dump();
    EXPECT_TRUE(near(a.at("data-speedup-low"), r.value("speedup_low", json()))) << r.dump();
    EXPECT_TRUE(near(a.at("data-speedup-high"), r.value("speedup_high", json()))) << r.dump();
  }
  // The cost, as the report counts it.
  const auto& cost = report_->at("cost");
  EXPECT_NE(
      html_->find("data-field=\"jobs\">" + std::to_string(cost.at("jobs").get<int>()) + "</dd>"),
      std::string::npos);
  EXPECT_NE(
      html_->find("data-field=\"runs\">" + std::to_string(cost.at("runs").get<int>()) + "</dd>"),
      std::string::npos);
  // Per purpose: the parts add up to the whole, the search apart from the final phase.
  const auto& parts = cost.at("by_purpose");
  ASSERT_TRUE(parts.contains("search") && parts.contains("final")) << cost.dump();
  double node_seconds = 0;
  int runs = 0, jobs = 0;
  for (const auto& [purpose, part] : parts.items()) {
    node_seconds += part.at("node_seconds").get<double>();
    runs += part.at("runs").get<int>();
    jobs += part.at("jobs").get<int>();
  }
  EXPECT_NEAR(node_seconds, cost.at("node_seconds").get<double>(),
              1e-9 * std::max(1.0, node_seconds));
  EXPECT_EQ(runs, cost.at("runs").get<int>());
  EXPECT_EQ(jobs, cost.at("jobs").get<int>());
  const auto by_purpose = html_->find("data-field=\"node-seconds-by-purpose\">search ");
  ASSERT_NE(by_purpose, std::string::npos);
  EXPECT_NE(html_->find(" · final phase ", by_purpose), std::string::npos);
  // Every purpose the campaign ran is named, the rules stage's re-measure included.
  for (const JobPurpose purpose : kJobPurposes)
    if (parts.contains(to_string(purpose))) {
      EXPECT_NE(html_->find(purpose_label(purpose), by_purpose), std::string::npos)
          << to_string(purpose);
    }
}

TEST_F(ReportHtmlTest, EscapesTheCampaignName) {
  EXPECT_EQ(html_->find(kHostileName), std::string::npos);
  EXPECT_EQ(html_->find("<script"), std::string::npos);
  EXPECT_EQ(html_->find("<img"), std::string::npos);
  const std::string escaped = html_escape(kHostileName);
  EXPECT_EQ(escaped,
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;bcast&quot; &lt;img "
            "src=x onerror=1&gt;");
  EXPECT_NE(html_->find("<h1 data-field=\"name\">" + escaped + "</h1>"), std::string::npos);
}

// Runs with the rules file loaded say "default" (algorithm 0) for whatever the file chose: a
// verify run must not widen the default's band. (The first version took every run that was
// not a re-measure, so a verify run of 1 s showed as the default's highest run.)
TEST(ReportRanges, OnlySearchAndFinalRunsMakeTheBands) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("report-ranges-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Store store((dir / "c.db").string());
  SimBackend backend(SimBackendOptions{});
  const CampaignSpec spec =
      parse_campaign_spec({{"backend", "sim"},
                           {"contexts", json::array({{{"collective", "bcast"}, {"comm_size", 8}}})},
                           {"sizes", "4:1K"},
                           {"strategy", "exhaustive"}});
  const AlgorithmTable table = AlgorithmTable::builtin_4_1();
  const auto id = CampaignEngine::create_campaign(store, spec);
  CampaignEngine engine(store, backend, table, nullptr);
  CancelFlag cancel;
  ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
  const auto ctx = store.contexts(id).front();
  const json before = campaign_report(store, id, table);
  // A verify run of the file, recorded as the rules stage records it: config "default".
  const auto job =
      store.create_job(id, ctx.id, "ct-verify-test", "sim", JobPurpose::verify, json::object());
  RunResult run;
  run.tag = "ct-verify-test";
  run.config = TuningConfig::default_decision();
  for (std::int64_t size = 4; size <= 1024; size *= 2) run.rows.push_back({size, 1e6});
  ASSERT_TRUE(store.record_run(job, ctx.id, JobPurpose::verify, run));
  const json after = campaign_report(store, id, table);
  ASSERT_EQ(after.at("results").size(), before.at("results").size());
  for (std::size_t i = 0; i < after.at("results").size(); ++i) {
    const auto& r = after.at("results")[i];
    EXPECT_EQ(r.at("default_us_range"), before.at("results")[i].at("default_us_range")) << r.dump();
    ASSERT_TRUE(r.at("default_us_range").is_array());
    EXPECT_LT(r.at("default_us_range")[1].get<double>(), 1e6);
  }
  fs::remove_all(dir);
}

TEST(ReportHtml, AReportWithoutResultsOrRangesStillRenders) {
  // A campaign that failed before its final phase: no results, no rules, zero cost.
  const json report = {{"campaign",
                        {{"id", 9},
                         {"name", "empty"},
                         {"state", "failed"},
                         {"spec", json::object()},
                         {"error", "backend <down>"}}},
                       {"contexts", json::array()},
                       {"results", json::array()},
                       {"rules", nullptr},
                       {"cost", {{"jobs", 0}, {"runs", 0}, {"benchmark_seconds", 0.0}}}};
  const std::string html = render_report_html(report);
  parse_html(html);
  EXPECT_NE(html.find("No results"), std::string::npos);
  EXPECT_NE(html.find("backend &lt;down&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
}

// A wide interval (1.9-13x, as 3 pairs on a noisy machine give) keeps the speed-up axis
// readable: at most 9 labelled lines, in 1-2-5 steps, none overlapping (120 px of axis).
TEST(ReportHtml, AWideSpeedupIntervalKeepsTheAxisLabelsApart) {
  json results = json::array();
  for (std::int64_t size : {4, 8, 16, 32})
    results.push_back({{"collective", "bcast"},
                       {"comm_size", 4},
                       {"msg_size", size},
                       {"best", {{"algorithm", 2}, {"segsize", 1024}, {"fanout", 3}}},
                       {"best_name", "chain"},
                       {"default_us", 1.35},
                       {"best_us", 0.27},
                       {"speedup", 5.0},
                       {"speedup_low", 1.99},
                       {"speedup_high", 13.14},
                       {"pairs", 3},
                       {"tie", false}});
  const json report = {
      {"campaign", {{"id", 1}, {"name", "wide"}}}, {"results", results}, {"cost", json::object()}};
  const std::string html = render_report_html(report);
  parse_html(html);  // well formed
  const auto chart = html.find("<svg class=\"speedup-chart\"");
  ASSERT_NE(chart, std::string::npos);
  const std::string svg = html.substr(chart, html.find("</svg>", chart) - chart);
  // A tick label: <text x=".." y="Y" text-anchor="end">V×</text>
  const std::regex label(
      "<text x=\"[0-9.]+\" y=\"([0-9.]+)\" text-anchor=\"end\">([0-9.]+)\xC3\x97</text>");
  std::vector<double> ys;
  std::vector<double> values;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label); it != std::sregex_iterator();
       ++it) {
    ys.push_back(std::stod((*it)[1]));
    values.push_back(std::stod((*it)[2]));
  }
  ASSERT_GE(values.size(), 3u) << svg;
  EXPECT_LE(values.size(), 9u) << svg;
  for (std::size_t i = 1; i < ys.size(); ++i) EXPECT_GE(ys[i - 1] - ys[i], 12) << svg;
  const double step = values[1] - values[0];
  EXPECT_TRUE(std::abs(step - 1) < 1e-9 || std::abs(step - 2) < 1e-9 || std::abs(step - 5) < 1e-9)
      << step;
}

// A whole-cluster campaign (sim, bcast measured at 2, 4 and 8 ranks, predicted up to 12): one
// card with the map of every (comm size, message size), measured cells apart from predicted
// ones, each cell saying what the report says.
TEST(ReportHtml, AWholeClusterCampaignShowsItsMapOfMeasuredAndPredictedSizes) {
  const testing::TempDir scratch("colltune-report-html-cluster");
  Store store((scratch.path() / "c.db").string());
  SimBackendOptions options;
  options.seed = 5;
  SimBackend backend(options);
  json contexts = json::array();
  for (int p : {2, 4, 8}) contexts.push_back({{"collective", "bcast"}, {"comm_size", p}});
  const CampaignSpec spec =
      parse_campaign_spec({{"backend", "sim"},
                           {"contexts", contexts},
                           {"sizes", "4:16K"},
                           {"budget", 8},
                           {"batch_size", 4},
                           {"final_repeats", 2},
                           {"seed", 3},
                           {"cluster", {{"strategy", "bo-cluster"}, {"predict_up_to", 12}}}});
  const AlgorithmTable table = AlgorithmTable::builtin_4_1();
  const auto id = CampaignEngine::create_campaign(store, spec);
  CampaignEngine engine(store, backend, table, nullptr);
  CancelFlag cancel;
  ASSERT_EQ(engine.run(id, cancel), EngineOutcome::completed) << engine.error();
  const json report = campaign_report(store, id, table);
  const std::string html = render_report_html(report);
  const auto tags = parse_html(html);

  // What the report says per (comm size, message size): source, algorithm, confidence.
  std::map<std::pair<int, std::int64_t>, const json*> truth;
  for (const char* part : {"results", "predicted"})
    for (const auto& r : report.at(part))
      truth[{r.at("comm_size").get<int>(), r.at("msg_size").get<std::int64_t>()}] = &r;
  ASSERT_FALSE(report.at("predicted").empty());

  int sections = 0, cells = 0, predicted = 0, comm_size = 0;
  for (const auto& t : tags) {
    if (t.end) continue;
    if (t.name == "section" && t.attrs.count("id") && t.attrs.at("id") == "cluster-bcast")
      ++sections;
    if (t.name == "tr" && t.attrs.count("data-comm-size"))
      comm_size = std::stoi(t.attrs.at("data-comm-size"));
    if (t.name != "td" || !t.attrs.count("data-source")) continue;
    ++cells;
    const auto key = std::pair{comm_size, std::stoll(t.attrs.at("data-msg-size"))};
    ASSERT_TRUE(truth.count(key)) << key.first << " " << key.second;
    const json& r = *truth.at(key);
    EXPECT_EQ(t.attrs.at("data-source"), r.value("source", "measured"));
    EXPECT_EQ(std::stoi(t.attrs.at("data-algorithm")), r.at("best").at("algorithm").get<int>());
    if (r.value("source", "") == "predicted") {
      ++predicted;
      EXPECT_NEAR(std::stod(t.attrs.at("data-confidence")), r.at("confidence").get<double>(), 1e-9);
      EXPECT_NE(t.attrs.at("class").find("predicted"), std::string::npos);
    } else {
      EXPECT_EQ(t.attrs.at("data-confidence"), "");
    }
  }
  EXPECT_EQ(sections, 1);
  EXPECT_EQ(cells, static_cast<int>(truth.size()));
  EXPECT_EQ(predicted, static_cast<int>(report.at("predicted").size()));
  EXPECT_NE(html.find("strategy bo-cluster (whole cluster)"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"cluster-map\""), std::string::npos);
  // A campaign of one size has no such card (ReportHtmlTest's fixture is one).
  EXPECT_EQ(
      render_report_html(
          json{{"campaign", {{"id", 1}}}, {"results", json::array()}, {"cost", json::object()}})
          .find("<table class=\"cluster-map\""),
      std::string::npos);
}

TEST(ReportFile, FormatFollowsTheFileName) {
  EXPECT_TRUE(is_html_path("out.html"));
  EXPECT_TRUE(is_html_path("x/REPORT.HTM"));
  EXPECT_FALSE(is_html_path("report.json"));
  EXPECT_FALSE(is_html_path("html"));
}

// The binary: `tune --report-out x.html` and `report -o` write the same page from the store;
// a missing store or campaign is an error that creates nothing.
int run(const std::vector<std::string>& argv, std::string* out = nullptr) {
  const auto r = colltune::testing::run_process(argv, {}, 60);
  if (out) *out = r.out;
  return r.exit_code;
}

TEST(ReportCommand, TuneAndReportWriteTheHtmlPage) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("report-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "t.db").string();
  ASSERT_EQ(run({COLLTUNE_BINARY, "tune",
                 "--backend",     "sim",
                 "--collectives", "bcast",
                 "--np",          "8",
                 "--sizes",       "4:64K",
                 "--strategy",    "bo",
                 "--budget",      "16",
                 "--db",          db,
                 "--rules-out",   (dir / "r.conf").string(),
                 "--report-out",  (dir / "tune.html").string()}),
            0);
  ASSERT_EQ(run({COLLTUNE_BINARY, "report", "--db", db, "--campaign", "1", "-o",
                 (dir / "again.html").string()}),
            0);
  const std::string page = read_file_text(dir / "tune.html").value_or("");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  parse_html(page);
  EXPECT_NE(page.find("class=\"latency-chart\""), std::string::npos);
  EXPECT_EQ(page, read_file_text(dir / "again.html").value_or(""));
  EXPECT_FALSE(fs::exists(dir / "again.html.tmp"));

  std::string json_text;
  ASSERT_EQ(run({COLLTUNE_BINARY, "report", "--db", db, "--campaign", "1", "--format", "json"},
                &json_text),
            0);
  const json report = json::parse(json_text);
  EXPECT_EQ(render_report_html(report), page);

  // Errors: a missing store is not created, an unknown campaign writes nothing, a .json name
  // with --format html is refused.
  EXPECT_NE(run({COLLTUNE_BINARY, "report", "--db", (dir / "missing.db").string(), "--campaign",
                 "1", "-o", (dir / "m.html").string()}),
            0);
  EXPECT_FALSE(fs::exists(dir / "missing.db"));
  EXPECT_NE(run({COLLTUNE_BINARY, "report", "--db", db, "--campaign", "7", "-o",
                 (dir / "m.html").string()}),
            0);
  EXPECT_FALSE(fs::exists(dir / "m.html"));
  EXPECT_NE(run({COLLTUNE_BINARY, "report", "--db", db, "--campaign", "1", "--format", "html", "-o",
                 (dir / "m.json").string()}),
            0);
  EXPECT_FALSE(fs::exists(dir / "m.json"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace colltune
