// Markdown, JSON and HTML rendered from the checked-in import fixture (fixtures/golden).
#include "StoreTestUtil.h"

#include "dynqual/reports/Report.h"
#include "dynqual/store/DbTool.h"
#include "dynqual/store/Store.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

using namespace dynqual;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(DYNQUAL_REPORTS_FIXTURES) / "golden";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Imports the fixture into a fresh store and loads head (run 2) and base (run 1) from it.
reports::ReportInput goldenInput(const fs::path& db) {
  std::istringstream none;
  std::ostringstream log;
  store::dbImport(db, {(kGolden / "import.json").string()}, none, log);
  store::Store s(db);
  reports::ReportInput in;
  in.head = s.loadRun(s.resolveRun("head"));
  in.base = s.loadRun(s.resolveRun("base"));
  in.history = s.history(in.head);
  in.dynqualVersion = "0.0.0-golden";
  return in;
}

} // namespace

TEST(GoldenReport, MarkdownMatchesExpected) {
  TempDir dir;
  reports::ReportInput in = goldenInput(dir.path / "g.db");
  ASSERT_EQ(in.head.id, 2);
  EXPECT_EQ(reports::renderMarkdown(in), slurp(kGolden / "expected.md"));
}

TEST(GoldenReport, JsonCarriesBaseHeadAndChange) {
  TempDir dir;
  auto j = reports::renderJson(goldenInput(dir.path / "g.db"));
  EXPECT_EQ(j["format"], "dynqual-report");
  const auto& qps = j["performance"][0]["qps"];
  EXPECT_EQ(qps["base"], 100.0);
  EXPECT_EQ(qps["head"], 110.0);
  EXPECT_DOUBLE_EQ(qps["change_percent"].get<double>(), 10.0); // (110 - 100) / 100 * 100
  EXPECT_EQ(j["performance"][0]["latency_ms"]["head"], 9.5);   // median of 9, 10, 8, 12
  EXPECT_EQ(j["generation"][0]["gen_tokens"], "32");
  EXPECT_EQ(j["accuracy"][1]["model"], "<script>alert(1)</script> / test_data_set_0"); // JSON escapes by itself
}

TEST(GoldenReport, ScriptModelNameIsEscapedInMarkdownAndHtml) {
  TempDir dir;
  reports::ReportInput in = goldenInput(dir.path / "g.db");
  std::string md = reports::renderMarkdown(in);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  std::string html = reports::renderHtml(in, DYNQUAL_CHARTJS_PATH);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_NE(html.find("<td>&lt;script&gt;alert(1)&lt;/script&gt; / test_data_set_0</td>"), std::string::npos);
  // In the chart data the name is a JSON string with < and > escaped.
  EXPECT_NE(html.find("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"), std::string::npos);
}

TEST(GoldenReport, EscapersCoverMetacharacters) {
  EXPECT_EQ(reports::escapeHtml("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(reports::escapeMarkdown("a|b*c_[d](e)\n<i>"), "a\\|b\\*c\\_\\[d\\](e) &lt;i&gt;");
}

TEST(GoldenReport, UnfinishedRunCarriesWarning) {
  TempDir dir;
  reports::ReportInput in = goldenInput(dir.path / "g.db");
  in.head.status = store::kRunUnfinished;
  EXPECT_NE(reports::renderMarkdown(in).find("**Warning:** Run 2 is unfinished"), std::string::npos);
}

// Failed cases without a comparison (timeout, crash, compile failure, runtime error) are FAIL
// rows with their error in every format; README.md lists the five failing cases.
TEST(GoldenReport, FailedCasesAreRowsInJsonAndHtml) {
  TempDir dir;
  reports::ReportInput in = goldenInput(dir.path / "g.db");
  auto j = reports::renderJson(in);
  EXPECT_EQ(j["failures"], 5);
  std::map<std::string, nlohmann::json> rows;
  for (const auto& a : j["accuracy"])
    rows[a["model"].get<std::string>()] = a;
  ASSERT_TRUE(rows.count("slow_model")) << j["accuracy"].dump();
  EXPECT_EQ(rows["slow_model"]["verdict"], "FAIL (timeout)");
  EXPECT_EQ(rows["slow_model"]["error"], "model process timed out after 4 s");
  EXPECT_TRUE(rows["slow_model"]["total_elements"].is_null());
  EXPECT_EQ(rows["crashy|model"]["verdict"], "FAIL (crash)");
  EXPECT_EQ(rows["broken"]["verdict"], "FAIL (compile)");
  EXPECT_EQ(rows["rt_err / test_data_set_0"]["error"], "out of bounds");
  EXPECT_EQ(rows.count("rt_err"), 0u);        // summarizes its failed data set
  EXPECT_EQ(rows.count("skipped_model"), 0u); // skipped is not failed

  std::string html = reports::renderHtml(in, DYNQUAL_CHARTJS_PATH);
  EXPECT_NE(html.find("<td class=\"num\">FAIL (crash): model process killed by SIGSEGV &lt;core&gt; *dumped*</td>"),
            std::string::npos);
  EXPECT_NE(html.find("Result: FAIL, 5 failing cases"), std::string::npos);
  EXPECT_EQ(html.find("<core>"), std::string::npos);
}

// A run whose only model crashed must not read "No accuracy results".
TEST(GoldenReport, RunWithOnlyACrashIsNotClean) {
  TempDir dir;
  reports::ReportInput in = goldenInput(dir.path / "g.db");
  store::CaseRecord crash;
  crash.model = {"segv_model", "h"};
  crash.status = "FAIL";
  crash.error = "model process killed by SIGSEGV";
  in.head.cases = {crash};
  in.base.reset();
  std::string md = reports::renderMarkdown(in);
  EXPECT_EQ(md.find("No accuracy results"), std::string::npos) << md;
  EXPECT_NE(md.find("| segv\\_model | - | - | - | - | - | **FAIL**: model process killed by SIGSEGV |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**Result: FAIL, 1 failing case (see the accuracy table).**"), std::string::npos) << md;
}
