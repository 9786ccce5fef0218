// The bisection's search on scripted ranges: each revision has a known speed per model, and the
// scripted A/B returns the verdict the gate's rule gives for the true ratio (margin 2 %), so every
// expected culprit below is the index where the script puts the change.
#include "dynqual/bisect/Bisection.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <set>

using namespace dynqual::bisect;
using dynqual::stats::Verdict;

namespace {

struct Script {
  size_t n = 16;
  /// Speed factor of revision i for model m (1 = as fast as --good).
  std::function<double(size_t i, const std::string& m)> speed = [](size_t, const std::string&) { return 1.0; };
  std::set<size_t> broken;       ///< revisions that do not build
  std::set<size_t> unmeasurable; ///< revisions whose comparison reports an error
  std::set<size_t> inconclusive; ///< heads whose comparison is inconclusive (estimate still true)
  std::vector<size_t> builds;
  int measures = 0;

  std::vector<Revision> revisions() const {
    std::vector<Revision> r;
    for (size_t i = 0; i < n; ++i)
      r.push_back({std::string(40, static_cast<char>('a' + i % 6)), "commit " + std::to_string(i)});
    return r;
  }
  Outcome run(const std::vector<std::string>& models, Options opt = {}) {
    return runBisection(
        revisions(), models,
        [&](size_t i) -> std::string {
          builds.push_back(i);
          return broken.count(i) ? "build exited with status 1; log: /tmp/x.log" : "";
        },
        [&](size_t base, size_t head, const std::vector<std::string>& ms) {
          ++measures;
          Measured m;
          if (unmeasurable.count(head)) {
            m.error = "head: accuracy check failed";
            return m;
          }
          m.rounds = 12;
          m.processRuns = 48 * static_cast<int>(ms.size());
          for (const auto& model : ms) {
            ModelChange c;
            c.model = model;
            c.metric = "cpu_time_ms";
            c.ratio = speed(head, model) / speed(base, model);
            c.ciLow = c.ratio - 0.01;
            c.ciHigh = c.ratio + 0.01;
            c.rounds = 12;
            c.verdict = inconclusive.count(head) ? Verdict::Inconclusive
                        : c.ratio > 1.02         ? Verdict::Regression
                        : c.ratio < 0.98         ? Verdict::Improvement
                                                 : Verdict::NoChange;
            m.changes.push_back(c);
          }
          return m;
        },
        opt);
  }
};

/// Model "a" 5 % slower from revision k on.
Script slowAt(size_t k) {
  Script s;
  s.speed = [k](size_t i, const std::string& m) { return m == "a" && i >= k ? 1.05 : 1.0; };
  return s;
}

int probes(const Outcome& o) {
  int n = 0;
  for (const auto& s : o.steps)
    n += s.kind == Step::Kind::Probe;
  return n;
}

} // namespace

TEST(Bisection, FindsEveryCulpritOfSixteenCommitsInAtMostFourProbes) {
  for (size_t k = 1; k < 16; ++k) {
    Script s = slowAt(k);
    Outcome o = s.run({"a", "b"});
    ASSERT_EQ(o.exitCode, kLocated) << "k=" << k << ": " << o.summary;
    ASSERT_EQ(o.tracks.size(), 1u) << o.summary;
    EXPECT_EQ(o.tracks[0].bad, k) << o.summary;
    EXPECT_EQ(o.tracks[0].good, k - 1) << o.summary;
    EXPECT_TRUE(o.tracks[0].confirmed);
    // 14 revisions strictly between the endpoints: ceil(log2(15)) = 4 probes at most.
    EXPECT_LE(probes(o), 4) << "k=" << k;
    // Endpoints, probes, one verification.
    EXPECT_EQ(s.measures, 2 + probes(o));
    EXPECT_NE(o.summary.find("a slower at"), std::string::npos) << o.summary;
  }
}

TEST(Bisection, ProbesMeasureOnlyTheTrackedModel) {
  Script s = slowAt(9);
  Outcome o = s.run({"a", "b"});
  ASSERT_EQ(o.exitCode, kLocated);
  for (const auto& st : o.steps)
    if (st.kind != Step::Kind::Endpoints)
      EXPECT_EQ(st.models, std::vector<std::string>{"a"});
}

TEST(Bisection, NoChangeExitsInconclusiveWithoutACulprit) {
  Script s;
  Outcome o = s.run({"a"});
  EXPECT_EQ(o.exitCode, kInconclusive);
  EXPECT_TRUE(o.tracks.empty());
  EXPECT_EQ(s.measures, 1);
  EXPECT_NE(o.summary.find("no regression between the endpoints"), std::string::npos) << o.summary;
  EXPECT_NE(o.summary.find("a no-change +0.0%"), std::string::npos) << o.summary;
}

TEST(Bisection, ASpeedUpAloneIsNotARegression) {
  Script s;
  s.speed = [](size_t i, const std::string&) { return i >= 5 ? 0.95 : 1.0; };
  Outcome o = s.run({"a"});
  EXPECT_EQ(o.exitCode, kInconclusive);
  EXPECT_NE(o.summary.find("a improvement -5.0%"), std::string::npos) << o.summary;
}

TEST(Bisection, ASlowdownAndASpeedUpOfAnotherModelAreBothLocated) {
  Script s;
  // a: 5 % slower from 11 on; b: 5 % faster from 4 on.
  s.speed = [](size_t i, const std::string& m) {
    if (m == "a")
      return i >= 11 ? 1.05 : 1.0;
    return i >= 4 ? 0.95 : 1.0;
  };
  Outcome o = s.run({"a", "b"});
  ASSERT_EQ(o.exitCode, kLocated) << o.summary;
  ASSERT_EQ(o.tracks.size(), 2u);
  EXPECT_EQ(o.tracks[0].model, "a");
  EXPECT_EQ(o.tracks[0].direction, Verdict::Regression);
  EXPECT_EQ(o.tracks[0].bad, 11u);
  EXPECT_EQ(o.tracks[1].model, "b");
  EXPECT_EQ(o.tracks[1].direction, Verdict::Improvement);
  EXPECT_EQ(o.tracks[1].bad, 4u);
  EXPECT_NE(o.summary.find("the range holds 2 changes"), std::string::npos) << o.summary;
  // The first probe (7 or 8) serves both tracks: fewer probes than two bisections (4 + 4).
  EXPECT_LT(probes(o), 8);
}

TEST(Bisection, TwoSlowdownsOfOneModelFindTheFirstAndSayTheRangeHoldsMore) {
  Script s;
  // a: 5 % slower from 3, 10 % slower from 12 on, so the endpoints see +10 % [+9, +11]; every
  // probe from 3 on is a regression, so the search ends on 3, whose own change +5 % [+4, +6]
  // leaves the endpoints' interval: the summary says the range holds more.
  s.speed = [](size_t i, const std::string& m) { return m == "a" ? (i >= 12 ? 1.10 : i >= 3 ? 1.05 : 1.0) : 1.0; };
  Outcome o = s.run({"a"});
  ASSERT_EQ(o.tracks.size(), 1u);
  EXPECT_EQ(o.tracks[0].bad, 3u) << o.summary;
  EXPECT_NE(o.summary.find("the range holds more than one change of a"), std::string::npos) << o.summary;
}

TEST(Bisection, AnUnbuildableRevisionIsSkippedAndReported) {
  Script s = slowAt(6);
  s.broken = {7}; // the first midpoint of 0..15
  Outcome o = s.run({"a"});
  ASSERT_EQ(o.exitCode, kLocated) << o.summary;
  EXPECT_EQ(o.tracks[0].bad, 6u);
  EXPECT_EQ(o.skipped, std::vector<size_t>{7});
  bool reported = false;
  for (const auto& st : o.steps)
    reported |= st.kind == Step::Kind::Skip && st.head == 7 && st.note.find("does not build") != std::string::npos;
  EXPECT_TRUE(reported);
  EXPECT_NE(renderMarkdown(o).find("| skip |"), std::string::npos);
}

TEST(Bisection, AnUnbuildableCulpritLeavesTheCulpritAmbiguous) {
  Script s = slowAt(6);
  s.broken = {6};
  Outcome o = s.run({"a"});
  EXPECT_EQ(o.exitCode, kInconclusive) << o.summary;
  ASSERT_EQ(o.tracks.size(), 1u);
  EXPECT_EQ(o.tracks[0].good, 5u);
  EXPECT_EQ(o.tracks[0].bad, 7u);
  EXPECT_EQ(o.tracks[0].skippedInside, std::vector<size_t>{6});
  EXPECT_NE(o.summary.find("one of"), std::string::npos) << o.summary;
}

TEST(Bisection, AnUnmeasurableRevisionIsSkippedLikeAFailedBuild) {
  Script s = slowAt(10);
  s.unmeasurable = {7};
  Outcome o = s.run({"a"});
  ASSERT_EQ(o.exitCode, kLocated) << o.summary;
  EXPECT_EQ(o.tracks[0].bad, 10u);
  EXPECT_EQ(o.skipped, std::vector<size_t>{7});
}

TEST(Bisection, AnEndpointThatDoesNotBuildIsAnInfrastructureErrorNamingIt) {
  Script s = slowAt(4);
  s.broken = {15};
  Outcome o = s.run({"a"});
  EXPECT_EQ(o.exitCode, kInfra);
  EXPECT_NE(o.summary.find("the bad endpoint"), std::string::npos) << o.summary;
  EXPECT_NE(o.summary.find("status 1"), std::string::npos) << o.summary;
  EXPECT_EQ(s.measures, 0);
}

TEST(Bisection, AnInconclusiveProbeDecidesByTheEstimateAndSaysSo) {
  Script s = slowAt(5);
  s.inconclusive = {7}; // the true ratio there is 1.05: nearer --bad
  Outcome o = s.run({"a"});
  ASSERT_EQ(o.exitCode, kLocated) << o.summary;
  EXPECT_EQ(o.tracks[0].bad, 5u);
  EXPECT_TRUE(o.tracks[0].byEstimate);
  EXPECT_NE(o.summary.find("decided by estimate"), std::string::npos);
}

TEST(Bisection, JsonCarriesTheCulpritStepsAndTotals) {
  Script s = slowAt(3);
  Outcome o = s.run({"a"});
  nlohmann::json j = nlohmann::json::parse(renderJson(o, {{"good", "g"}}));
  EXPECT_EQ(j["format"], "dynqual-bisect");
  EXPECT_EQ(j["context"]["good"], "g");
  EXPECT_EQ(j["tracks"][0]["culprit"], 3);
  EXPECT_EQ(j["tracks"][0]["verified"]["verdict"], "regression");
  EXPECT_EQ(j["steps"].size(), o.steps.size());
  // Every step here is 12 rounds of one model (the endpoints: one model too).
  EXPECT_EQ(j["total_rounds"], 12 * static_cast<int>(o.steps.size()));
}
