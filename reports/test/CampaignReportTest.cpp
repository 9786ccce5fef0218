// The campaign report from a store with two nights: buckets first (new, known, fixed), the
// campaign numbers counted by hand from the fixture, escaping, and the HTML page in headless
// Chromium (its charts hold the store's numbers and the page fetches nothing).
#include "FuzzFixture.h"
#include "StoreTestUtil.h"

#include "dynqual/reports/CampaignReport.h"
#include "dynqual/reports/Report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace dynqual;
namespace fs = std::filesystem;
namespace fx = fuzzfixture;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Night n1: one shard, 4 cases (3 valid), bucket A. Night n2: two shards (one unfinished),
/// 5 cases (4 valid, nodes 2, 4, 9, 12), bucket A again and new bucket B.
fs::path twoNights(const fs::path& dir) {
  fs::path db = dir / "night.db";
  store::Store s(db);
  fx::shard(s, "n1-s0", "n1", "2026-01-01T00:00:00Z", "2026-01-01T00:10:00Z", 600,
            R"({"ms": {"generate": 10, "compile": 30, "run": 60}, "op_counts": {"Slice": 5}})");
  for (int i = 0; i < 4; ++i)
    fx::caseRow(s, "n1-s0", i, 100 + i, i != 3, 6);
  fx::finding(s, "n1-s0", 1, 101, "aaaa000000000001", "Slice", 2, 4, "2026-01-01T00:05:00Z");
  fx::shard(s, "n2-s0", "n2", "2026-01-02T00:00:00Z", "2026-01-02T00:10:00Z", 40,
            R"({"ms": {"generate": 100, "check": 50, "reference": 50, "compile": 300, "run": 400, "minimize": 100},
                "op_counts": {"Slice": 7, "Tile": 2},
                "features": {"copy|strided": 1, "Concat|3+ data inputs": 2, "Pad|present": 0}})");
  fx::shard(s, "n2-s1", "n2", "2026-01-02T00:00:00Z", "", 10,
            R"({"ms": {"generate": 0}, "op_counts": {"Tile": 1, "Pad": 4}})");
  fx::caseRow(s, "n2-s0", 0, 200, true, 2, 1);
  fx::caseRow(s, "n2-s0", 1, 201, true, 4);
  fx::caseRow(s, "n2-s0", 2, 202, false, 30);
  fx::caseRow(s, "n2-s1", 0, 300, true, 9, 1);
  fx::caseRow(s, "n2-s1", 1, 301, true, 12);
  fx::finding(s, "n2-s0", 0, 200, "aaaa000000000001", "Slice", 3, 4, "2026-01-02T00:01:00Z");
  fx::finding(s, "n2-s1", 0, 300, "bbbb000000000002", "Tile", 4, 4, "2026-01-02T00:02:00Z");
  return db;
}

reports::CampaignReportInput load(const fs::path& db, const std::string& night) {
  store::OpenOptions ro;
  ro.mode = store::OpenOptions::Mode::ReadOnly;
  store::Store s(db, ro);
  return reports::loadCampaignReport(s, night);
}

TEST(CampaignReport, MarkdownPutsNewBucketsFirstAndCountsTheNight) {
  TempDir t;
  fs::path db = twoNights(t.path);
  std::string md = reports::renderCampaignMarkdown(load(db, "latest"));
  EXPECT_NE(md.find("# Fuzz campaign, night n2"), std::string::npos) << md;
  EXPECT_NE(md.find("Result: FAIL, 1 new bucket(s) (1 known, 0 fixed); no qualify run."), std::string::npos) << md;
  EXPECT_NE(md.find("1 of 2 shard(s) unfinished"), std::string::npos) << md;
  size_t buckets = md.find("## Buckets"), campaign = md.find("## Campaign"), history = md.find("## History");
  ASSERT_NE(buckets, std::string::npos);
  EXPECT_LT(buckets, campaign);
  EXPECT_LT(campaign, history);
  // The new bucket (B) comes before the known one (A), in the table and in the sections.
  EXPECT_LT(md.find("| new | `bbbb00000000`"), md.find("| known | `aaaa00000000`")) << md;
  EXPECT_LT(md.find("### `bbbb00000000` (new)"), md.find("### `aaaa00000000` (known)")) << md;
  EXPECT_NE(md.find("Reproduce: `dynqual fuzz-case --seed 300`"), std::string::npos) << md;
  EXPECT_NE(md.find("```text\ninput x: float[N0]\nTile_1 = Tile(x) -> y\n"), std::string::npos) << md;
  // 5 cases, 4 valid: 80.00 %; wall 40 + 10 = 50 s, so 5 / 50 = 0.10 cases/s per shard.
  EXPECT_NE(md.find("| 2 | 1 | 5 | 4 | 80.00 % | 0.10 | 50.0 | 2 |"), std::string::npos) << md;
  // Sizes 2, 4, 9, 12 (nearest rank): median = 2nd = 4, p10 = 1st = 2, p90 = 4th = 12.
  EXPECT_NE(md.find("median 4, p10 2, p90 12, max 12"), std::string::npos) << md;
  // Time split: compile 300 of 1000 ms = 30.0 %; ops summed over shards: Slice 7, Pad 4, Tile 3.
  EXPECT_NE(md.find("| compile | 300 | 30.0 % |"), std::string::npos) << md;
  EXPECT_LT(md.find("| Slice | 7 |"), md.find("| Pad | 4 |"));
  EXPECT_LT(md.find("| Pad | 4 |"), md.find("| Tile | 3 |"));
  // Features: only n2-s0 recorded them, and it has 2 valid cases (200, 201): 1 of 2 = 50.0 %,
  // 2 of 2 = 100.0 %, and a tracked feature no case had stays as a 0 row.
  EXPECT_NE(md.find("Of 2 valid cases (the shards that recorded features)."), std::string::npos) << md;
  EXPECT_NE(md.find("| copy | strided | 1 | 50.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Concat | 3+ data inputs | 2 | 100.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Pad | present | 0 | 0.0 |"), std::string::npos) << md;
  // History: n1 then n2; n2 hit 2 buckets of which 1 new.
  EXPECT_NE(md.find("| n1 | 1 | 4 | 3 | 1 | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| n2 | 2 | 5 | 4 | 2 | 1 |"), std::string::npos) << md;
  // The older night alone: A is new there, nothing else existed yet.
  std::string n1 = reports::renderCampaignMarkdown(load(db, "n1"));
  EXPECT_NE(n1.find("| new | `aaaa00000000`"), std::string::npos) << n1;
  EXPECT_EQ(n1.find("| n2 |"), std::string::npos) << n1;
}

TEST(CampaignReport, JsonAndUnknownNight) {
  TempDir t;
  fs::path db = twoNights(t.path);
  auto j = reports::renderCampaignJson(load(db, ""));
  EXPECT_EQ(j["format"], "dynqual-campaign-report");
  EXPECT_EQ(j["result"], "fail");
  EXPECT_EQ(j["buckets"][0]["status"], "new");
  EXPECT_EQ(j["campaign"]["cases"], 5);
  EXPECT_EQ(j["campaign"]["unfinished"], 1);
  // Coverage rows sorted by key: "Concat|...", "Pad|present", "copy|strided" (1 of 2 valid).
  ASSERT_EQ(j["campaign"]["coverage"].size(), 3u);
  EXPECT_EQ(j["campaign"]["coverage"][2]["op"], "copy");
  EXPECT_EQ(j["campaign"]["coverage"][2]["valid_cases"], 1);
  EXPECT_DOUBLE_EQ(j["campaign"]["coverage"][2]["percent"].get<double>(), 50.0);
  EXPECT_THROW(load(db, "n9"), std::runtime_error);
  EXPECT_TRUE(reports::storeHasOnlyCampaigns(db.string()));
}

TEST(CampaignReport, HtmlEscapesAndDrawsInHeadlessChromium) {
  TempDir t;
  fs::path db = twoNights(t.path);
  std::string html = reports::renderCampaignHtml(load(db, ""), DYNQUAL_CHARTJS_PATH);
  // The message "trap <here>" is text, never markup.
  EXPECT_EQ(html.find("<here>"), std::string::npos);
  EXPECT_NE(html.find("trap &lt;here&gt;"), std::string::npos);
  EXPECT_LT(html.find("<h2>Buckets</h2>"), html.find("<h2>Campaign</h2>"));
  std::string chromium;
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p))
      chromium = p;
  ASSERT_FALSE(chromium.empty()) << "chromium not found: run scripts/setup (installs Debian's chromium)";
  fs::path page = t.path / "report.html";
  std::ofstream(page) << html;
  std::string flags = " --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run"
                      " --disable-extensions --hide-scrollbars --window-size=1300,2400 --user-data-dir='" +
                      (t.path / "profile").string() + "' ";
  std::string dom = (t.path / "dom.html").string();
  ASSERT_EQ(std::system(("timeout 120 " + chromium + flags + "--dump-dom 'file://" + page.string() + "' >'" + dom +
                         "' 2>/dev/null")
                            .c_str()),
            0);
  std::string d = slurp(dom);
  size_t a = d.find("<pre id=\"chart-state\">"), b = d.find("</pre>", a);
  ASSERT_NE(a, std::string::npos);
  std::string state = d.substr(a + 22, b - a - 22);
  for (auto [from, to] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}})
    for (size_t p = state.find(from); p != std::string::npos; p = state.find(from, p + 1))
      state.replace(p, std::string(from).size(), to);
  auto j = nlohmann::json::parse(state);
  ASSERT_EQ(j["charts"].size(), 3u) << state;
  // History: nights n1, n2 with 4 and 5 cases; buckets hit 1 and 2.
  EXPECT_EQ(j["charts"][0]["labels"], nlohmann::json::array({"n1", "n2"}));
  EXPECT_EQ(j["charts"][0]["datasets"][0]["data"], nlohmann::json::array({4, 5}));
  EXPECT_EQ(j["charts"][0]["datasets"][1]["data"], nlohmann::json::array({1, 2}));
  // Sizes 2, 4 in bin 1-4 and 9, 12 in bins 9-12 (bin 5-8 empty).
  EXPECT_EQ(j["charts"][1]["labels"], nlohmann::json::array({"1-4", "5-8", "9-12"}));
  EXPECT_EQ(j["charts"][1]["datasets"][0]["data"], nlohmann::json::array({2, 0, 2}));
  EXPECT_EQ(j["resources"], nlohmann::json::array());
  std::string shot = (t.path / "shot.png").string();
  ASSERT_EQ(std::system(("timeout 120 " + chromium + flags + "--screenshot='" + shot + "' 'file://" + page.string() +
                         "' >/dev/null 2>&1")
                            .c_str()),
            0);
  EXPECT_GT(fs::file_size(shot), 10000u) << "screenshot too small to hold the page";
}

/// A qualify run as `dynqual qualify` records it: the model's whole case (data set "") carries
/// the model's status ("pass", "FAIL", "input-error", "skip") and failure line.
store::RunRecord qualifyRun(const std::string& key, const std::string& started,
                            const std::vector<std::pair<std::string, std::string>>& models) {
  store::RunRecord r = sampleRun("qualify", key, started, {1.0, 2.0});
  r.cases.clear();
  for (const auto& [name, status] : models) {
    store::CaseRecord whole;
    whole.model = {name, name + "-hash"};
    whole.status = status;
    if (status != "pass")
      whole.error = "test_data_set_0: output 'y': relative L2 0.5 above the gate 1e-05";
    r.cases.push_back(whole);
  }
  return r;
}

/// One night without a finding and, 30 minutes after its shard started, a qualify run; plus an
/// older failing qualify run from before the night, which must not count.
fs::path nightWithQualify(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& models) {
  fs::path db = dir / "nightly.db";
  store::Store s(db);
  fx::shard(s, "n3-s0", "n3", "2026-01-03T00:00:00Z", "2026-01-03T00:10:00Z", 600,
            R"({"ms": {"generate": 10}, "op_counts": {"Slice": 1}})");
  fx::caseRow(s, "n3-s0", 0, 100, true, 3);
  auto record = [&](const store::RunRecord& r) {
    int64_t id = s.beginRun(r);
    s.recordCases(id, r.cases);
    s.finishRun(id);
  };
  record(qualifyRun("q-old", "2026-01-01T00:30:00Z", {{"old_model", "FAIL"}}));
  record(qualifyRun("q-night", "2026-01-03T00:30:00Z", models));
  return db;
}

// A failing qualify run fails the campaign report (Markdown, JSON and HTML) and names the model,
// even with no new bucket; before, the report read only the fuzz tables and said "pass".
TEST(CampaignReport, FailingQualifyRunFailsTheReportAndNamesTheModel) {
  TempDir t;
  fs::path db = nightWithQualify(t.path, {{"kv_decoder", "pass"}, {"tiny_bert", "FAIL"}, {"shape_ops", "pass"}});
  auto in = load(db, "latest");
  ASSERT_TRUE(in.qualify.has_value());
  std::string md = reports::renderCampaignMarkdown(in);
  EXPECT_NE(md.find("Result: FAIL, no new bucket (0 known, 0 fixed); qualify: 1 of 3 models failed (tiny_bert)."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `tiny_bert` | FAIL | test\\_data\\_set\\_0: output 'y'"), std::string::npos) << md;
  EXPECT_EQ(md.find("old_model"), std::string::npos) << "a qualify run from before the night counted:\n" << md;
  auto j = reports::renderCampaignJson(in);
  EXPECT_EQ(j["result"], "fail");
  EXPECT_EQ(j["qualify"]["failed"], 1);
  EXPECT_EQ(j["qualify"]["failures"][0]["model"], "tiny_bert");
  std::string html = reports::renderCampaignHtml(in, DYNQUAL_CHARTJS_PATH);
  EXPECT_NE(html.find("<p class=\"result-fail\">Result: FAIL, no new bucket"), std::string::npos);
  EXPECT_NE(html.find("<td>tiny_bert</td><td>FAIL</td>"), std::string::npos);
  // Through `dynqual report --campaign` as ci/nightly calls it.
  reports::CampaignReportRequest req;
  req.db = db.string();
  req.night = "n3";
  req.output = (t.path / "report.md").string();
  std::ostringstream unused;
  reports::runCampaignReport(req, unused);
  EXPECT_NE(slurp(t.path / "report.md").find("models failed (tiny_bert)"), std::string::npos);
}

TEST(CampaignReport, QualifyInputErrorsAndPassingRuns) {
  TempDir t;
  {
    fs::path db = nightWithQualify(t.path, {{"kv_decoder", "input-error"}, {"conv", "skip"}, {"tiny_bert", "pass"}});
    std::string md = reports::renderCampaignMarkdown(load(db, "n3"));
    EXPECT_NE(md.find("qualify: 1 of 2 models failed (kv_decoder (input error))."), std::string::npos) << md;
    EXPECT_NE(md.find("3 models, 1 passed, 0 failed, 1 input error(s), 1 skipped"), std::string::npos) << md;
  }
  TempDir t2;
  fs::path db = nightWithQualify(t2.path, {{"kv_decoder", "pass"}, {"tiny_bert", "pass"}});
  std::string md = reports::renderCampaignMarkdown(load(db, "n3"));
  EXPECT_NE(md.find("Result: pass, no new bucket (0 known, 0 fixed); qualify: 2 of 2 models passed."),
            std::string::npos)
      << md;
}

} // namespace
