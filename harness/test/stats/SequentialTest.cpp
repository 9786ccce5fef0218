// Look schedules (Bonferroni and Lan-DeMets O'Brien-Fleming-type spending), budgets, and the
// suite state across looks.
#include "dynqual/stats/Sequential.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace dynqual;
using stats::Verdict;

TEST(Sequential, BonferroniSplitAndBudget) {
  stats::LookSchedule s; // 12 16 24 32 48 64 96 128
  ASSERT_EQ(s.rounds, (std::vector<int>{12, 16, 24, 32, 48, 64, 96, 128}));
  for (int k = 0; k < 8; ++k)
    EXPECT_NEAR(s.alphaAt(k, 0.05), 0.05 / 8, 1e-15);
  // A budget of 30 rounds keeps the looks at 12, 16, 24 and their levels: alpha / 8 each.
  auto cut = s.cutToBudget(30);
  ASSERT_EQ(cut.rounds, (std::vector<int>{12, 16, 24}));
  EXPECT_NEAR(cut.alphaAt(2, 0.05), 0.05 / 8, 1e-15);
  EXPECT_THROW(s.cutToBudget(11), std::invalid_argument);
  EXPECT_THROW(s.alphaAt(8, 0.05), std::invalid_argument);
  EXPECT_THROW(s.alphaAt(0, 1.0), std::invalid_argument);
  // The first default look can reach the smallest level for 10 comparisons: 0.05 / 80
  // (2 / 2^12 = 0.00049 < 0.000625 <= 2 / 2^11).
  EXPECT_EQ(stats::minRoundsForAlpha(0.05 / 80), 12);
}

TEST(Sequential, OBrienFlemingSpending) {
  // Two looks at t = 1/2 and 1: alpha(1/2) = 2 - 2 Phi(1.959964 / sqrt(0.5)) = 2 - 2 Phi(2.771808)
  // = 0.0055746 (hand computation with erfc); the final look gets the rest, 0.05 - 0.0055746.
  stats::LookSchedule s;
  s.rounds = {32, 64};
  s.spending = stats::AlphaSpending::OBrienFlemingLanDeMets;
  EXPECT_NEAR(s.alphaAt(0, 0.05), 0.005574596680784527, 1e-9);
  EXPECT_NEAR(s.alphaAt(1, 0.05), 0.05 - 0.005574596680784527, 1e-9);
  // Over the default looks the increments add up to alpha and grow.
  stats::LookSchedule d;
  d.spending = stats::AlphaSpending::OBrienFlemingLanDeMets;
  double sum = 0;
  for (int k = 0; k < static_cast<int>(d.rounds.size()); ++k) {
    sum += d.alphaAt(k, 0.05);
    if (k > 0) {
      EXPECT_GT(d.alphaAt(k, 0.05), d.alphaAt(k - 1, 0.05));
    }
  }
  EXPECT_NEAR(sum, 0.05, 1e-12);
  // Cut by a budget: t still counts against the planned 64 rounds.
  EXPECT_NEAR(s.cutToBudget(40).alphaAt(0, 0.05), 0.005574596680784527, 1e-9);
}

TEST(Sequential, ScheduleValidation) {
  stats::LookSchedule s;
  s.rounds = {12, 12};
  EXPECT_THROW(s.validate(), std::invalid_argument);
  s.rounds = {};
  EXPECT_THROW(s.validate(), std::invalid_argument);
  s.rounds = {0, 4};
  EXPECT_THROW(s.validate(), std::invalid_argument);
}

TEST(Sequential, SuiteClosesDecisiveComparisons) {
  // Looks at 8 and 12, alpha 0.05 -> 0.025 per look; Holm over 2 -> first level 0.0125.
  stats::LookSchedule s;
  s.rounds = {8, 12};
  std::vector<double> slow, noisy;
  for (int i = 1; i <= 12; ++i) {
    slow.push_back(std::log(1.2) + 0.001 * i);    // all positive: p = 2/256 = 0.0078 at 8 rounds
    noisy.push_back((i % 2 ? 1 : -1) * 0.05 * i); // +/-5 % .. 60 %: inconclusive
  }
  auto prefix = [](const std::vector<double>& v, int n) { return std::vector<double>(v.begin(), v.begin() + n); };
  stats::SuiteState st = stats::startSuite(2);
  stats::DecisionParams common;
  common.bootstrapResamples = 0;
  auto at8 = stats::applyLook(
      st, s, 0.05,
      {{prefix(slow, 8), stats::Direction::LowerIsBetter}, {prefix(noisy, 8), stats::Direction::LowerIsBetter}},
      common);
  EXPECT_EQ(at8[0].verdict, Verdict::Regression);
  EXPECT_EQ(st.verdict[0], Verdict::Regression);
  EXPECT_EQ(st.closedAtRounds[0], 8);
  EXPECT_EQ(st.verdict[1], Verdict::Inconclusive);
  EXPECT_FALSE(st.done);
  // Wrong number of rounds for the second look.
  EXPECT_THROW(stats::applyLook(st, s, 0.05, {{prefix(slow, 8), {}}, {prefix(noisy, 8), {}}}, common),
               std::invalid_argument);
  stats::applyLook(st, s, 0.05, {{slow, {}}, {noisy, {}}}, common);
  EXPECT_TRUE(st.done);
  EXPECT_EQ(st.roundsUsed, 12);
  EXPECT_EQ(st.verdict[0], Verdict::Regression); // closed verdicts stay
  EXPECT_EQ(st.verdict[1], Verdict::Inconclusive);
  EXPECT_THROW(stats::applyLook(st, s, 0.05, {{slow, {}}, {noisy, {}}}, common), std::invalid_argument);
}
