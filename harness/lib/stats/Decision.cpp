#include "dynqual/stats/Decision.h"

#include "dynqual/stats/Descriptive.h"
#include "dynqual/stats/MultipleTesting.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace dynqual::stats {
namespace {

void checkAlpha(double alpha, const char* what) {
  if (!(alpha > 0 && alpha < 1))
    throw std::invalid_argument(std::string(what) + " " + std::to_string(alpha) + " outside (0, 1)");
}

void checkParams(const DecisionParams& p) {
  checkAlpha(p.alpha, "alpha");
  if (!(p.margin >= 0 && p.margin < 1))
    throw std::invalid_argument("margin " + std::to_string(p.margin) + " outside [0, 1)");
  if (p.bootstrapResamples < 0)
    throw std::invalid_argument("bootstrap resamples " + std::to_string(p.bootstrapResamples) + " < 0");
}

/// decide() given the already computed test of the same log ratios.
Decision decideWithTest(const std::vector<double>& r, const DecisionParams& params, const SignedRankResult& test) {
  Decision d;
  d.n = static_cast<int>(r.size());
  d.test = test;
  d.pTwoSided = test.pTwoSided;
  d.hl = hodgesLehmannInterval(r, 1 - params.alpha, params.exactMaxN);
  d.ratio = std::exp(d.hl.estimate);
  d.ratioLow = std::exp(d.hl.low);
  d.ratioHigh = std::exp(d.hl.high);
  d.ratioCoverage = d.hl.achievedCoverage;
  d.medianRatio = std::exp(median(r));
  if (params.bootstrapResamples > 0) {
    BootstrapInterval b = bootstrapMedianInterval(r, 1 - params.alpha, params.bootstrapResamples, params.bootstrapSeed);
    d.medianRatioLow = std::exp(b.low);
    d.medianRatioHigh = std::exp(b.high);
  } else {
    d.medianRatioLow = d.medianRatioHigh = std::numeric_limits<double>::quiet_NaN();
  }
  d.robustZ = robustZScores(r);
  for (size_t i = 0; i < d.robustZ.size(); ++i)
    if (std::fabs(d.robustZ[i]) > kRobustZOutlierCutoff)
      d.outlierRounds.push_back(static_cast<int>(i));
  d.verdict = classify(d.pTwoSided, d.ratioLow, d.ratioHigh, params.direction, params.alpha, params.margin);
  return d;
}

} // namespace

const char* verdictName(Verdict v) {
  switch (v) {
  case Verdict::Regression:
    return "regression";
  case Verdict::Improvement:
    return "improvement";
  case Verdict::NoChange:
    return "no-change";
  case Verdict::Inconclusive:
    return "inconclusive";
  case Verdict::Identical:
    return "identical";
  }
  return "inconclusive";
}

Verdict classify(double pTwoSided, double ratioLow, double ratioHigh, Direction direction, double alpha,
                 double margin) {
  checkAlpha(alpha, "alpha");
  if (!(margin >= 0 && margin < 1))
    throw std::invalid_argument("margin " + std::to_string(margin) + " outside [0, 1)");
  bool significant = pTwoSided < alpha;
  bool above = ratioLow > 1 + margin;   // wholly a higher value than base beyond the margin
  bool below = ratioHigh < 1 - margin;  // wholly a lower value
  bool worse = direction == Direction::LowerIsBetter ? above : below;
  bool better = direction == Direction::LowerIsBetter ? below : above;
  if (significant && worse)
    return Verdict::Regression;
  if (significant && better)
    return Verdict::Improvement;
  if (ratioLow >= 1 - margin && ratioHigh <= 1 + margin)
    return Verdict::NoChange;
  return Verdict::Inconclusive;
}

Decision decide(const std::vector<double>& logRatios, const DecisionParams& params) {
  checkParams(params);
  SignedRankResult test = signedRankTest(logRatios, params.exactMaxN);
  return decideWithTest(logRatios, params, test);
}

std::vector<Decision> decideFamily(const std::vector<Comparison>& family, double familyAlpha,
                                   const DecisionParams& common) {
  checkAlpha(familyAlpha, "family alpha");
  std::vector<SignedRankResult> tests;
  std::vector<double> p;
  tests.reserve(family.size());
  for (const Comparison& c : family) {
    tests.push_back(signedRankTest(c.logRatios, common.exactMaxN));
    p.push_back(tests.back().pTwoSided);
  }
  std::vector<double> alphas = holmAlphas(p, familyAlpha);
  std::vector<Decision> out;
  out.reserve(family.size());
  for (size_t i = 0; i < family.size(); ++i) {
    DecisionParams params = common;
    params.alpha = alphas[i];
    params.direction = family[i].direction;
    checkParams(params);
    out.push_back(decideWithTest(family[i].logRatios, params, tests[i]));
  }
  return out;
}

int minRoundsForAlpha(double alpha) {
  checkAlpha(alpha, "alpha");
  int n = 1;
  while (std::ldexp(1.0, 1 - n) >= alpha)  // smallest two-sided p over n rounds: 2 / 2^n
    ++n;
  return n;
}

std::optional<std::string> roundsWarning(int maxRounds, double alpha) {
  int need = minRoundsForAlpha(alpha);
  if (maxRounds >= need)
    return std::nullopt;
  return "at most " + std::to_string(maxRounds) + " rounds can never give p < " + std::to_string(alpha) +
         ": the exact signed-rank test needs at least " + std::to_string(need) +
         " rounds (smallest two-sided p over n rounds is 2/2^n); no regression or improvement can be found";
}

} // namespace dynqual::stats
