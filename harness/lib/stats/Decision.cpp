#include "dynqual/stats/Decision.h"

#include "dynqual/stats/Descriptive.h"
#include "dynqual/stats/MultipleTesting.h"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace dynqual::stats {
namespace {

/// roundsToSettle counts its answer by simulation below this many rounds.
constexpr int kSettleSimulatedBelow = 40;

void checkAlpha(double alpha, const char* what) {
  if (!(alpha > 0 && alpha < 1))
    throw std::invalid_argument(std::string(what) + " " + std::to_string(alpha) + " outside (0, 1)");
}

void checkParams(const DecisionParams& p) {
  checkAlpha(p.alpha, "alpha");
  if (!(p.margin >= 0 && p.margin < 1))
    throw std::invalid_argument("margin " + std::to_string(p.margin) + " outside [0, 1)");
  if (!(p.equivalenceAlpha >= 0 && p.equivalenceAlpha < 0.5))
    throw std::invalid_argument("equivalence alpha " + std::to_string(p.equivalenceAlpha) + " outside [0, 0.5)");
  if (p.bootstrapResamples < 0)
    throw std::invalid_argument("bootstrap resamples " + std::to_string(p.bootstrapResamples) + " < 0");
}

/// decide() given the already computed test of the same log ratios.
Decision decideWithTest(const std::vector<double>& r, const DecisionParams& params, const SignedRankResult& test) {
  Decision d;
  d.n = static_cast<int>(r.size());
  d.test = test;
  d.pTwoSided = test.pTwoSided;
  // The test drops rounds whose log ratio is exactly 0 (Wilcoxon's convention); the interval is
  // computed from the same non-zero rounds, so that both rest on the same data. With none left
  // every round was equal: the ratio is exactly 1.
  std::vector<double> nonZero;
  for (double v : r)
    if (v != 0)
      nonZero.push_back(v);
  d.equivalenceAlpha = params.equivalenceAlpha > 0 ? params.equivalenceAlpha : params.alpha;
  if (nonZero.empty()) {
    d.hl.n = 0;
    d.hl.confidence = 1 - params.alpha;
    d.hl.estimate = d.hl.low = d.hl.high = 0;
    d.equivalenceLow = d.equivalenceHigh = 1;
  } else {
    d.hl = hodgesLehmannInterval(nonZero, 1 - params.alpha, params.exactMaxN);
    HodgesLehmannResult eq = hodgesLehmannInterval(nonZero, 1 - 2 * d.equivalenceAlpha, params.exactMaxN);
    d.equivalenceLow = std::exp(eq.low);
    d.equivalenceHigh = std::exp(eq.high);
  }
  d.ratio = std::exp(d.hl.estimate);
  d.ratioLow = std::exp(d.hl.low);
  d.ratioHigh = std::exp(d.hl.high);
  d.ratioCoverage = d.hl.achievedCoverage;
  d.medianRatio = std::exp(median(r));
  if (params.bootstrapResamples > 0) {
    // A percentile interval at level 1 - alpha rests on the resamples beyond its bounds: at least
    // 20 / alpha of them leave about 10 in each tail (the gate's per-comparison alpha is 0.0008 to
    // 0.008, where the default 2000 would leave 1 to 8).
    int resamples = std::max(params.bootstrapResamples, bootstrapResamplesFor(params.alpha));
    d.bootstrapResamples = resamples;
    BootstrapInterval b = bootstrapMedianInterval(r, 1 - params.alpha, resamples, params.bootstrapSeed);
    d.medianRatioLow = std::exp(b.low);
    d.medianRatioHigh = std::exp(b.high);
  } else {
    d.medianRatioLow = d.medianRatioHigh = std::numeric_limits<double>::quiet_NaN();
  }
  d.robustZ = robustZScores(r);
  for (size_t i = 0; i < d.robustZ.size(); ++i)
    if (std::fabs(d.robustZ[i]) > kRobustZOutlierCutoff)
      d.outlierRounds.push_back(static_cast<int>(i));
  d.verdict = classify(d.pTwoSided, d.ratioLow, d.ratioHigh, d.equivalenceLow, d.equivalenceHigh, params.direction,
                       params.alpha, params.margin);
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
  return classify(pTwoSided, ratioLow, ratioHigh, ratioLow, ratioHigh, direction, alpha, margin);
}

Verdict classify(double pTwoSided, double ratioLow, double ratioHigh, double equivalenceLow, double equivalenceHigh,
                 Direction direction, double alpha, double margin) {
  checkAlpha(alpha, "alpha");
  if (!(margin >= 0 && margin < 1))
    throw std::invalid_argument("margin " + std::to_string(margin) + " outside [0, 1)");
  // The margin is +-ln(1 + m) on the log scale, [1/(1 + m), 1 + m] as a ratio: swapping the arms
  // maps [lo, hi] to [1/hi, 1/lo] and so mirrors the verdict.
  const double upper = 1 + margin, lower = 1 / (1 + margin);
  bool significant = pTwoSided < alpha;
  bool above = ratioLow > upper;  // wholly a higher value than base beyond the margin
  bool below = ratioHigh < lower; // wholly a lower value
  bool worse = direction == Direction::LowerIsBetter ? above : below;
  bool better = direction == Direction::LowerIsBetter ? below : above;
  if (significant && worse)
    return Verdict::Regression;
  if (significant && better)
    return Verdict::Improvement;
  if (equivalenceLow >= lower && equivalenceHigh <= upper)
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
    if (common.equivalenceAlpha <= 0)
      params.equivalenceAlpha = familyAlpha; // an intersection-union test: no Holm step (see Decision.h)
    params.direction = family[i].direction;
    checkParams(params);
    out.push_back(decideWithTest(family[i].logRatios, params, tests[i]));
  }
  return out;
}

int minRoundsForAlpha(double alpha) {
  checkAlpha(alpha, "alpha");
  int n = 1;
  while (std::ldexp(1.0, 1 - n) >= alpha) // smallest two-sided p over n rounds: 2 / 2^n
    ++n;
  return n;
}

int bootstrapResamplesFor(double alpha) {
  checkAlpha(alpha, "alpha");
  double b = std::ceil(20 / alpha);
  return b > 1e8 ? 100000000 : static_cast<int>(b);
}

int roundsToSettle(double sigma, double margin, double alpha, double power) {
  checkAlpha(alpha, "alpha");
  if (!(sigma >= 0) || !(margin > 0) || !(power > 0 && power < 1))
    throw std::invalid_argument("rounds to settle: noise " + std::to_string(sigma) + ", margin " +
                                std::to_string(margin) + " and power " + std::to_string(power) +
                                " must be >= 0, > 0 and in (0, 1)");
  double se = 1.05 * sigma / std::log1p(margin); // per sqrt(round), in units of the log margin
  // Student t quantiles at n - 1 degrees of freedom instead of normal ones, iterated to a fixed
  // point: the rounds are few, and the noise is estimated (Chow, Shao & Wang sec. 3.2 do the same).
  int n = minRoundsForAlpha(alpha); // below it the interval is unbounded
  for (int iter = 0; iter < 100; ++iter) {
    boost::math::students_t_distribution<double> t(std::max(1, n - 1));
    double q = boost::math::quantile(boost::math::complement(t, alpha / 2)) +
               boost::math::quantile(boost::math::complement(t, (1 - power) / 2));
    int next = std::max(minRoundsForAlpha(alpha), static_cast<int>(std::ceil(std::pow(q * se, 2))));
    if (next == n)
      break;
    n = next;
  }
  if (n >= kSettleSimulatedBelow)
    return n;
  // Few rounds: the exact interval rests on the extreme Walsh averages, where the normal theory
  // above is optimistic (at n = 10, alpha 0.002 it is the range of the data). Count instead, over
  // normal noise from a fixed seed, the share of A/A runs whose interval fits inside the margin.
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0.0, sigma);
  const double limit = std::log1p(margin);
  for (; n < kSettleSimulatedBelow; ++n) {
    int settled = 0;
    std::vector<double> r(static_cast<size_t>(n));
    for (int t = 0; t < 2000; ++t) {
      for (double& x : r)
        x = noise(rng);
      HodgesLehmannResult hl = hodgesLehmannInterval(r, 1 - alpha);
      settled += hl.low >= -limit && hl.high <= limit;
    }
    if (settled >= power * 2000)
      return n;
  }
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
