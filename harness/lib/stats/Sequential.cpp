#include "dynqual/stats/Sequential.h"

#include <boost/math/distributions/normal.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace dynqual::stats {
namespace {

/// Lan-DeMets O'Brien-Fleming-type spending: alpha(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t)).
double obfSpent(double t, double alpha) {
  if (t <= 0)
    return 0;
  if (t >= 1)
    return alpha;
  boost::math::normal_distribution<double> z;
  double zq = boost::math::quantile(z, 1 - alpha / 2);
  return 2 * boost::math::cdf(boost::math::complement(z, zq / std::sqrt(t)));
}

} // namespace

void LookSchedule::validate() const {
  if (rounds.empty())
    throw std::invalid_argument("look schedule has no looks");
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (rounds[i] < 1)
      throw std::invalid_argument("look at " + std::to_string(rounds[i]) + " rounds (must be >= 1)");
    if (i > 0 && rounds[i] <= rounds[i - 1])
      throw std::invalid_argument("look rounds must be strictly increasing");
  }
  if (plannedLooks != 0 && plannedLooks < static_cast<int>(rounds.size()))
    throw std::invalid_argument("look schedule has more looks than planned");
  if (plannedMaxRounds != 0 && plannedMaxRounds < rounds.back())
    throw std::invalid_argument("look schedule goes past its planned final rounds");
}

double LookSchedule::alphaAt(int lookIndex, double totalAlpha) const {
  validate();
  if (lookIndex < 0 || lookIndex >= static_cast<int>(rounds.size()))
    throw std::invalid_argument("look index " + std::to_string(lookIndex) + " outside the schedule");
  if (!(totalAlpha > 0 && totalAlpha < 1))
    throw std::invalid_argument("total alpha " + std::to_string(totalAlpha) + " outside (0, 1)");
  int k = plannedLooks ? plannedLooks : static_cast<int>(rounds.size());
  switch (spending) {
  case AlphaSpending::Bonferroni:
    return totalAlpha / k;
  case AlphaSpending::OBrienFlemingLanDeMets: {
    double final = plannedMaxRounds ? plannedMaxRounds : rounds.back();
    double t = rounds[static_cast<size_t>(lookIndex)] / final;
    double t0 = lookIndex == 0 ? 0.0 : rounds[static_cast<size_t>(lookIndex - 1)] / final;
    return obfSpent(t, totalAlpha) - obfSpent(t0, totalAlpha);
  }
  }
  throw std::invalid_argument("unknown alpha spending");
}

LookSchedule LookSchedule::cutToBudget(int maxRounds) const {
  validate();
  if (maxRounds < rounds.front())
    throw std::invalid_argument("a budget of " + std::to_string(maxRounds) + " rounds is before the first look (" +
                                std::to_string(rounds.front()) + " rounds)");
  LookSchedule cut = *this;
  cut.plannedLooks = plannedLooks ? plannedLooks : static_cast<int>(rounds.size());
  cut.plannedMaxRounds = plannedMaxRounds ? plannedMaxRounds : rounds.back();
  cut.rounds.clear();
  for (int r : rounds)
    if (r <= maxRounds)
      cut.rounds.push_back(r);
  return cut;
}

SuiteState startSuite(int comparisons) {
  if (comparisons < 0)
    throw std::invalid_argument("a suite of " + std::to_string(comparisons) + " comparisons");
  SuiteState s;
  s.verdict.assign(static_cast<size_t>(comparisons), Verdict::Inconclusive);
  s.closedAtRounds.assign(static_cast<size_t>(comparisons), 0);
  s.done = comparisons == 0;
  return s;
}

std::vector<Decision> applyLook(SuiteState& state, const LookSchedule& schedule, double totalAlpha,
                                const std::vector<Comparison>& family, const DecisionParams& common) {
  if (state.done)
    throw std::invalid_argument("the suite is already decided");
  if (family.size() != state.verdict.size())
    throw std::invalid_argument("look over " + std::to_string(family.size()) + " comparisons, the suite has " +
                                std::to_string(state.verdict.size()));
  int look = state.looksDone;
  double alpha = schedule.alphaAt(look, totalAlpha);
  int rounds = schedule.rounds[static_cast<size_t>(look)];
  // A closed comparison needs no more rounds: it may hold fewer (its model stopped taking them).
  for (size_t i = 0; i < family.size(); ++i) {
    auto n = static_cast<int>(family[i].logRatios.size());
    bool open = state.closedAtRounds[i] == 0;
    if (open ? n != rounds : (n < state.closedAtRounds[i] || n > rounds))
      throw std::invalid_argument("look " + std::to_string(look) + " is at " + std::to_string(rounds) + " rounds, " +
                                  (open ? "an open" : "a closed") + " comparison has " + std::to_string(n));
  }
  std::vector<Decision> decisions = decideFamily(family, alpha, common);
  bool allClosed = true;
  for (size_t i = 0; i < family.size(); ++i) {
    if (state.closedAtRounds[i] == 0 && decisions[i].verdict != Verdict::Inconclusive) {
      state.verdict[i] = decisions[i].verdict;
      state.closedAtRounds[i] = rounds;
    }
    allClosed = allClosed && state.closedAtRounds[i] != 0;
  }
  state.looksDone = look + 1;
  state.roundsUsed = rounds;
  state.done = allClosed || state.looksDone == static_cast<int>(schedule.rounds.size());
  return decisions;
}

} // namespace dynqual::stats
