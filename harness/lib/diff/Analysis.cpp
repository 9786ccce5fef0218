#include "dynqual/diff/Analysis.h"

#include "dynqual/stats/Bootstrap.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/stats/Latency.h"
#include "dynqual/stats/MultipleTesting.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
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
  for (RoundValue v :
       {RoundValue::Min, RoundValue::LowerHalfMean, RoundValue::Mean, RoundValue::Median, RoundValue::P90})
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

bool constantArms(const std::vector<Sample>& samples, const std::string& model, int rounds) {
  std::optional<double> base, head;
  for (const auto& s : samples) {
    if (s.model != model || s.round >= rounds)
      continue;
    auto& first = s.arm == "base" ? base : head;
    if (!first)
      first = s.valueMs;
    else if (*first != s.valueMs)
      return false;
  }
  return base && head;
}

MetricComparison exactComparison(const std::string& model, const std::string& metric, double base, double head,
                                 int rounds, double margin) {
  if (!(base > 0) || !std::isfinite(base) || !std::isfinite(head) || head < 0)
    throw std::invalid_argument(
        fmt::format("{} {}: cannot compare the values base {} and head {} exactly", model, metric, base, head));
  MetricComparison c;
  c.model = model;
  c.metric = metric;
  c.unit = "ms";
  c.direction = Direction::LowerIsBetter;
  c.rounds = rounds;
  c.baseMedian = base;
  c.headMedian = head;
  c.ratio = c.ciLow = c.ciHigh = c.eqLow = c.eqHigh = c.medianRatio = c.bootLow = c.bootHigh = head / base;
  // No test: the difference is known without error, so p is 0 when there is one and 1 when there is none.
  c.p = c.pAdjusted = c.ratio == 1 ? 1.0 : 0.0;
  c.alphaUsed = 0;
  c.verdict =
      head == base ? Verdict::NoChange : stats::classify(c.p, c.ratio, c.ratio, Direction::LowerIsBetter, 0.5, margin);
  c.decidedAtRounds = rounds;
  c.exact = true;
  return c;
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
      series.push_back(
          {m, metric + "." + roundValueName(*policy.tailValue), roundValues(samples, m, *policy.tailValue)});
  for (const auto& m : models) {
    auto v = roundValues(compileSamples, m, policy.roundValue);
    if (!v.empty())
      series.push_back({m, compileMetricName, std::move(v)});
  }
  // A deterministic series whose every sample of each arm, over the first look's rounds, is one
  // value is decided exactly at that look and leaves the family: there is no noise to test.
  const int firstLook = schedule.rounds.front();
  std::vector<MetricComparison> result(series.size());
  std::vector<size_t> tested; // the series that go through the tests, in series order
  bool anyExact = false;
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    bool complete = static_cast<int>(std::count_if(s.values.begin(), s.values.end(),
                                                   [&](const auto& rv) { return rv.first < firstLook; })) == firstLook;
    if (isDeterministicMetric(s.metric) && complete && constantArms(samples, s.model, firstLook)) {
      const auto& [b, h] = s.values.begin()->second;
      result[i] = exactComparison(s.model, s.metric, b, h, firstLook, policy.margin);
      anyExact = true;
    } else {
      tested.push_back(i);
    }
  }
  std::vector<std::map<int, std::pair<double, double>>> values;
  for (size_t i : tested)
    values.push_back(series[i].values);

  AnalysisOutcome out;
  if (anyExact)
    out.looksDone = 1;
  std::vector<std::pair<std::vector<double>, double>> bootstrapOf(series.size()); // log ratios, alpha
  stats::SuiteState state = stats::startSuite(static_cast<int>(tested.size()));
  for (size_t look = 0; look < schedule.rounds.size() && !tested.empty(); ++look) {
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
      break; // the rounds for this look were never taken
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
    for (size_t k = 0; k < tested.size(); ++k) {
      if (!wasOpen[k])
        continue; // closed at an earlier look: keeps that look's numbers
      const size_t i = tested[k];
      const auto& d = decisions[k];
      MetricComparison& c = result[i];
      c.model = series[i].model;
      c.metric = series[i].metric;
      c.unit = "ms";
      c.direction = Direction::LowerIsBetter;
      c.rounds = n;
      std::vector<double> b, h;
      for (const auto& [round, bh] : values[k])
        if (round < n) {
          b.push_back(bh.first);
          h.push_back(bh.second);
        }
      c.baseMedian = stats::median(b);
      c.headMedian = stats::median(h);
      c.ratio = d.ratio;
      c.ciLow = d.ratioLow;
      c.ciHigh = d.ratioHigh;
      c.eqLow = d.equivalenceLow;
      c.eqHigh = d.equivalenceHigh;
      c.medianRatio = d.medianRatio;
      bootstrapOf[i] = {family[k].logRatios, alphas[k]};
      c.p = d.pTwoSided;
      c.pAdjusted = adjusted[k];
      c.alphaUsed = alphas[k];
      c.outlierRounds = d.outlierRounds;
      c.verdict = state.verdict[k];
      c.decidedAtRounds = state.closedAtRounds[k];
    }
    out.looksDone = static_cast<int>(look) + 1;
    if (state.done)
      break;
  }
  for (size_t i = 0; i < result.size() && out.looksDone > 0; ++i) {
    const auto& [r, alpha] = bootstrapOf[i];
    if (result[i].exact)
      continue; // its interval is the exact ratio
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
  for (size_t i : tested)
    if (result[i].model.empty() && out.looksDone > 0) {
      // Exact series were decided, but the tested ones never reached a look: nothing decided.
      result[i].model = series[i].model;
      result[i].metric = series[i].metric;
      result[i].unit = "ms";
      result[i].rounds = static_cast<int>(series[i].values.size());
      result[i].ciLow = result[i].bootLow = result[i].eqLow = 0;
      result[i].ciHigh = result[i].bootHigh = result[i].eqHigh = std::numeric_limits<double>::infinity();
    }
  if (out.looksDone > 0)
    out.comparisons = std::move(result);
  out.allClosed =
      (state.done && !tested.empty()) ||
      (out.looksDone > 0 && std::none_of(out.comparisons.begin(), out.comparisons.end(),
                                         [](const MetricComparison& c) { return c.verdict == Verdict::Inconclusive; }));
  return out;
}

int comparisonCount(int timedModels, const Policy& p, const Measurement& m) {
  // The modelled device time is decided exactly, outside the tested family (analyze).
  const int timing = m.metric == DecisionMetric::ModelledDeviceTime ? 0 : 1 + (p.tailValue ? 1 : 0);
  return timedModels * (timing + (m.compileTime ? 1 : 0));
}

std::vector<MetricComparison> sideComparisons(const std::vector<Sample>& samples,
                                              const std::vector<std::string>& models, const Policy& policy,
                                              const std::string& metric) {
  std::vector<std::string> present;
  int rounds = std::numeric_limits<int>::max();
  for (const auto& m : models) {
    int n = static_cast<int>(roundValues(samples, m, policy.roundValue).size());
    if (n > 0) {
      present.push_back(m);
      rounds = std::min(rounds, n);
    }
  }
  if (present.empty())
    return {};
  Policy p = policy;
  p.looks = {rounds};
  p.tailValue.reset();
  std::vector<Sample> firstRounds;
  for (const auto& s : samples)
    if (s.round < rounds)
      firstRounds.push_back(s);
  AnalysisOutcome a = analyze(firstRounds, present, p, metric);
  for (auto& c : a.comparisons)
    c.deciding = false;
  return a.comparisons;
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
    c.ciLow = c.bootLow = c.eqLow = 0;
    c.ciHigh = c.bootHigh = c.eqHigh = std::numeric_limits<double>::infinity();
    out.push_back(c);
  }
  return out;
}

} // namespace dynqual::diff
