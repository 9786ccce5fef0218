// Notes from the stored calibrations of this machine: how many rounds a model's noise asks for,
// and which models were noisier in this run than in their history.
#include "AbNoiseNotes.h"

#include "dynqual/diff/AbStore.h"
#include "dynqual/stats/Decision.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/stats/Sequential.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fs = std::filesystem;

namespace dynqual::cli {

std::vector<std::string> sizingFromCalibration(store::Store& db, const std::string& machine,
                                               const std::vector<fs::path>& models, const diff::Policy& p,
                                               const std::string& metric, int comparisons) {
  std::vector<std::string> notes;
  if (models.empty() || comparisons < 1)
    return notes;
  stats::LookSchedule schedule;
  schedule.rounds = p.looks;
  // "No change" is an equivalence test at the look's own level a, not Holm's (stats::decideFamily):
  // its interval is the two-sided one at 1 - 2 a, however many comparisons there are.
  double alpha = 2 * schedule.alphaAt(0, p.alpha);
  for (const auto& m : models) {
    auto history = diff::noiseHistory(db, machine, m.filename().string(), metric);
    if (history.empty())
      continue;
    double sigma = history.back().scaledMad;
    int need = stats::roundsToSettle(sigma, std::max(p.margin, 1e-9), alpha);
    notes.push_back(fmt::format("{}: calibrated noise {:.2f}% per round asks for about {} rounds to settle within "
                                "+-{}%{}",
                                m.filename().string(), sigma * 100, need, p.margin * 100,
                                need > p.looks.back() ? fmt::format(" -- more than the last look ({}); expect "
                                                                    "inconclusive, or lengthen --looks",
                                                                    p.looks.back())
                                                      : ""));
  }
  return notes;
}

std::vector<std::string> noisierThanHistory(store::Store& db, const std::string& machine, const diff::AbResult& r) {
  std::vector<std::string> notes;
  for (const auto& n : diff::estimateNoise(r.samples, r.roundValue)) {
    auto history = diff::noiseHistory(db, machine, n.model, diff::timingMetric(r.clock));
    if (history.empty())
      continue;
    std::vector<double> past;
    for (const auto& h : history)
      past.push_back(h.scaledMad);
    double typical = stats::median(past);
    if (n.scaledMad > 2 * typical)
      notes.push_back(fmt::format("{}: this run's noise {:.2f}% per round is more than twice its calibrated {:.2f}% "
                                  "on this machine: the machine is noisier than its history",
                                  n.model, n.scaledMad * 100, typical * 100));
  }
  return notes;
}

} // namespace dynqual::cli
