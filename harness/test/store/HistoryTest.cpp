// store::metricHistory: one metric of the finished runs over time, per whole-model case, with the
// filters of `dynqual history`.
#include "StoreTestUtil.h"

#include "dynqual/store/History.h"
#include "dynqual/store/Store.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dynqual::store;

namespace {

/// sampleRun with its whole-model case carrying `latency` samples of model `model`.
RunRecord qualifyRun(const std::string& key, const std::string& at, const std::string& model,
                     const std::vector<double>& latency) {
  RunRecord r = sampleRun("qualify", key, at, {1.0});
  r.cases[0].model = {model, model + "-hash"};
  r.cases[1].model = r.cases[0].model;
  r.cases[0].samples.push_back({"latency_ms", "ms", latency});
  return r;
}

} // namespace

TEST(History, OnePointPerRunAndModelOldestFirst) {
  TempDir dir;
  Store s(dir.path / "h.db");
  s.importRuns({qualifyRun("r2", "2026-01-02T00:00:00Z", "m1", {2, 3}),
                qualifyRun("r1", "2026-01-01T00:00:00Z", "m1", {1, 1.5}),
                qualifyRun("r3", "2026-01-03T00:00:00Z", "m2", {7})});
  HistoryQuery q;
  auto all = metricHistory(s, q);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].runKey, "r1");
  EXPECT_EQ(all[0].values, (std::vector<double>{1, 1.5})); // the whole-model case, not the data set's 1.0
  EXPECT_EQ(all[0].unit, "ms");
  EXPECT_EQ(all[0].revision, "0123456789abcdef0123456789abcdef01234567");
  EXPECT_FALSE(all[0].dirty);
  EXPECT_EQ(all[1].runKey, "r2");
  EXPECT_EQ(all[2].model, "m2");
  q.model = "m1";
  EXPECT_EQ(metricHistory(s, q).size(), 2u);
  q.machine = all[0].machine.substr(0, 6);
  EXPECT_EQ(metricHistory(s, q).size(), 2u);
  q.machine = "zzzz";
  EXPECT_TRUE(metricHistory(s, q).empty());
}

TEST(History, FiltersKindMetricAndUnfinishedRuns) {
  TempDir dir;
  Store s(dir.path / "h.db");
  RunRecord unfinished = qualifyRun("u", "2026-01-04T00:00:00Z", "m1", {9});
  unfinished.status = kRunUnfinished;
  RunRecord other = qualifyRun("o", "2026-01-05T00:00:00Z", "m1", {8});
  other.kind = "run";
  s.importRuns({qualifyRun("r1", "2026-01-01T00:00:00Z", "m1", {1}), unfinished, other});
  HistoryQuery q;
  auto pts = metricHistory(s, q);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0].runKey, "r1");
  q.kinds = {"qualify", "run"};
  EXPECT_EQ(metricHistory(s, q).size(), 2u);
  q.metric = "compile_ms";
  EXPECT_EQ(metricHistory(s, q).size(), 2u);
  q.metric = "no_such_metric";
  EXPECT_TRUE(metricHistory(s, q).empty());
}

TEST(History, NonFiniteSamplesAreLeftOut) {
  TempDir dir;
  Store s(dir.path / "h.db");
  s.importRuns({qualifyRun("r1", "2026-01-01T00:00:00Z", "m1", {NAN, 2.0, INFINITY}),
                qualifyRun("r2", "2026-01-02T00:00:00Z", "m1", {NAN})});
  auto pts = metricHistory(s, {});
  ASSERT_EQ(pts.size(), 1u); // r2 has no finite sample left: no point
  EXPECT_EQ(pts[0].values, (std::vector<double>{2.0}));
}
