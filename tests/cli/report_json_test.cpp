// `colltune report --json`: the machine report of a real (simulated-backend) campaign carries its
// header (schema version, versions, host, ISO-8601 times), every key it emits is documented in
// docs/report.md, and a missing store is an error that creates nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/file_text.h"
#include "core/version.h"
#include "runner/process.h"

namespace colltune {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class ReportJsonTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("colltune-report-json-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const auto r = run_process({COLLTUNE_BINARY, "tune",
                                "--backend",     "sim",
                                "--profile",     "pise",
                                "--np",          "4",
                                "--collectives", "bcast,gather",
                                "--sizes",       "4:256",
                                "--budget",      "6",
                                "--db",          (dir_ / "r.db").string(),
                                "--rules-out",   (dir_ / "r.conf").string(),
                                "--report-out",  (dir_ / "tune-report.json").string()},
                               {.timeout_s = 120});
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static json report_json() {
    const auto r = run_process(
        {COLLTUNE_BINARY, "report", "--db", (dir_ / "r.db").string(), "--json"}, {.timeout_s = 60});
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return json::parse(r.stdout_text);
  }

  static inline fs::path dir_;
};

bool is_iso8601_utc(const json& v) {
  static const std::regex re(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)");
  return v.is_string() && std::regex_match(v.get<std::string>(), re);
}

TEST_F(ReportJsonTest, CarriesSchemaVersionsHostAndIsoTimes) {
  const json report = report_json();
  EXPECT_EQ(report.at("schema_version"), 1);
  EXPECT_EQ(report.at("colltune_version"), std::string(kColltuneVersion));
  EXPECT_EQ(report.at("backend"), "sim");
  EXPECT_TRUE(report.at("ompi_version").is_string()) << report.at("ompi_version");
  EXPECT_FALSE(report.at("ompi_version").get<std::string>().empty());
  EXPECT_TRUE(report.at("host").is_string());
  EXPECT_FALSE(report.at("hosts").empty());
  EXPECT_TRUE(is_iso8601_utc(report.at("created_at"))) << report.at("created_at");
  EXPECT_TRUE(is_iso8601_utc(report.at("finished_at"))) << report.at("finished_at");
  EXPECT_TRUE(is_iso8601_utc(report.at("generated_at"))) << report.at("generated_at");
  EXPECT_LE(report.at("created_at").get<std::string>(),
            report.at("finished_at").get<std::string>());
  EXPECT_EQ(report.at("campaign").at("state"), "done");
  EXPECT_FALSE(report.at("results").empty());
  EXPECT_TRUE(report.at("rules").is_object());
  // `tune --report-out` writes the same document (but for when it was generated).
  std::ifstream in(dir_ / "tune-report.json");
  json written = json::parse(in);
  json again = report;
  written.erase("generated_at");
  again.erase("generated_at");
  EXPECT_EQ(written, again);
}

// Every key of the report, as "section.key" ("" for the top level), except inside the
// campaign's free-form spec.
void collect_keys(const json& j, const std::string& section, std::set<std::string>& out) {
  if (j.is_array()) {
    for (const auto& e : j) collect_keys(e, section, out);
    return;
  }
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    out.insert(section + "." + key);
    if (section == ".campaign" && key == "spec") continue;
    collect_keys(value, section + "." + key, out);
  }
}

TEST_F(ReportJsonTest, EveryKeyIsDocumented) {
  const auto report_md = read_file_text(fs::path(COLLTUNE_SOURCE_DIR) / "docs" / "report.md");
  ASSERT_TRUE(report_md) << "docs/report.md";
  const std::string& doc = *report_md;
  std::set<std::string> keys;
  collect_keys(report_json(), "", keys);
  ASSERT_GT(keys.size(), 40u);
  for (const auto& dotted : keys) {
    const std::string key = dotted.substr(dotted.rfind('.') + 1);
    const bool table_field = std::count(dotted.begin(), dotted.end(), '.') <= 2;
    // Fields of the header and of each section have a table row; deeper ones (best's
    // algorithm, ...) are named in their parent's row.
    if (table_field)
      EXPECT_NE(doc.find("| `" + key + "` |"), std::string::npos)
          << dotted << " has no row in docs/report.md";
    else
      EXPECT_TRUE(std::regex_search(doc, std::regex("\\b" + key + "\\b")))
          << dotted << " is not named in docs/report.md";
  }
}

TEST(ReportCli, MissingStoreIsAnErrorAndCreatesNothing) {
  const fs::path db =
      fs::temp_directory_path() / ("colltune-no-such-" + std::to_string(::getpid()) + ".db");
  fs::remove(db);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{COLLTUNE_BINARY, "report", "--db", db.string(), "--json"},
        std::vector<std::string>{COLLTUNE_BINARY, "export", "landscape", "--db", db.string()}}) {
    const auto r = run_process(args, {.timeout_s = 60});
    EXPECT_EQ(r.exit_code, 1) << args[1];
    EXPECT_NE(r.stderr_text.find("no store at " + db.string()), std::string::npos) << r.stderr_text;
    EXPECT_TRUE(r.stdout_text.empty()) << args[1] << ": " << r.stdout_text;
    EXPECT_FALSE(fs::exists(db)) << args[1] << " created the store";
  }
}

}  // namespace
}  // namespace colltune
