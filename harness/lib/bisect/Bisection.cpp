#include "dynqual/bisect/Bisection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace dynqual::bisect {

using stats::Verdict;

const char* stepKindName(Step::Kind k) {
  switch (k) {
  case Step::Kind::Endpoints:
    return "endpoints";
  case Step::Kind::Probe:
    return "probe";
  case Step::Kind::Skip:
    return "skip";
  case Step::Kind::Verify:
    return "verify";
  }
  return "?";
}

namespace {

std::string shortSha(const std::vector<Revision>& revs, size_t i) {
  return revs[i].sha.substr(0, 12);
}

std::string changeText(const ModelChange& c) {
  return fmt::format("{} {:+.1f}% [{:+.1f}%, {:+.1f}%] {} after {} rounds", stats::verdictName(c.verdict),
                     (c.ratio - 1) * 100, (c.ciLow - 1) * 100, (c.ciHigh - 1) * 100, c.metric, c.rounds);
}

const ModelChange* find(const Measured& m, const std::string& model) {
  for (const auto& c : m.changes)
    if (c.model == model)
      return &c;
  return nullptr;
}

Verdict opposite(Verdict v) {
  return v == Verdict::Regression ? Verdict::Improvement : Verdict::Regression;
}

/// Untested, unskipped revisions strictly inside the track's interval.
std::vector<size_t> candidates(const Track& t, const std::set<size_t>& skipped, const std::set<size_t>& probed) {
  std::vector<size_t> c;
  for (size_t i = t.good + 1; i < t.bad; ++i)
    if (!skipped.count(i) && !probed.count(i))
      c.push_back(i);
  return c;
}

void account(Outcome& o, const Measured& m) {
  o.totalRounds += m.rounds;
  o.totalProcessRuns += m.processRuns;
  o.seconds += m.seconds;
}

} // namespace

Outcome runBisection(const std::vector<Revision>& revisions, const std::vector<std::string>& models,
                     const BuildFn& build, const MeasureFn& measure, const Options& options) {
  Outcome o;
  o.revisions = revisions;
  if (revisions.size() < 2) {
    o.exitCode = kUsage;
    o.summary = "the range holds fewer than two revisions";
    return o;
  }
  const size_t last = revisions.size() - 1;
  std::set<size_t> skipped, probed;
  std::map<size_t, std::string> buildErrors;
  auto ensureBuilt = [&](size_t i) -> std::string {
    if (std::find(o.built.begin(), o.built.end(), i) != o.built.end())
      return "";
    if (auto it = buildErrors.find(i); it != buildErrors.end())
      return it->second;
    std::string err = build(i);
    if (err.empty())
      o.built.push_back(i);
    else
      buildErrors[i] = err;
    return err;
  };

  // 1. The endpoints.
  for (size_t i : {size_t{0}, last}) {
    std::string err = ensureBuilt(i);
    if (!err.empty()) {
      o.exitCode = kInfra;
      o.summary =
          fmt::format("the {} endpoint {} does not build: {}", i == 0 ? "good" : "bad", shortSha(revisions, i), err);
      return o;
    }
  }
  Step ends;
  ends.kind = Step::Kind::Endpoints;
  ends.base = 0;
  ends.head = last;
  ends.models = models;
  ends.measured = measure(0, last, models);
  account(o, ends.measured);
  o.endpointChanges = ends.measured.changes;
  if (!ends.measured.error.empty()) {
    o.exitCode = kInfra;
    o.summary = "the endpoints could not be compared: " + ends.measured.error;
    o.steps.push_back(ends);
    return o;
  }
  for (const auto& c : ends.measured.changes) {
    bool regress = c.verdict == Verdict::Regression;
    bool improve = c.verdict == Verdict::Improvement && options.trackImprovements;
    if (!regress && !improve)
      continue;
    Track t;
    t.model = c.model;
    t.metric = c.metric;
    t.direction = c.verdict;
    t.endpointRatio = c.ratio;
    t.endpointLow = c.ciLow;
    t.endpointHigh = c.ciHigh;
    t.good = 0;
    t.bad = last;
    o.tracks.push_back(t);
  }
  // Regressions first: they decide the exit code and are what a bisection is run for.
  std::stable_sort(o.tracks.begin(), o.tracks.end(), [](const Track& a, const Track& b) {
    return (a.direction == Verdict::Regression) > (b.direction == Verdict::Regression);
  });
  bool anyRegression =
      std::any_of(o.tracks.begin(), o.tracks.end(), [](const Track& t) { return t.direction == Verdict::Regression; });
  {
    std::string notes;
    for (const auto& c : ends.measured.changes)
      notes += (notes.empty() ? "" : "; ") + c.model + " " + changeText(c);
    ends.note = notes;
  }
  o.steps.push_back(ends);
  if (!anyRegression) {
    o.exitCode = kInconclusive;
    std::string measured;
    for (const auto& c : ends.measured.changes)
      measured += (measured.empty() ? "" : "; ") + c.model + " " + changeText(c);
    o.summary = "no regression between the endpoints, nothing to bisect: " +
                (measured.empty() ? "no model measured" : measured);
    o.tracks.clear();
    return o;
  }

  // 2. Probes: the widest track's midpoint, against revision 0, on every track containing it.
  for (;;) {
    Track* widest = nullptr;
    size_t widestCount = 0;
    for (auto& t : o.tracks) {
      size_t n = candidates(t, skipped, probed).size();
      if (n > widestCount) {
        widest = &t;
        widestCount = n;
      }
    }
    if (!widest)
      break;
    std::vector<size_t> cands = candidates(*widest, skipped, probed);
    double centre = (static_cast<double>(widest->good) + static_cast<double>(widest->bad)) / 2;
    size_t mid = *std::min_element(cands.begin(), cands.end(), [&](size_t a, size_t b) {
      return std::fabs(static_cast<double>(a) - centre) < std::fabs(static_cast<double>(b) - centre);
    });
    std::string err = ensureBuilt(mid);
    if (!err.empty()) {
      skipped.insert(mid);
      Step s;
      s.kind = Step::Kind::Skip;
      s.base = 0;
      s.head = mid;
      s.note = "does not build (skipped, like git bisect's exit 125): " + err;
      o.steps.push_back(s);
      continue;
    }
    Step s;
    s.kind = Step::Kind::Probe;
    s.base = 0;
    s.head = mid;
    for (const auto& t : o.tracks)
      if (t.good < mid && mid < t.bad)
        s.models.push_back(t.model);
    s.measured = measure(0, mid, s.models);
    account(o, s.measured);
    probed.insert(mid);
    if (!s.measured.error.empty()) {
      skipped.insert(mid);
      s.kind = Step::Kind::Skip;
      s.note = "could not be measured (skipped): " + s.measured.error;
      o.steps.push_back(s);
      continue;
    }
    std::string notes;
    for (auto& t : o.tracks) {
      if (!(t.good < mid && mid < t.bad))
        continue;
      const ModelChange* c = find(s.measured, t.model);
      std::string what;
      bool badSide = false;
      if (!c) {
        what = "not measured; counted as good";
      } else if (c->verdict == t.direction) {
        badSide = true;
        what = fmt::format("{} like --bad", stats::verdictName(c->verdict));
      } else if (c->verdict == Verdict::NoChange) {
        what = "no-change like --good";
      } else if (c->verdict == opposite(t.direction)) {
        t.notes.push_back(fmt::format("{} measured {} at {}: the range holds another change of {}", t.model,
                                      changeText(*c), shortSha(o.revisions, mid), t.model));
        what = fmt::format("{} (opposite to the endpoints): counted as good", stats::verdictName(c->verdict));
      } else {
        double half = std::fabs(std::log(t.endpointRatio)) / 2;
        double lr = std::log(c->ratio);
        badSide = std::fabs(lr) >= half && (lr > 0) == (t.endpointRatio > 1);
        t.byEstimate = true;
        what = fmt::format("inconclusive; the estimate {:+.1f}% is nearer {}", (c->ratio - 1) * 100,
                           badSide ? "--bad" : "--good");
      }
      if (badSide)
        t.bad = mid;
      else
        t.good = mid;
      notes += fmt::format("{}{}: {}", notes.empty() ? "" : "; ", t.model, what);
    }
    s.note = notes;
    o.steps.push_back(s);
  }

  // Skipped revisions left inside a track's final interval make its culprit ambiguous.
  for (auto& t : o.tracks)
    for (size_t i : skipped)
      if (t.good < i && i < t.bad)
        t.skippedInside.push_back(i);
  o.skipped.assign(skipped.begin(), skipped.end());

  // 3. Verification: each culprit against the track's good revision, one A/B per pair.
  if (options.verify) {
    std::map<std::pair<size_t, size_t>, std::vector<Track*>> pairs;
    for (auto& t : o.tracks)
      pairs[{t.good, t.bad}].push_back(&t);
    for (auto& [pair, ts] : pairs) {
      Step s;
      s.kind = Step::Kind::Verify;
      s.base = pair.first;
      s.head = pair.second;
      for (auto* t : ts)
        s.models.push_back(t->model);
      s.measured = measure(pair.first, pair.second, s.models);
      account(o, s.measured);
      std::string notes;
      for (auto* t : ts) {
        const ModelChange* c = find(s.measured, t->model);
        if (c) {
          t->verified = *c;
          t->confirmed = c->verdict == t->direction;
          // The culprit's own change explains only part of the endpoints' when the intervals
          // do not overlap: more changes of this model lie in the range.
          if (t->confirmed && (c->ciHigh < t->endpointLow || c->ciLow > t->endpointHigh))
            t->notes.push_back(fmt::format("{}'s own change {:+.1f}% differs from the endpoints' {:+.1f}%: the "
                                           "range holds more than one change of {}",
                                           o.revisions[t->bad].sha.substr(0, 12), (c->ratio - 1) * 100,
                                           (t->endpointRatio - 1) * 100, t->model));
        }
        notes += fmt::format("{}{}: {}", notes.empty() ? "" : "; ", t->model,
                             c ? std::string(t->confirmed ? "confirmed, " : "not confirmed, ") + changeText(*c)
                               : "not measured" + (s.measured.error.empty() ? "" : ": " + s.measured.error));
      }
      s.note = notes;
      o.steps.push_back(s);
    }
  }

  // The outcome.
  std::string summary;
  bool allLocated = true;
  for (const auto& t : o.tracks) {
    std::string where;
    if (t.skippedInside.empty())
      where = fmt::format("{} ({})", shortSha(o.revisions, t.bad), o.revisions[t.bad].subject);
    else
      where = fmt::format("one of {}..{} ({} skipped revisions between)", shortSha(o.revisions, t.good + 1),
                          shortSha(o.revisions, t.bad), t.skippedInside.size());
    bool ok = t.skippedInside.empty() && (!options.verify || t.confirmed);
    if (t.direction == Verdict::Regression && !ok)
      allLocated = false;
    std::string change = t.verified ? changeText(*t.verified)
                                    : fmt::format("{:+.1f}% between the endpoints", (t.endpointRatio - 1) * 100);
    summary += fmt::format("{}{} {} at {}: {}{}{}", summary.empty() ? "" : "; ", t.model,
                           t.direction == Verdict::Regression ? "slower" : "faster", where, change,
                           options.verify && !t.confirmed ? " (not confirmed by its own A/B)" : "",
                           t.byEstimate ? " (a step decided by estimate)" : "");
  }
  if (o.tracks.size() > 1)
    summary += fmt::format("; the range holds {} changes", o.tracks.size());
  for (const auto& t : o.tracks)
    if (!t.notes.empty())
      summary += "; " + t.notes.front();
  o.summary = summary;
  o.exitCode = allLocated ? kLocated : kInconclusive;
  return o;
}

} // namespace dynqual::bisect
