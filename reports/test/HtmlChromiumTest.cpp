// End to end: a store with two qualify runs plus a merged shard, all three report formats, and
// the HTML page opened in headless Chromium (Debian's chromium, installed by scripts/setup): the
// charts hold the database's points, the page fetched nothing, and the screenshot is not blank.
#include "StoreTestUtil.h"

#include "dynqual/reports/Report.h"
#include "dynqual/store/DbTool.h"
#include "dynqual/store/Store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <optional>
#include <fstream>
#include <set>
#include <sstream>

using namespace dynqual;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p))
      return p;
  return "";
}

/// Runs headless Chromium on `page` with a fresh profile and a network log; extra flags select
/// --dump-dom or --screenshot. Returns the exit status.
int runChromium(const fs::path& work, const fs::path& page, const std::string& extra, const fs::path& stdoutFile) {
  std::string cmd = "timeout 120 " + chromium() +
                    " --headless --no-sandbox --disable-gpu --disable-background-networking"
                    " --disable-component-update --disable-sync --no-first-run --disable-extensions"
                    " --hide-scrollbars --window-size=1400,2600"
                    " --user-data-dir='" +
                    (work / ("profile-" + stdoutFile.stem().string())).string() + "'" + " --log-net-log='" +
                    (work / (stdoutFile.stem().string() + ".netlog.json")).string() + "' " + extra + " 'file://" +
                    page.string() + "' >'" + stdoutFile.string() + "' 2>'" + stdoutFile.string() + ".stderr'";
  return std::system(cmd.c_str());
}

/// URLs the page itself requested, from a Chromium net log: URL_REQUEST_START_JOB events whose
/// initiator is an origin. Chromium's own background requests carry "not an origin".
std::vector<std::string> pageRequests(const fs::path& netlog) {
  json log = json::parse(slurp(netlog));
  int startJob = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].get<int>();
  std::vector<std::string> urls;
  for (const auto& e : log["events"]) {
    if (e.value("type", -1) != startJob || !e.contains("params"))
      continue;
    const auto& p = e["params"];
    if (p.contains("url") && p.value("initiator", "") != "not an origin")
      urls.push_back(p.value("url", "?"));
  }
  return urls;
}

std::string unescapeHtmlText(std::string s) {
  for (auto [from, to] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}}) {
    std::string f = from, t = to;
    for (size_t p = s.find(f); p != std::string::npos; p = s.find(f, p + t.size()))
      s.replace(p, f.size(), t);
  }
  return s;
}

/// Chart values as numbers, null as nullopt (JavaScript prints 3.0 as 3).
std::vector<std::optional<double>> numbers(const json& arr) {
  std::vector<std::optional<double>> out;
  for (const auto& v : arr)
    out.push_back(v.is_null() ? std::nullopt : std::optional<double>(v.get<double>()));
  return out;
}

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb; ///< 3 bytes per pixel
};

uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) |
         uint8_t(s[at + 3]);
}

/// Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes).
Image decodePng(const std::string& png) {
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0)
    throw std::runtime_error("not a PNG file");
  Image img;
  int colourType = -1;
  std::string idat;
  for (size_t pos = 8; pos + 8 <= png.size();) {
    uint32_t len = be32(png, pos);
    std::string type = png.substr(pos + 4, 4);
    if (type == "IHDR") {
      img.width = be32(png, pos + 8);
      img.height = be32(png, pos + 12);
      if (png[pos + 16] != 8 || png[pos + 20] != 0)
        throw std::runtime_error("unsupported PNG: bit depth or interlace");
      colourType = png[pos + 17];
    } else if (type == "IDAT") {
      idat += png.substr(pos + 8, len);
    }
    pos += 12 + len;
  }
  if (colourType != 2 && colourType != 6)
    throw std::runtime_error("unsupported PNG colour type");
  size_t bpp = colourType == 6 ? 4 : 3, stride = img.width * bpp;
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf rawLen = raw.size();
  if (uncompress(raw.data(), &rawLen, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      rawLen != raw.size())
    throw std::runtime_error("PNG image data does not inflate to the expected size");
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  for (uint32_t y = 0; y < img.height; ++y) {
    uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    for (size_t x = 0; x < stride; ++x) {
      int a = x >= bpp ? cur[x - bpp] : 0, b = prev[x], c = x >= bpp ? prev[x - bpp] : 0;
      int pred = 0;
      switch (filter) {
      case 0:
        pred = 0;
        break;
      case 1:
        pred = a;
        break;
      case 2:
        pred = b;
        break;
      case 3:
        pred = (a + b) / 2;
        break;
      case 4: {
        int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        break;
      }
      default:
        throw std::runtime_error("bad PNG filter type");
      }
      cur[x] = uint8_t(in[x] + pred);
    }
    for (uint32_t x = 0; x < img.width; ++x)
      img.rgb.insert(img.rgb.end(), &cur[x * bpp], &cur[x * bpp] + 3);
    prev = cur;
  }
  return img;
}

/// Two qualify runs on machine A (base, head) with their own builds, and one on machine B.
store::RunRecord qualifyRun(const std::string& key, const std::string& started, const std::string& revision,
                            const std::string& cpu, std::vector<double> latencies, int64_t launches) {
  store::RunRecord r = sampleRun("qualify", key, started, latencies);
  r.machine.cpuModel = cpu;
  r.machine.fingerprint = store::machineFingerprint(r.machine);
  r.build->revision = revision;
  r.build->key = store::buildKey(*r.build);
  r.cases[1].counters["kernel_launches"] = launches;
  return r;
}

/// Records a run the way `dynqual qualify` does: header, one transaction per model, finish.
int64_t record(store::Store& s, const store::RunRecord& r) {
  int64_t id = s.beginRun(r);
  for (const auto& c : r.cases)
    s.recordCases(id, {c});
  s.finishRun(id);
  return id;
}

} // namespace

TEST(HtmlReport, ChromiumShowsDatabasePointsWithoutNetwork) {
  ASSERT_FALSE(chromium().empty()) << "chromium not found: run scripts/setup (installs Debian's chromium)";
  TempDir dir;
  fs::path db = dir.path / "main.db", shard = dir.path / "shard.db";
  int64_t baseId, headId;
  {
    store::Store s(db);
    baseId = record(s, qualifyRun("run-a1", "2026-03-01T00:00:00Z", std::string(40, '1'), "CPU A", {4, 2, 3}, 7));
    headId = record(s, qualifyRun("run-a2", "2026-03-03T00:00:00Z", std::string(40, '2'), "CPU A", {1, 2, 3, 10}, 9));
    store::Store sh(shard);
    record(sh, qualifyRun("run-b1", "2026-03-02T00:00:00Z", std::string(40, '3'), "CPU B", {5, 7}, 8));
  }
  std::ostringstream log;
  EXPECT_EQ(store::dbMerge(db, {shard}, log).added, 1);
  EXPECT_EQ(store::dbMerge(db, {shard}, log).added, 0); // merging again adds nothing

  // All three formats through the `dynqual report` code path.
  for (const char* fmt : {"md", "json", "html"}) {
    reports::ReportRequest req;
    req.db = db.string();
    req.run = "latest";
    req.base = std::to_string(baseId);
    req.format = fmt;
    req.output = (dir.path / (std::string("report.") + fmt)).string();
    std::ostringstream unused;
    reports::runReport(req, unused);
  }
  std::string md = slurp(dir.path / "report.md");
  EXPECT_NE(md.find("### Performance Results"), std::string::npos);
  EXPECT_NE(md.find("3.000 → 2.500 (-16.7%)"), std::string::npos) << md; // medians 3 and (2+3)/2; -0.5/3
  EXPECT_NE(md.find(reports::kStickyMarker), std::string::npos);
  json rj = json::parse(slurp(dir.path / "report.json"));
  EXPECT_EQ(rj["run"]["id"], headId);
  EXPECT_EQ(rj["counters"][0]["kernel_launches"]["head"], 9);
  EXPECT_EQ(rj["counters"][0]["kernel_launches"]["base"], 7);

  fs::path page = dir.path / "report.html";
  std::string html = slurp(page);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  ASSERT_EQ(runChromium(dir.path, page, "--dump-dom", dir.path / "dom.html"), 0) << slurp(dir.path / "dom.html.stderr");
  std::string dom = slurp(dir.path / "dom.html");
  size_t a = dom.find("<pre id=\"chart-state\">"), b = dom.find("</pre>", a);
  ASSERT_NE(a, std::string::npos) << "chart state missing from the DOM";
  std::string stateText = unescapeHtmlText(dom.substr(a + 22, b - a - 22));
  ASSERT_FALSE(stateText.empty()) << "the chart script did not run";
  json state = json::parse(stateText);
  EXPECT_EQ(state["resources"], json::array()) << "the page fetched resources";

  std::map<std::string, json> charts;
  for (const auto& c : state["charts"])
    charts[c["id"]] = c;
  // History of latency_ms: one point per finished qualify run up to head, oldest first
  // (a1, b1, a2), one series per machine. Medians: {4,2,3} -> 3, {5,7} -> 6, {1,2,3,10} -> 2.5.
  ASSERT_TRUE(charts.count("history:latency_ms"));
  const json& hist = charts["history:latency_ms"];
  EXPECT_EQ(hist["labels"].size(), 3u);
  ASSERT_EQ(hist["datasets"].size(), 2u);
  std::set<std::vector<std::optional<double>>> seen;
  for (const auto& d : hist["datasets"])
    seen.insert(numbers(d["data"]));
  EXPECT_TRUE(seen.count({3.0, std::nullopt, 2.5})) << hist.dump();
  EXPECT_TRUE(seen.count({std::nullopt, 6.0, std::nullopt})) << hist.dump();

  // Sample distribution of the head run: exactly the samples table's rows, in rep order.
  SQLite::Database raw(db, SQLite::OPEN_READONLY);
  SQLite::Statement q(raw, "SELECT value FROM samples WHERE run_id = ? AND metric = 'latency_ms' ORDER BY rep");
  q.bind(1, headId);
  std::vector<std::pair<double, double>> expectPoints, gotPoints;
  for (int rep = 0; q.executeStep(); ++rep)
    expectPoints.push_back({rep, q.getColumn(0).getDouble()});
  ASSERT_EQ(expectPoints.size(), 4u);
  ASSERT_TRUE(charts.count("distribution:latency_ms"));
  for (const auto& pt : charts["distribution:latency_ms"]["datasets"][0]["data"])
    gotPoints.push_back({pt["x"].get<double>(), pt["y"].get<double>()});
  EXPECT_EQ(gotPoints, expectPoints);

  // Counters over time: kernel_launches per run from the counters table.
  SQLite::Statement k(raw, "SELECT c.value, m.cpu_model FROM counters c JOIN cases cs ON cs.id = c.case_id "
                           "JOIN runs r ON r.id = cs.run_id JOIN machines m ON m.id = r.machine_id "
                           "WHERE c.name = 'kernel_launches' ORDER BY r.started_at");
  std::vector<std::optional<double>> perRun;
  while (k.executeStep())
    perRun.push_back(k.getColumn(1).getString() == "CPU A" ? std::optional<double>(k.getColumn(0).getInt())
                                                           : std::nullopt);
  ASSERT_EQ(perRun.size(), 3u); // 7 (a1), 8 (b1, other machine), 9 (a2)
  ASSERT_TRUE(charts.count("counter:kernel_launches"));
  bool found = false;
  for (const auto& d : charts["counter:kernel_launches"]["datasets"])
    found |= numbers(d["data"]) == perRun;
  EXPECT_TRUE(found) << charts["counter:kernel_launches"].dump();

  // No request left the page (Chromium's own background traffic is not the page's).
  EXPECT_EQ(pageRequests(dir.path / "dom.netlog.json"), std::vector<std::string>{});

  ASSERT_EQ(
      runChromium(dir.path, page, "--screenshot='" + (dir.path / "shot.png").string() + "'", dir.path / "shot.out"), 0)
      << slurp(dir.path / "shot.out.stderr");
  Image img = decodePng(slurp(dir.path / "shot.png"));
  ASSERT_GT(img.width * img.height, 0u);
  std::set<uint32_t> colours;
  size_t chartBlue = 0; // the first series colour, #1f77b4
  for (size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
    uint8_t r = img.rgb[i], g = img.rgb[i + 1], bl = img.rgb[i + 2];
    colours.insert((r << 16) | (g << 8) | bl);
    chartBlue += std::abs(r - 0x1f) < 12 && std::abs(g - 0x77) < 12 && std::abs(bl - 0xb4) < 12;
  }
  EXPECT_GT(colours.size(), 2u) << "the screenshot is blank";
  EXPECT_GT(chartBlue, 100u) << "no chart series was drawn";
}

/// A qualify run of `models` models: model_K (K = 0..) with its whole case (compile_ms) and one data
/// set with latency samples and device counters, except that model_0 has 14 data sets, more than
/// one chart holds (12 series).
store::RunRecord manyModels(int models) {
  store::RunRecord r = sampleRun("qualify", "run-many", "2026-03-05T00:00:00Z", {1, 2, 3});
  store::CaseRecord whole = r.cases[0], ds = r.cases[1];
  r.cases.clear();
  for (int m = 0; m < models; ++m) {
    whole.model = {"model_" + std::to_string(m), "hash" + std::to_string(m)};
    r.cases.push_back(whole);
    for (int d = 0; d < (m == 0 ? 14 : 1); ++d) {
      store::CaseRecord c = ds;
      c.model = whole.model;
      c.dataset = {"test_data_set_" + std::to_string(d), "stored", "", "dh" + std::to_string(m * 100 + d)};
      c.samples = {{"execute_ms", "ms", {1.0 + m, 2.0 + m}}};
      c.counters["kernel_launches"] = 10 + m;
      r.cases.push_back(c);
    }
  }
  return r;
}

// Every chart of a 20-model qualify run shows all 20 models: the charts of one metric together
// hold every model's series, checked in what Chromium drew. Before, each chart kept its first
// 12 series and dropped the rest without a word. A screenshot goes to $DYNQUAL_SCREENSHOT when set.
TEST(HtmlReport, TwentyModelsAllShownInEveryChart) {
  ASSERT_FALSE(chromium().empty()) << "chromium not found: run scripts/setup (installs Debian's chromium)";
  TempDir dir;
  fs::path db = dir.path / "many.db";
  {
    store::Store s(db);
    record(s, manyModels(20));
  }
  reports::ReportRequest req;
  req.db = db.string();
  req.run = "latest";
  req.format = "html";
  req.output = (dir.path / "report.html").string();
  std::ostringstream unused;
  reports::runReport(req, unused);
  fs::path page = dir.path / "report.html";
  ASSERT_EQ(runChromium(dir.path, page, "--dump-dom", dir.path / "dom.html"), 0) << slurp(dir.path / "dom.html.stderr");
  std::string dom = slurp(dir.path / "dom.html");
  size_t a = dom.find("<pre id=\"chart-state\">"), b = dom.find("</pre>", a);
  ASSERT_NE(a, std::string::npos);
  json state = json::parse(unescapeHtmlText(dom.substr(a + 22, b - a - 22)));
  // Charts of one metric share the id before '#'; the models each drew, from the series labels
  // ("model_K / test_data_set_D @ machine" or "model_K @ machine").
  std::map<std::string, std::set<std::string>> modelsDrawn;
  std::map<std::string, size_t> seriesDrawn;
  for (const auto& c : state["charts"]) {
    std::string id = c["id"];
    id = id.substr(0, id.find('#'));
    EXPECT_LE(c["datasets"].size(), 12u) << c["id"];
    for (const auto& d : c["datasets"]) {
      std::string label = d["label"];
      modelsDrawn[id].insert(label.substr(0, label.find_first_of(" ")));
      ++seriesDrawn[id];
    }
  }
  std::set<std::string> all;
  for (int m = 0; m < 20; ++m)
    all.insert("model_" + std::to_string(m));
  for (const char* id : {"history:execute_ms", "history:compile_ms", "counter:kernel_launches", "counter:syncs",
                         "counter:scalar_readbacks", "distribution:execute_ms"}) {
    ASSERT_TRUE(modelsDrawn.count(id)) << id << " missing: " << state.dump().substr(0, 2000);
    EXPECT_EQ(modelsDrawn[id], all) << id;
  }
  // 14 + 19 data sets: every one of the 33 execute_ms series is drawn once.
  EXPECT_EQ(seriesDrawn["history:execute_ms"], 33u);
  EXPECT_EQ(seriesDrawn["history:compile_ms"], 20u);
  // The page says why there are several charts per metric, and each names its models.
  std::string html = slurp(page);
  EXPECT_NE(html.find("at most 12 series"), std::string::npos);
  EXPECT_NE(dom.find("chart 1 of"), std::string::npos);
  const char* shot = std::getenv("DYNQUAL_SCREENSHOT");
  fs::path png = shot && *shot ? fs::path(shot) : dir.path / "many.png";
  if (shot && *shot)
    fs::copy_file(page, png.string() + ".html", fs::copy_options::overwrite_existing);
  ASSERT_EQ(runChromium(dir.path, page, "--screenshot='" + png.string() + "'", dir.path / "many.out"), 0)
      << slurp(dir.path / "many.out.stderr");
  EXPECT_GT(fs::file_size(png), 10000u);
}

// The network check above must be able to fail: a page that fetches is caught.
TEST(HtmlReport, NetworkCheckCatchesAFetchingPage) {
  ASSERT_FALSE(chromium().empty()) << "chromium not found: run scripts/setup (installs Debian's chromium)";
  TempDir dir;
  fs::path page = dir.path / "fetching.html";
  std::ofstream(page) << "<!DOCTYPE html><html><body><img src=\"http://example.invalid/x.png\"></body></html>";
  ASSERT_EQ(runChromium(dir.path, page, "--dump-dom", dir.path / "dom.html"), 0);
  auto urls = pageRequests(dir.path / "dom.netlog.json");
  ASSERT_EQ(urls.size(), 1u);
  EXPECT_EQ(urls[0], "http://example.invalid/x.png");
}
