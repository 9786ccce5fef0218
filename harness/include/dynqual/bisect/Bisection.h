#pragma once
// `dynqual bisect`: which commit of a range changed a model's speed (docs/commands/bisect.md).
// The search only orders steps and reads verdicts; building and measuring are callbacks, so the
// command plugs in the gate's builds and A/B engine and the tests plug in a scripted range.
#include "dynqual/stats/Decision.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dynqual::bisect {

/// One commit of the range, oldest first; index 0 is --good, the last is --bad.
struct Revision {
  std::string sha;     ///< 40 hex digits
  std::string subject; ///< first line of the commit message
};

/// One model's timed comparison of a step (ratio = head / base of the timed metric; lower is better).
struct ModelChange {
  std::string model;
  std::string metric; ///< "cpu_time_ms" or "latency_ms"
  stats::Verdict verdict = stats::Verdict::Inconclusive;
  double ratio = 1, ciLow = 1, ciHigh = 1; ///< Hodges-Lehmann estimate and its CI (the gate's)
  double p = 1;                            ///< Wilcoxon signed-rank, two-sided
  int rounds = 0;                          ///< ABBA rounds this model ran
  int decidedAtRounds = 0;                 ///< the look that closed it; 0 when none did
};

/// What one A/B of revision `base` against revision `head` measured.
struct Measured {
  /// Non-empty when the pair could not be compared (an arm failed its accuracy check, or an arm
  /// could not run): the head revision is then skipped as untestable, like a failed build.
  std::string error;
  std::vector<ModelChange> changes;
  int rounds = 0;      ///< ABBA rounds run (the most of any model)
  int processRuns = 0; ///< timed process runs of both arms (4 per model and round)
  double seconds = 0;  ///< wall time of the comparison
  int64_t runId = 0;   ///< store run of the step; 0 when not recorded
};

/// Builds revision `index`; returns "" when it built (or was cached), else one line saying why
/// not (the build log's path included). Called at most once per index.
using BuildFn = std::function<std::string(size_t index)>;
/// Compares revision `head` against revision `base` (indexes into the range) on `models`.
using MeasureFn = std::function<Measured(size_t base, size_t head, const std::vector<std::string>& models)>;

/// What a step did and why.
struct Step {
  enum class Kind { Endpoints, Probe, Skip, Verify };
  Kind kind = Kind::Probe;
  size_t base = 0, head = 0; ///< revisions compared (Skip: head is the skipped revision)
  std::vector<std::string> models;
  Measured measured;
  std::string note; ///< what the step decided, one line per track, or why the revision was skipped
};

/// "endpoints", "probe", "skip", "verify".
const char* stepKindName(Step::Kind k);

/// One change being located: a model whose verdict between the endpoints was a regression or an
/// improvement. [good, bad] narrows until bad is good's next testable revision.
struct Track {
  std::string model, metric;
  stats::Verdict direction = stats::Verdict::Regression; ///< Regression or Improvement
  double endpointRatio = 1;                              ///< head/base of the endpoint comparison
  double endpointLow = 1, endpointHigh = 1;              ///< its interval
  size_t good = 0;         ///< latest revision measured to behave like --good for this model
  size_t bad = 0;          ///< earliest revision measured to behave like --bad
  bool byEstimate = false; ///< some step decided from the point estimate (its verdict was inconclusive)
  /// Revisions strictly between good and bad that were skipped: the culprit is then one of
  /// good+1..bad, not bad alone.
  std::vector<size_t> skippedInside;
  /// The verification of bad against good (the culprit's own change), when run.
  std::optional<ModelChange> verified;
  bool confirmed = false;         ///< verification gave the track's direction
  std::vector<std::string> notes; ///< e.g. an opposite change seen inside the interval
};

struct Options {
  bool verify = true;            ///< compare each culprit with its parent (the culprit's interval)
  bool trackImprovements = true; ///< locate improvements between the endpoints too
};

/// Exit codes of `dynqual bisect` (the gate's meanings): 0 every regression located and
/// confirmed, 2 usage, 3 no regression between the endpoints or a culprit left ambiguous or
/// unconfirmed, 4 an endpoint does not build or cannot be measured.
enum ExitCode { kLocated = 0, kUsage = 2, kInconclusive = 3, kInfra = 4 };

struct Outcome {
  std::vector<Revision> revisions;
  std::vector<Step> steps;
  std::vector<Track> tracks;
  std::vector<size_t> skipped;              ///< revisions that did not build or could not be measured
  std::vector<size_t> built;                ///< revisions built (or found in the cache), in build order
  std::vector<ModelChange> endpointChanges; ///< every model of the endpoint comparison
  int exitCode = kLocated;
  std::string summary;      ///< one line: the culprit(s), or why there is none
  int totalRounds = 0;      ///< ABBA rounds over every step
  int totalProcessRuns = 0; ///< timed process runs over every step
  double seconds = 0;       ///< wall time of every step's comparison
};

/// Locates the changes between revisions.front() (good) and revisions.back() (bad).
///
/// 1. Builds both endpoints (a failure is exit 4 naming the revision) and compares bad against
///    good on `models`. No regression: exit 3, the summary giving each model's measured change.
/// 2. Each regressed model (and improved one, Options::trackImprovements) is a Track. While a
///    track has an untested, unskipped revision strictly inside (good, bad), the widest track's
///    midpoint (the candidate nearest (good+bad)/2) is built and compared against revision 0 on
///    every model whose track contains it, so one A/B narrows several tracks. A verdict in the
///    track's direction moves bad to the midpoint; no-change moves good; an inconclusive verdict
///    decides by the point estimate (nearer bad when |log ratio| >= |log endpointRatio| / 2 with
///    the same sign) and marks the track byEstimate; the opposite verdict is noted (a second change
///    for that model) and moves good. A midpoint that does not build, or whose comparison reports
///    an error, is skipped (git bisect's exit 125) and another candidate is taken.
/// 3. With Options::verify, each culprit is compared against its track's good revision (one A/B
///    per distinct pair); the verdict and interval are the culprit's own change.
/// Exit 0 when every regression track ends on one culprit confirmed by its verification, else 3.
/// Never throws for a failed build or measurement; exceptions of the callbacks propagate.
Outcome runBisection(const std::vector<Revision>& revisions, const std::vector<std::string>& models,
                     const BuildFn& build, const MeasureFn& measure, const Options& options = {});

/// The bisection as Markdown: the summary, the culprit(s) with interval, every step with its
/// verdicts and rounds, skipped revisions, totals. `context` lines are printed under the title.
std::string renderMarkdown(const Outcome& o, const std::vector<std::string>& context = {});

/// The bisection as a JSON document (format "dynqual-bisect", version 1), same content.
std::string renderJson(const Outcome& o, const std::vector<std::pair<std::string, std::string>>& context = {});

} // namespace dynqual::bisect

namespace dynqual::bisect {

/// The revisions of `good`..`bad` in `repo`, oldest first: `good` itself, then
/// `git rev-list --reverse --first-parent good..bad` (so `bad` is last). Merged branches count as
/// their merge commit, as git bisect --first-parent does. Throws std::runtime_error naming the
/// revision when one names no commit, "--good X is not an ancestor of --bad Y" when the range is
/// not a line of history, and "no revision between ..." when good == bad.
std::vector<Revision> revisionRange(const std::string& repo, const std::string& good, const std::string& bad);

} // namespace dynqual::bisect
