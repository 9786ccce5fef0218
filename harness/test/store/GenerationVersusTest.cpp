// The interleaved comparison computed at import (GenerationVersus.h) against hand-computed values.
#include "dynqual/store/GenerationVersus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>

using namespace dynqual::store;
using nlohmann::json;

namespace {

json versusLine(int cycle, const std::string& engine, const std::vector<double>& tps, const std::vector<double>& ttft) {
  return {{"versus_cycle", cycle},
          {"versus_engine", engine},
          {"tps", {{"median", -1}, {"samples", tps}}}, // the producer's median is not read
          {"ttft_ms", {{"samples", ttft}}}};
}

VersusRun run(const json& line, const std::string& where = "v.jsonl:1") {
  std::optional<VersusRun> r = versusRun(line, where);
  EXPECT_TRUE(r.has_value());
  return r.value_or(VersusRun{});
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST(GenerationVersus, ThreeCyclesAgainstHandComputedStatistics) {
  // Per-run TPS = median of the run's samples: engine 120 (of 200, 120, 110), 90, 150 (of 150,
  // 140, 160); base 100 (of 100, 100, 95), 100 (of 80, 100, 100, 120: (100 + 100) / 2), 100.
  // Ratios r = 1.2, 0.9, 1.5: median 1.2; ahead in 2 of 3.
  // Signed rank of log r = 0.182, -0.105, 0.405: ranks of |.| are 2, 1, 3, W+ = 2 + 3 = 5; of the
  // 2^3 = 8 sign assignments, W+ >= 5 for {2, 3} and {1, 2, 3}: p = 2/8 = 0.25 (exact).
  // Hodges-Lehmann: the 6 Walsh averages of the logs sorted are log 0.9, (log 0.9 + log 1.2)/2,
  // (log 0.9 + log 1.5)/2, log 1.2, (log 1.2 + log 1.5)/2, log 1.5; their median is
  // (log 1.35 / 2 + log 1.2) / 2, so the ratio is sqrt(1.2) * 1.35^(1/4) = 1.1807938; with n = 3,
  // 2^-3 > 0.025, so the interval is unbounded (0, +inf).
  // Bootstrap: a resample's median is 0.9 when two or three of its three draws are 0.9, with
  // probability 3 (1/3)^2 (2/3) + (1/3)^3 = 7/27 = 26 % (likewise 1.5), far above 2.5 %: the 95 %
  // percentile interval is [0.9, 1.5].
  // TTFT medians over the cycles: engine 5, 7, 6 -> 6; base 10.
  std::vector<VersusRun> runs = {
      run(versusLine(0, "dynqual", {200, 120, 110}, {5}), "v.jsonl:1"),
      run(versusLine(0, "torch", {100, 100, 95}, {10}), "v.jsonl:2"),
      run(versusLine(1, "torch", {80, 100, 100, 120}, {10}), "v.jsonl:3"),
      run(versusLine(1, "dynqual", {90}, {6, 8}), "v.jsonl:4"),
      run(versusLine(2, "dynqual", {150, 140, 160}, {6}), "v.jsonl:5"),
      run(versusLine(2, "torch", {100}, {10}), "v.jsonl:6"),
  };
  EXPECT_EQ(defaultVersusBase(runs), "torch");
  std::vector<VersusComparison> v = compareVersus(runs, "torch");
  ASSERT_EQ(v.size(), 1u);
  const VersusComparison& c = v[0];
  EXPECT_EQ(c.engine, "dynqual");
  EXPECT_EQ(c.base, "torch");
  ASSERT_EQ(c.perCycle.size(), 3u);
  EXPECT_DOUBLE_EQ(c.perCycle[0].engineTps, 120);
  EXPECT_DOUBLE_EQ(c.perCycle[1].baseTps, 100);
  EXPECT_DOUBLE_EQ(c.perCycle[1].ratio, 0.9);
  EXPECT_DOUBLE_EQ(c.medianRatio, 1.2);
  EXPECT_EQ(c.ahead, 2);
  EXPECT_DOUBLE_EQ(c.pOneSided, 0.25);
  EXPECT_TRUE(c.pExact);
  EXPECT_NEAR(c.hlRatio, 1.1807938027592582, 1e-12);
  EXPECT_EQ(c.hlLow, 0);
  EXPECT_EQ(c.hlHigh, std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(c.bootLow, 0.9);
  EXPECT_DOUBLE_EQ(c.bootHigh, 1.5);
  EXPECT_DOUBLE_EQ(c.engineTpsMedian, 120);
  EXPECT_DOUBLE_EQ(c.baseTpsMedian, 100);
  EXPECT_DOUBLE_EQ(c.engineTtftMsMedian, 6);
  EXPECT_DOUBLE_EQ(c.baseTtftMsMedian, 10);

  json j = versusJson(v);
  EXPECT_EQ(j["format"], "dynqual-generation-versus");
  EXPECT_TRUE(j["comparisons"][0]["hl_ci95"][0].is_null());
  EXPECT_TRUE(j["comparisons"][0]["hl_ci95"][1].is_null());
  EXPECT_EQ(j["comparisons"][0]["p_method"], "exact");
  const std::string md = versusMarkdown(v);
  EXPECT_NE(md.find("| 1 | 90.0 | 100.0 | 0.900 |"), std::string::npos) << md;
  EXPECT_NE(md.find("median ratio 1.200 [0.900, 1.500] (95 % bootstrap)"), std::string::npos) << md;
  EXPECT_NE(md.find("exact Wilcoxon signed-rank p = 0.25."), std::string::npos) << md;
}

TEST(GenerationVersus, TwentyFiveCyclesAllAheadGiveTwoToTheMinus25) {
  // Every log ratio > 0: only the all-positive sign assignment reaches the observed W+, so the
  // exact one-sided p is 2^-25; every Walsh average is > 0, so the HL interval lies above 1.
  std::vector<VersusRun> runs;
  for (int c = 0; c < 25; ++c) {
    runs.push_back(run(versusLine(c, "torch", {100}, {1})));
    runs.push_back(run(versusLine(c, "dynqual", {101.0 + c}, {1})));
  }
  std::vector<VersusComparison> v = compareVersus(runs, defaultVersusBase(runs));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].ahead, 25);
  EXPECT_TRUE(v[0].pExact);
  EXPECT_NEAR(v[0].pOneSided, std::ldexp(1.0, -25), 1e-22);
  EXPECT_GT(v[0].hlLow, 1);
  EXPECT_LT(v[0].hlHigh, 1.25); // the largest ratio is 125 / 100
  EXPECT_GE(v[0].hlCoverage, 0.95);
  // Medians over the cycles: engine TPS 101..125 -> 113.
  EXPECT_DOUBLE_EQ(v[0].engineTpsMedian, 113);
}

TEST(GenerationVersus, EveryEngineAgainstTheBaseAndTheLaterOnesAgainstTheFirst) {
  // Engines in order of appearance a, b, c; without torch the base is the first, a:
  // (b, a), (c, a), then (c, b). Cycle 0 lacks c, so c's comparisons have one cycle.
  std::vector<VersusRun> runs = {run(versusLine(0, "a", {100}, {1})), run(versusLine(0, "b", {200}, {1})),
                                 run(versusLine(1, "b", {300}, {1})), run(versusLine(1, "a", {100}, {1})),
                                 run(versusLine(1, "c", {50}, {1}))};
  EXPECT_EQ(defaultVersusBase(runs), "a");
  std::vector<VersusComparison> v = compareVersus(runs, "a");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].engine + "/" + v[0].base, "b/a");
  EXPECT_DOUBLE_EQ(v[0].medianRatio, 2.5); // ratios 2 and 3
  EXPECT_EQ(v[1].engine + "/" + v[1].base, "c/a");
  EXPECT_DOUBLE_EQ(v[1].medianRatio, 0.5);
  EXPECT_EQ(v[2].engine + "/" + v[2].base, "c/b");
  EXPECT_DOUBLE_EQ(v[2].medianRatio, 50.0 / 300);
  // Naming another base reverses the first comparison.
  EXPECT_DOUBLE_EQ(compareVersus(runs, "b")[0].medianRatio, (0.5 + 1.0 / 3) / 2);
}

TEST(GenerationVersus, MalformedRunsAreRefusedNamingTheLine) {
  EXPECT_FALSE(versusRun(json{{"tool", "dq-bench generate"}}, "f:1").has_value()) << "a plain document";
  const std::vector<std::pair<json, std::string>> bad = {
      {versusLine(0, "torch", {0}, {1}),
       "f:7: not a versus line: tps.samples must hold positive finite numbers, got 0"},
      {versusLine(0, "torch", {-3}, {1}), "positive finite"},
      {versusLine(0, "torch", {100}, {}), "f:7: not a versus line: 'ttft_ms.samples' is empty"},
      {versusLine(-1, "torch", {100}, {1}), "versus_cycle must be an integer >= 0, got -1"},
      {versusLine(0, "", {100}, {1}), "versus_engine must be a name"},
      {json{{"versus_cycle", 0}, {"tps", {{"samples", {1}}}}}, "it has 'versus_cycle' but not 'versus_engine'"},
      {json{{"versus_cycle", 0}, {"versus_engine", "x"}}, "missing 'tps.samples'"},
  };
  for (const auto& b : bad)
    EXPECT_NE(errorOf([&] { versusRun(b.first, "f:7"); }).find(b.second), std::string::npos) << b.first.dump();
  json nullSample = versusLine(0, "torch", {100}, {1});
  nullSample["tps"]["samples"].push_back(nullptr); // a NaN repetition
  EXPECT_NE(errorOf([&] { versusRun(nullSample, "f:7"); }).find("got null"), std::string::npos);

  std::vector<VersusRun> twice = {run(versusLine(0, "torch", {100}, {1}), "f:1"),
                                  run(versusLine(0, "dynqual", {100}, {1}), "f:2"),
                                  run(versusLine(0, "dynqual", {50}, {1}), "f:3")};
  EXPECT_EQ(errorOf([&] { compareVersus(twice, "torch"); }),
            "f:3: cycle 0 has two runs of engine 'dynqual' (the first at f:2)");
  std::vector<VersusRun> apart = {run(versusLine(0, "dynqual", {1}, {1})), run(versusLine(1, "torch", {1}, {1}))};
  EXPECT_NE(errorOf([&] { compareVersus(apart, "torch"); }).find("no cycle with both engines"), std::string::npos);
  EXPECT_EQ(errorOf([&] { compareVersus(apart, "ort"); }), "no engine named 'ort' (engines: dynqual, torch)");
}
