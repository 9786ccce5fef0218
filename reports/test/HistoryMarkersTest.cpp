// The HTML report's history charts mark the change points of each series.
#include "dynqual/reports/Report.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dynqual;
using nlohmann::json;

namespace {

/// Run `i` of a history: one model, latency samples around `ms`, commit c<i>.
store::RunRecord run(int i, double ms) {
  store::RunRecord r;
  r.id = i + 1;
  r.key = "run" + std::to_string(i);
  r.kind = "qualify";
  r.status = store::kRunFinished;
  r.startedAt = "2026-01-01T00:00:00Z";
  r.machine.fingerprint = "machine0fingerprint";
  store::Build b;
  b.revision = "c" + std::to_string(i);
  r.build = b;
  store::CaseRecord c;
  c.model = {"tiny", "hash"};
  c.status = "passed";
  // +-0.5 % around ms, deterministic
  c.samples.push_back(
      {"latency_ms", "ms", {ms * (1 + 0.005 * std::sin(2.4 * i)), ms, ms * (1 - 0.005 * std::sin(1.3 * i))}});
  r.cases.push_back(c);
  return r;
}

json chartData(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  size_t a = html.find(open);
  size_t b = html.find("</script>", a);
  return json::parse(html.substr(a + open.size(), b - a - open.size()));
}

const json* chart(const json& data, const std::string& id) {
  for (const auto& c : data["charts"])
    if (c["id"] == id)
      return &c;
  return nullptr;
}

} // namespace

TEST(HistoryMarkers, StepInTheHistoryGetsOneMarkerAtItsFirstRun) {
  reports::ReportInput in;
  for (int i = 0; i < 24; ++i)
    in.history.push_back(run(i, i < 14 ? 10.0 : 11.0)); // +10 % from run index 14 on
  in.head = in.history.back();
  json data = chartData(reports::renderHtml(in, reports::defaultChartJsPath()));
  const json* c = chart(data, "history:latency_ms");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ((*c)["series"].size(), 2u) << c->dump();
  const json& m = (*c)["series"][1];
  EXPECT_EQ(m["marker"], true);
  EXPECT_NE(m["label"].get<std::string>().find("change points +10.0%"), std::string::npos) << m["label"];
  ASSERT_EQ(m["points"].size(), 24u);
  for (size_t i = 0; i < 24; ++i)
    EXPECT_EQ(m["points"][i].is_null(), i != 14) << i;
  EXPECT_DOUBLE_EQ(m["points"][14].get<double>(), (*c)["series"][0]["points"][14].get<double>());
}

TEST(HistoryMarkers, FlatHistoryHasNoMarker) {
  reports::ReportInput in;
  for (int i = 0; i < 24; ++i)
    in.history.push_back(run(i, 10.0));
  in.head = in.history.back();
  json data = chartData(reports::renderHtml(in, reports::defaultChartJsPath()));
  const json* c = chart(data, "history:latency_ms");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["series"].size(), 1u) << c->dump();
}
