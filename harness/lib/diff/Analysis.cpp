#include "dynqual/diff/Analysis.h"

#include "dynqual/stats/Bootstrap.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/stats/Latency.h"
#include "dynqual/stats/MultipleTesting.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dynqual::diff {

const char* roundValueName(RoundValue v) {
  switch (v) {
  case RoundValue::Min:
    return "min";
  case RoundValue::LowerHalfMean:
    return "lower-half-mean";
  case RoundValue::Mean:
    return "mean";
  case RoundValue::Median:
    return "median";
  case RoundValue::P90:
    return "p90";
  }
  return "min";
}

RoundValue parseRoundValue(const std::string& text) {
  for (RoundValue v : {RoundValue::Min, RoundValue::LowerHalfMean, RoundValue::Mean, RoundValue::Median,
                       RoundValue::P90})
    if (text == roundValueName(v))
      return v;
  throw std::invalid_argument("round value '" + text + "' is not one of min, lower-half-mean, mean, median, p90");
}

double roundValueOf(const std::vector<double>& samples, RoundValue value) {
  switch (value) {
  case RoundValue::Min:
    if (samples.empty())
      throw std::invalid_argument("round value of no samples");
    return *std::min_element(samples.begin(), samples.end());
  case RoundValue::LowerHalfMean:
    return stats::lowerHalfMean(samples);
  case RoundValue::Mean:
    return stats::mean(samples);
  case RoundValue::Median:
    return stats::median(samples);
  case RoundValue::P90:
    return stats::nearestRankPercentile(samples, 90);
  }
  throw std::invalid_argument("unknown round value");
}

std::map<int, std::pair<double, double>> roundValues(const std::vector<Sample>& samples, const std::string& model,
                                                     RoundValue value) {
  std::map<int, std::pair<std::vector<double>, std::vector<double>>> byRound;
  for (const auto& s : samples)
    if (s.model == model)
      (s.arm == "base" ? byRound[s.round].first : byRound[s.round].second).push_back(s.valueMs);
  std::map<int, std::pair<double, double>> out;
  for (const auto& [round, v] : byRound)
    if (!v.first.empty() && !v.second.empty())
      out[round] = {roundValueOf(v.first, value), roundValueOf(v.second, value)};
  return out;
}

AnalysisOutcome analyze(const std::vector<Sample>& samples, const std::vector<std::string>& models,
                        const Policy& policy, const std::string& metric, const std::vector<Sample>& compileSamples,
                        const std::string& compileMetricName) {
  stats::LookSchedule schedule;
  schedule.rounds = policy.looks;
  schedule.validate();
  stats::DecisionParams common;
  common.margin = policy.margin;
  common.bootstrapSeed = policy.seed;
  // The bootstrap is not part of the verdict: it is computed once per comparison at the end, for
  // the look whose numbers the comparison reports, instead of at every replayed look.
  common.bootstrapResamples = 0;

  // One series per model and metric: the timed metric of every model, then the compile time of
  // the models that have compile samples. Holm runs over all of them.
  struct Series {
    std::string model, metric;
    std::map<int, std::pair<double, double>> values;
  };
  std::vector<Series> series;
  for (const auto& m : models)
    series.push_back({m, metric, roundValues(samples, m, policy.roundValue)});
  const size_t timedCount = series.size();
  if (policy.tailValue)
    for (const auto& m : models)
      series.push_back({m, metric + "." + roundValueName(*policy.tailValue), roundValues(samples, m, *policy.tailValue)});
  for (const auto& m : models) {
    auto v = roundValues(compileSamples, m, policy.roundValue);
    if (!v.empty())
      series.push_back({m, compileMetricName, std::move(v)});
  }
  std::vector<std::map<int, std::pair<double, double>>> values;
  for (const auto& s : series)
    values.push_back(s.values);

  AnalysisOutcome out;
  std::vector<std::pair<std::vector<double>, double>> bootstrapOf(series.size());  // log ratios, alpha
  stats::SuiteState state = stats::startSuite(static_cast<int>(series.size()));
  std::vector<MetricComparison> result(series.size());
  for (size_t look = 0; look < schedule.rounds.size() && !series.empty(); ++look) {
    int n = schedule.rounds[look];
    std::vector<stats::Comparison> family;
    bool complete = true;
    for (size_t i = 0; i < values.size(); ++i) {
      stats::Comparison c;
      for (const auto& [round, bh] : values[i])
        if (round < n)
          c.logRatios.push_back(std::log(bh.second / bh.first));
      // A closed comparison's model stops taking rounds: it keeps the rounds it has.
      if (state.closedAtRounds[i] == 0)
        complete = complete && static_cast<int>(c.logRatios.size()) == n;
      family.push_back(std::move(c));
    }
    if (!complete)
      break;  // the rounds for this look were never taken
    std::vector<bool> wasOpen;
    for (auto v : state.verdict)
      wasOpen.push_back(v == Verdict::Inconclusive);
    double lookAlpha = schedule.alphaAt(static_cast<int>(look), policy.alpha);
    auto decisions = stats::applyLook(state, schedule, policy.alpha, family, common);
    std::vector<double> p;
    for (const auto& d : decisions)
      p.push_back(d.pTwoSided);
    auto adjusted = stats::holmAdjust(p);
    auto alphas = stats::holmAlphas(p, lookAlpha);
    for (size_t i = 0; i < series.size(); ++i) {
      if (!wasOpen[i])
        continue;  // closed at an earlier look: keeps that look's numbers
      const auto& d = decisions[i];
      MetricComparison& c = result[i];
      c.model = series[i].model;
      c.metric = series[i].metric;
      c.unit = "ms";
      c.direction = Direction::LowerIsBetter;
      c.rounds = n;
      std::vector<double> b, h;
      for (const auto& [round, bh] : values[i])
        if (round < n) {
          b.push_back(bh.first);
          h.push_back(bh.second);
        }
      c.baseMedian = stats::median(b);
      c.headMedian = stats::median(h);
      c.ratio = d.ratio;
      c.ciLow = d.ratioLow;
      c.ciHigh = d.ratioHigh;
      c.medianRatio = d.medianRatio;
      bootstrapOf[i] = {family[i].logRatios, alphas[i]};
      c.p = d.pTwoSided;
      c.pAdjusted = adjusted[i];
      c.alphaUsed = alphas[i];
      c.outlierRounds = d.outlierRounds;
      c.verdict = state.verdict[i];
      c.decidedAtRounds = state.closedAtRounds[i];
    }
    out.looksDone = static_cast<int>(look) + 1;
    if (state.done)
      break;
  }
  for (size_t i = 0; i < result.size() && out.looksDone > 0; ++i) {
    const auto& [r, alpha] = bootstrapOf[i];
    if (r.empty() || policy.bootstrapResamples <= 0) {
      result[i].bootLow = result[i].bootHigh = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    int resamples = std::max(policy.bootstrapResamples, stats::bootstrapResamplesFor(alpha));
    auto b = stats::bootstrapMedianInterval(r, 1 - alpha, resamples, policy.seed);
    result[i].bootLow = std::exp(b.low);
    result[i].bootHigh = std::exp(b.high);
  }
  // An improvement of a model needs both of its round values to improve: a head whose fastest
  // runs got faster while its mean did not (a wider spread) is not faster for its users.
  if (policy.tailValue && out.looksDone > 0)
    for (size_t i = 0; i < models.size(); ++i) {
      MetricComparison& first = result[i];
      const MetricComparison& tail = result[timedCount + i];
      if (first.verdict == Verdict::Improvement && tail.verdict != Verdict::Improvement)
        first.verdict = Verdict::Inconclusive;
    }
  if (out.looksDone > 0)
    out.comparisons = std::move(result);
  out.allClosed = state.done || (out.looksDone > 0 && std::none_of(out.comparisons.begin(), out.comparisons.end(),
                                                                     [](const MetricComparison& c) {
                                                                       return c.verdict == Verdict::Inconclusive;
                                                                     }));
  return out;
}

int comparisonCount(int timedModels, const Policy& p, const Measurement& m) {
  return timedModels * (1 + (p.tailValue ? 1 : 0) + (m.compileTime ? 1 : 0));
}

std::vector<std::string> reachabilityWarnings(const Policy& policy, int comparisons) {
  std::vector<std::string> w;
  if (comparisons <= 0 || policy.looks.empty())
    return w;
  stats::LookSchedule schedule;
  schedule.rounds = policy.looks;
  double smallest = schedule.alphaAt(0, policy.alpha) / comparisons;
  for (size_t k = 0; k < policy.looks.size(); ++k)
    smallest = std::min(smallest, schedule.alphaAt(static_cast<int>(k), policy.alpha) / comparisons);
  if (auto msg = stats::roundsWarning(policy.looks.back(), smallest))
    w.push_back(*msg + "; raise the last look (--looks) or lower the number of models");
  int need = stats::minRoundsForAlpha(smallest);
  if (policy.looks.front() < need)
    w.push_back(fmt::format("looks before round {} cannot reject at alpha {:.2g} per comparison; they can still "
                            "close a comparison as no change",
                            need, smallest));
  return w;
}

std::vector<MetricComparison> undecidedComparisons(const std::vector<Sample>& samples,
                                                   const std::vector<std::string>& models, RoundValue value,
                                                   const std::string& metric) {
  std::vector<MetricComparison> out;
  for (const auto& name : models) {
    MetricComparison c;
    c.model = name;
    c.metric = metric;
    c.unit = "ms";
    auto v = roundValues(samples, name, value);
    c.rounds = static_cast<int>(v.size());
    std::vector<double> b, h;
    for (const auto& [round, bh] : v) {
      b.push_back(bh.first);
      h.push_back(bh.second);
    }
    if (!b.empty()) {
      c.baseMedian = stats::median(b);
      c.headMedian = stats::median(h);
      std::vector<double> ratios;
      for (size_t i = 0; i < b.size(); ++i)
        ratios.push_back(h[i] / b[i]);
      c.ratio = c.medianRatio = stats::median(ratios);
    }
    // No interval was computed: shown as unbounded, so no row reads as a measured "no change".
    c.ciLow = c.bootLow = 0;
    c.ciHigh = c.bootHigh = std::numeric_limits<double>::infinity();
    out.push_back(c);
  }
  return out;
}

} // namespace dynqual::diff
