#include "dynqual/diff/GateSimulation.h"

#include "dynqual/diff/Analysis.h"
#include "dynqual/stats/Descriptive.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace dynqual::diff {

std::map<std::string, std::vector<CalibrationRound>> calibrationRounds(const std::vector<Sample>& samples) {
  // model -> round -> (arm, position) -> samples
  std::map<std::string, std::map<int, std::map<std::pair<std::string, int>, std::vector<double>>>> by;
  std::map<std::string, std::map<int, int>> iterations;
  for (const auto& s : samples) {
    by[s.model][s.round][{s.arm, s.position}].push_back(s.valueMs);
    iterations[s.model][s.round] = s.iterations;
  }
  std::map<std::string, std::vector<CalibrationRound>> out;
  for (const auto& [model, rounds] : by)
    for (const auto& [round, positions] : rounds) {
      CalibrationRound c;
      c.iterations = std::max(1, iterations[model][round]);
      std::vector<double> spreads;
      for (const auto& [key, v] : positions) {
        auto& arm = key.first == "base" ? c.base : c.head;
        arm.insert(arm.end(), v.begin(), v.end());
        if (key.first == "base" && v.size() > 1)
          spreads.push_back(stats::scaledMad(v));
      }
      c.baseSpreadMs = spreads.empty() ? 0.0 : stats::median(spreads);
      if (!c.base.empty() && !c.head.empty())
        out[model].push_back(std::move(c));
    }
  return out;
}

GateSimulationResult simulateGateOnSamples(const GateSimulationParams& p) {
  if (p.trials < 1)
    throw std::invalid_argument("gate simulation needs trials >= 1");
  std::vector<std::string> models;
  for (const auto& [m, r] : p.rounds) {
    if (r.size() < 2)
      throw std::invalid_argument("gate simulation: model " + m + " has fewer than 2 calibration rounds");
    models.push_back(m);
  }
  if (models.empty())
    throw std::invalid_argument("gate simulation: no model");
  if (!p.changedModel.empty() && !p.rounds.count(p.changedModel))
    throw std::invalid_argument("gate simulation: no model named " + p.changedModel + " in the calibration");
  stats::LookSchedule schedule;
  schedule.rounds = p.policy.looks;
  schedule.validate();
  const int maxRounds = schedule.rounds.back();

  GateSimulationResult res;
  if (!p.changedModel.empty()) {
    std::vector<double> base, spreads;
    for (const auto& c : p.rounds.at(p.changedModel)) {
      base.insert(base.end(), c.base.begin(), c.base.end());
      spreads.push_back(c.baseSpreadMs);
    }
    res.medianMs = stats::median(base);
    res.spreadMs = stats::median(spreads);
    res.busyUs = slowdownBusyUs(p.change, res.medianMs, res.spreadMs);
  }
  const double busyMs = res.busyUs / 1000.0;

  std::vector<RoundValue> values = {p.policy.roundValue};
  if (p.policy.tailValue)
    values.push_back(*p.policy.tailValue);
  const size_t m = models.size(), k = values.size();
  stats::DecisionParams common;
  common.margin = p.policy.margin;
  common.bootstrapResamples = 0;

  std::mt19937_64 rng(p.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::int64_t detected = 0, improved = 0, suiteFp = 0;
  std::map<std::string, std::int64_t> noChange;
  double roundsSum = 0;
  // data[v * m + i][j]: log ratio of model i, round value v, round j.
  std::vector<std::vector<double>> data(m * k, std::vector<double>(static_cast<size_t>(maxRounds)));
  for (int t = 0; t < p.trials; ++t) {
    for (size_t i = 0; i < m; ++i) {
      const auto& pool = p.rounds.at(models[i]);
      const bool changed = models[i] == p.changedModel;
      std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
      for (int j = 0; j < maxRounds; ++j) {
        const CalibrationRound& c = pool[pick(rng)];
        std::vector<double> base = c.base, head = c.head;
        if (!p.keepBias && (rng() & 1))
          std::swap(base, head);
        if (changed) {
          switch (p.change.kind) {
          case SlowdownSpec::Kind::Shift:
            for (double& x : head)
              x += busyMs;
            break;
          case SlowdownSpec::Kind::Tail: {
            std::binomial_distribution<int> slowRuns(c.iterations, p.change.fraction);
            for (double& x : head)
              x += busyMs * slowRuns(rng) / c.iterations;
            break;
          }
          case SlowdownSpec::Kind::Spread:
            for (double& x : base)
              x += busyMs;
            for (double& x : head)
              x += 2 * busyMs * unit(rng);
            break;
          }
        }
        for (size_t v = 0; v < k; ++v)
          data[v * m + i][static_cast<size_t>(j)] =
              std::log(roundValueOf(head, values[v]) / roundValueOf(base, values[v]));
      }
    }
    // The sequential gate as analyze() runs it: closed comparisons keep the rounds they closed at.
    stats::SuiteState state = stats::startSuite(static_cast<int>(m * k));
    std::vector<stats::Comparison> family(m * k);
    while (!state.done) {
      int rounds = schedule.rounds[static_cast<size_t>(state.looksDone)];
      for (size_t c = 0; c < family.size(); ++c) {
        // A model takes rounds while any of its comparisons is open; once all are closed its data
        // ends at the look that closed the last of them.
        size_t model = c % m;
        int n = 0;
        for (size_t v = 0; v < k; ++v) {
          int closed = state.closedAtRounds[v * m + model];
          n = closed == 0 ? rounds : std::max(n, closed);
          if (closed == 0)
            break;
        }
        family[c].logRatios.assign(data[c].begin(), data[c].begin() + n);
      }
      stats::applyLook(state, schedule, p.policy.alpha, family, common);
    }
    roundsSum += state.roundsUsed;
    bool otherFlag = false;
    for (size_t i = 0; i < m; ++i) {
      Verdict first = state.verdict[i];
      Verdict tail = k > 1 ? state.verdict[m + i] : first;
      if (k > 1 && first == Verdict::Improvement && tail != Verdict::Improvement)
        first = Verdict::Inconclusive; // an improvement needs both round values
      ++res.firstVerdicts[models[i]][stats::verdictName(first)];
      if (k > 1)
        ++res.tailVerdicts[models[i]][stats::verdictName(tail)];
      bool flagged = first == Verdict::Regression || first == Verdict::Improvement || tail == Verdict::Regression ||
                     tail == Verdict::Improvement;
      noChange[models[i]] += first == Verdict::NoChange && tail == Verdict::NoChange;
      if (models[i] == p.changedModel) {
        detected += first == Verdict::Regression || tail == Verdict::Regression;
        improved += first == Verdict::Improvement;
      } else {
        otherFlag = otherFlag || flagged;
      }
    }
    suiteFp += otherFlag;
  }
  res.detected = stats::rateEstimate(p.changedModel.empty() ? 0 : detected, p.trials);
  res.changedImprovement = stats::rateEstimate(improved, p.trials);
  res.falsePositivePerSuite = stats::rateEstimate(suiteFp, p.trials);
  for (const auto& mname : models)
    res.noChange[mname] = stats::rateEstimate(noChange[mname], p.trials);
  res.meanRounds = roundsSum / p.trials;
  return res;
}

} // namespace dynqual::diff
