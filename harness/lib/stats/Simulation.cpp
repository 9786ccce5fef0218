#include "dynqual/stats/Simulation.h"

#include "dynqual/stats/HodgesLehmann.h"

#include <boost/random/chi_squared_distribution.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace dynqual::stats {

RateEstimate rateEstimate(std::int64_t count, std::int64_t total) {
  RateEstimate r;
  r.count = count;
  r.total = total;
  if (total == 0) {
    r.rate = r.low = r.high = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  ProportionInterval ci = clopperPearson(count, total, 0.95);
  r.rate = ci.estimate;
  r.low = ci.low;
  r.high = ci.high;
  return r;
}

namespace {

void checkParams(const SimulationParams& p) {
  if (p.residuals.size() < 2)
    throw std::invalid_argument("gate simulation needs at least 2 A/A residuals");
  for (double v : p.residuals)
    if (!std::isfinite(v))
      throw std::invalid_argument("gate simulation: residual " + std::to_string(v) + " is not finite");
  if (!(p.effect > -1) || !std::isfinite(p.effect))
    throw std::invalid_argument("gate simulation: effect " + std::to_string(p.effect) + " must be > -1");
  if (p.trials < 1 || p.comparisons < 1)
    throw std::invalid_argument("gate simulation needs trials >= 1 and comparisons >= 1");
  if (!(p.outlierRate >= 0 && p.outlierRate <= 1))
    throw std::invalid_argument("gate simulation: outlier rate " + std::to_string(p.outlierRate) + " outside [0, 1]");
  if (!(p.tailDf >= 0))
    throw std::invalid_argument("gate simulation: tail degrees of freedom " + std::to_string(p.tailDf) + " < 0");
  if (!std::isfinite(p.driftPerRound) || !std::isfinite(p.outlierMagnitude))
    throw std::invalid_argument("gate simulation: drift and outlier magnitude must be finite");
  if (!(p.alpha > 0 && p.alpha < 1))
    throw std::invalid_argument("gate simulation: alpha " + std::to_string(p.alpha) + " outside (0, 1)");
  p.schedule.validate();
}

} // namespace

SimulationResult simulateGate(const SimulationParams& params) {
  checkParams(params);
  std::vector<double> residuals = params.residuals;
  if (params.centre) {
    double c = hodgesLehmann(residuals);
    for (double& e : residuals)
      e -= c;
  }
  const LookSchedule& schedule = params.schedule;
  const int maxRounds = schedule.rounds.back();
  const int m = params.comparisons;
  const double shift = std::log1p(params.effect);
  const bool hasEffect = params.effect != 0;
  const bool bad = params.direction == Direction::LowerIsBetter ? params.effect > 0 : params.effect < 0;
  const Verdict trueFlag = bad ? Verdict::Regression : Verdict::Improvement;

  DecisionParams common;
  common.margin = params.margin;
  common.bootstrapResamples = 0;

  std::mt19937_64 rng(params.seed);
  const auto nres = static_cast<unsigned __int128>(residuals.size());
  auto uniform01 = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  boost::random::chi_squared_distribution<double> chi(params.tailDf > 0 ? params.tailDf : 1.0);

  std::vector<std::vector<double>> data(static_cast<size_t>(m), std::vector<double>(static_cast<size_t>(maxRounds)));
  std::vector<Comparison> family(static_cast<size_t>(m));
  for (auto& c : family)
    c.direction = params.direction;

  std::int64_t falsePos = 0, suiteFalsePos = 0, noChange = 0, detected = 0;
  double roundsSum = 0;
  for (int t = 0; t < params.trials; ++t) {
    for (auto& series : data) {
      for (int j = 0; j < maxRounds; ++j) {
        double e = residuals[static_cast<size_t>((static_cast<unsigned __int128>(rng()) * nres) >> 64)];
        if (params.tailDf > 0)
          e *= std::sqrt(params.tailDf / chi(rng));
        double r = e + shift + (j + 1) * params.driftPerRound;
        if (params.outlierRate > 0 && uniform01() < params.outlierRate)
          r += (rng() & 1) ? params.outlierMagnitude : -params.outlierMagnitude;
        series[static_cast<size_t>(j)] = r;
      }
    }
    SuiteState state = startSuite(m);
    while (!state.done) {
      auto rounds = static_cast<std::ptrdiff_t>(schedule.rounds[static_cast<size_t>(state.looksDone)]);
      for (size_t i = 0; i < family.size(); ++i)
        family[i].logRatios.assign(data[i].begin(), data[i].begin() + rounds);
      applyLook(state, schedule, params.alpha, family, common);
    }
    roundsSum += state.roundsUsed;
    bool anyFalse = false;
    for (Verdict v : state.verdict) {
      bool flagged = v == Verdict::Regression || v == Verdict::Improvement;
      bool right = hasEffect && v == trueFlag;
      if (flagged && !right) {
        ++falsePos;
        anyFalse = true;
      }
      detected += right;
      noChange += v == Verdict::NoChange;
    }
    suiteFalsePos += anyFalse;
  }
  SimulationResult r;
  std::int64_t total = static_cast<std::int64_t>(params.trials) * m;
  r.falsePositivePerComparison = rateEstimate(falsePos, total);
  r.falsePositivePerSuite = rateEstimate(suiteFalsePos, params.trials);
  r.noChange = rateEstimate(noChange, total);
  r.detection = rateEstimate(detected, total);
  r.meanRounds = roundsSum / params.trials;
  return r;
}

} // namespace dynqual::stats
