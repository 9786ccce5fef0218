#pragma once
// Sequential looks of the gate: a fixed schedule of interim analyses with alpha spent across
// them (docs/metrics/sequential-looks.md).
//
// Sources: Bonferroni split over K looks (a union bound); Lan & DeMets (1983), "Discrete sequential
// boundaries for clinical trials", Biometrika 70, for the O'Brien-Fleming-type spending function.
#include "dynqual/stats/Decision.h"

#include <vector>

namespace dynqual::stats {

/// Default looks, in rounds: 12, 16, 24, 32, 48, 64, 96, 128 (K = 8). At alpha = 0.05 split over
/// the 8 looks and Holm over up to 10 comparisons the smallest per-comparison level is 0.05 / 80,
/// which the exact test can reach from 12 rounds on (minRoundsForAlpha(0.05 / 80) == 12). The last
/// two looks are for A/A comparisons of the noisier models, whose equivalence interval had not
/// settled by 64 rounds in 8 of 40 model verdicts on sim (docs/metrics/gate-decision.md); a clear
/// change still closes at the early looks.
inline const std::vector<int> kDefaultLookRounds = {12, 16, 24, 32, 48, 64, 96, 128};
/// The default schedule under sample interleaving (runner arms in serve mode), where a round costs
/// two process starts and no compile, so four times the rounds fit the same budget.
inline const std::vector<int> kSampleInterleaveLookRounds = {16, 24, 32, 48, 64, 96, 128, 192, 256};

/// How the total alpha is spread over the looks.
enum class AlphaSpending {
  /// alpha / K at every look (K = planned looks).
  Bonferroni,
  /// Lan-DeMets O'Brien-Fleming-type spending alpha(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t)),
  /// t = rounds / planned final rounds; look k gets alpha(t_k) - alpha(t_{k-1}).
  OBrienFlemingLanDeMets,
};

struct LookSchedule {
  std::vector<int> rounds = kDefaultLookRounds; ///< rounds at each look, strictly increasing, >= 1
  AlphaSpending spending = AlphaSpending::Bonferroni;
  int plannedLooks = 0;     ///< K of the plan; 0: rounds.size(). Set by cutToBudget.
  int plannedMaxRounds = 0; ///< rounds at the planned last look; 0: rounds.back(). Set by cutToBudget.

  /// Nominal two-sided level of look `lookIndex` (0-based): what the comparisons at that look are
  /// tested at (before Holm across the suite). The levels of the planned looks sum to totalAlpha,
  /// so by the union bound the chance of any false flag over all looks is at most totalAlpha.
  /// (Using the spent increments as per-look levels ignores the correlation between looks; it is
  /// conservative, not the exact group-sequential boundary.) Throws std::invalid_argument for a
  /// bad schedule (see validate), lookIndex outside [0, rounds.size()) or totalAlpha outside (0, 1).
  double alphaAt(int lookIndex, double totalAlpha) const;

  /// The schedule under a budget of `maxRounds` rounds: looks after maxRounds are dropped and
  /// the planned K and final rounds are kept, so the remaining looks keep their levels and the
  /// alpha of the dropped looks is simply not spent. A budget only cuts looks short; it never
  /// adds one. Throws std::invalid_argument when no look fits (maxRounds < rounds.front()).
  LookSchedule cutToBudget(int maxRounds) const;

  /// Throws std::invalid_argument when rounds is empty, not strictly increasing, has a value < 1,
  /// or is longer than the plan (plannedLooks / plannedMaxRounds).
  void validate() const;
};

/// Where a suite stands across looks: comparison i is closed once a look gives it a decisive
/// verdict (Regression, Improvement or NoChange) and keeps that verdict; open ones read Inconclusive.
struct SuiteState {
  std::vector<Verdict> verdict;
  std::vector<int> closedAtRounds; ///< rounds at the closing look; 0 while open
  int looksDone = 0;
  int roundsUsed = 0; ///< rounds at the last look applied
  bool done = false;  ///< every comparison closed, or the last look applied
};

/// A fresh state for `comparisons` comparisons, all open.
SuiteState startSuite(int comparisons);

/// Applies look number state.looksDone: family.size() must equal the state's comparisons, each open
/// member must hold exactly schedule.rounds[look] rounds, and each closed one between the rounds it
/// closed at and that many (a model whose comparisons closed stops taking rounds, so its data
/// stays as it was). Decides the whole family with decideFamily at level
/// schedule.alphaAt(look, totalAlpha) (Holm over all M comparisons, closed ones included with the
/// p-value of the rounds they hold, so the family does not depend on earlier looks), closes the open comparisons
/// whose verdict is decisive, and returns the decisions of this look. Throws
/// std::invalid_argument for a done state, a size mismatch or the errors of decideFamily.
std::vector<Decision> applyLook(SuiteState& state, const LookSchedule& schedule, double totalAlpha,
                                const std::vector<Comparison>& family, const DecisionParams& common);

} // namespace dynqual::stats
