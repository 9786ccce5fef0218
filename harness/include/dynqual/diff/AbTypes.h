#pragma once
// Typed inputs and results of the differential engine (`dynqual ab`, `gate`, `calibrate`): one
// struct from where a value is measured to where it is stored and rendered.
#include "dynqual/compare/Compare.h"
#include "dynqual/diff/Slowdown.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/stats/Decision.h"
#include "dynqual/stats/Sequential.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dynqual::diff {

/// The comparison policy. Nothing a run measures can change it (docs/metrics/gate-decision.md).
/// Which statistic of an arm's samples in a round is that round's value
/// (docs/metrics/round-value.md): the minimum, the lower-half mean (stats::lowerHalfMean), the
/// mean, the median, or the nearest-rank 90th percentile (stats::nearestRankPercentile).
enum class RoundValue { Min, LowerHalfMean, Mean, Median, P90 };

/// "min", "lower-half-mean", "mean", "median" or "p90".
const char* roundValueName(RoundValue v);
/// The inverse of roundValueName; throws std::invalid_argument naming any other text.
RoundValue parseRoundValue(const std::string& text);

struct Policy {
  double alpha = 0.05;  ///< suite-level family-wise error rate, split over looks, Holm over the suite
  double margin = 0.02; ///< m: changes within [1-m, 1+m] of the ratio are "no change"
  std::vector<int> looks = stats::kDefaultLookRounds; ///< rounds at which the data is analysed
  int bootstrapResamples = 2000;
  uint64_t seed = 1;                       ///< bootstrap and generated-input seed
  RoundValue roundValue = RoundValue::Min; ///< per-round value of each arm
  /// A second comparison per timed model on another round value, in the same Holm family
  /// (docs/metrics/gate-decision.md, "What a regression is"): its metric is the timed metric with
  /// ".<name>" appended. A model's improvement needs both comparisons to improve. None: one
  /// comparison per model (runs stored before it existed).
  std::optional<RoundValue> tailValue;
};

/// The metric whose comparisons decide the verdict (docs/metrics/gate-decision.md, "Decision
/// metric"); the other one is reported beside it and never changes the exit code.
///  - Measured: the timing samples on Measurement::clock (timingMetric: latency_ms or cpu_time_ms).
///  - ModelledDeviceTime: modelled_device_ms, the modelled device time of each timed run on sim
///    (Counters::modelledDeviceNs / 1e6; docs/metrics/modelled-device-time.md): deterministic,
///    so a comparison whose every sample of each arm is one value is decided exactly after one
///    round (analyze). dq arms on sim only.
enum class DecisionMetric { Measured, ModelledDeviceTime };

/// The decision metric when --metric is not given: the one place to change the default.
inline constexpr DecisionMetric kDefaultDecisionMetric = DecisionMetric::Measured;

/// "measured" or "modelled-device-time" (the values of --metric).
const char* decisionMetricName(DecisionMetric m);
/// The inverse of decisionMetricName; throws std::invalid_argument naming any other text.
DecisionMetric parseDecisionMetric(const std::string& text);

/// Name of the modelled device time metric: per timed run, ms.
inline constexpr const char* kModelledDeviceMetric = "modelled_device_ms";

/// True for a deterministic metric: modelled_device_ms and its ".<round value>" forms.
bool isDeterministicMetric(const std::string& metric);

/// How the two arms' timing samples are interleaved (docs/metrics/gate-decision.md).
/// Process: each ABBA position is its own process taking samplesPerPosition samples. Sample: one
/// process per arm and round (runner serve mode), both bound to one CPU, sampled in alternation
/// one batch at a time in the ABBA order, so slow phases of the machine hit both arms alike.
enum class Interleave { Process, Sample };

/// "process" or "sample".
const char* interleaveName(Interleave i);

/// How the suite is measured.
struct Measurement {
  int samplesPerPosition = 5; ///< samples each ABBA position takes
  int warmup = 2;             ///< discarded runs at the start of each position
  double minSampleMs = 1.0;   ///< one sample batches runs lasting at least this long, ms
  double budgetSeconds = 600; ///< wall budget for the timed rounds; it may only cut looks short
  /// model name -> the change injected into that model's head arm (the gate's self-test): busy
  /// work sized from the base measured in one position before round 0 (diff::SlowdownSpec).
  std::map<std::string, SlowdownSpec> injectSlowdown;
  /// The clock of the timing samples (resolved before the run; `--clock auto` picks ThreadCpu
  /// when both arms are dq on sim and speak arm protocol 2, ProcessCpu when both are runner arms
  /// speaking runner protocol 2, Wall otherwise).
  exec::TimingClock clock = exec::TimingClock::Wall;
  /// Also time compiles: in every round each model compiles once per arm (base first in even
  /// rounds, head first in odd ones), each in a fresh `dynqual compile` child, and the compile
  /// time goes through the same statistics as the run time (dq arms only).
  bool compileTime = false;
  /// The metric that decides; the other is measured beside it where the arms provide it.
  DecisionMetric metric = kDefaultDecisionMetric;
  Interleave interleave = Interleave::Process;
  /// The CPU both arms are bound to under Interleave::Sample (-1: not bound).
  int cpu = -1;
};

/// Name of the timed metric a clock measures: "latency_ms" (wall) or "cpu_time_ms" (thread-cpu
/// and process-cpu). Both are per-run times in ms, lower is better; their noise is calibrated
/// separately.
const char* timingMetric(exec::TimingClock clock);
/// The metric of the deciding samples: kModelledDeviceMetric for DecisionMetric::ModelledDeviceTime,
/// else timingMetric(m.clock).
std::string decidingMetric(const Measurement& m);
/// The metric reported beside it: timingMetric(m.clock) when the modelled time decides, else
/// kModelledDeviceMetric.
std::string sideMetric(const Measurement& m);

/// Name of the compile-time metric a clock measures: "compile_ms" (wall time of the compile
/// child) or "compile_cpu_ms" (its user + system CPU time). Per compile, ms, lower is better.
const char* compileMetric(exec::TimingClock clock);

struct AbOptions {
  std::vector<std::filesystem::path> models; ///< model folders (expanded suite)
  exec::Arm base, head;
  Policy policy;
  Measurement measure;
  compare::CompareOptions compare; ///< bitExact is set per model
  bool progress = false;           ///< progress line on stderr
  /// Leave untimed, with the verdict Identical, every model whose arms run byte-identical
  /// programs on byte-identical runtimes (diff::artifactsIdentical). The gate sets it (unless
  /// --force-timing); ab and calibrate time identical arms on purpose (A/A runs).
  bool skipIdentical = false;
  /// Layout variants of each arm's runtime (`gate --layouts K`, docs/gate-layouts.md): round r
  /// times every program of an arm on runtime [r mod K], so the rounds sample K code layouts and
  /// the between-layout variance is part of the noise the test sees. Empty: the arm's own
  /// runtime. When set, both have K entries.
  std::vector<std::filesystem::path> baseLayouts, headLayouts;
};

/// One timing sample. Latency per run in ms; round r uses the order base,head,head,base when r is
/// even and head,base,base,head when odd (ABBA), position 0..3 within the round. Under
/// Interleave::Sample the four positions repeat samplesPerPosition times (rep = the repetition).
struct Sample {
  std::string model;
  std::string arm; ///< "base" or "head"
  int round = 0;
  int position = 0;
  int rep = 0; ///< sample index within the position
  double valueMs = 0;
  int iterations = 1; ///< runs batched into this sample
};

/// Correctness of one case (stored data set or generated binding) on both arms.
struct CaseCheck {
  std::string name;                 ///< "test_data_set_0" or "binding ones"
  std::string baseError, headError; ///< execution errors ("" when it ran)
  compare::Comparison baseVsReference, headVsReference, headVsBase;
  bool passed = false;
};

/// Correctness of one model: every case, and the first failure.
struct ModelCheck {
  std::string model;
  bool bitExact = false; ///< data-movement graph: outputs compared bit for bit
  bool passed = false;
  std::string detail; ///< first failure, naming the arm and the case
  std::vector<CaseCheck> cases;
  std::map<std::string, uint64_t> baseCounters, headCounters; ///< first case, exact
  uint64_t baseArtifactBytes = 0, headArtifactBytes = 0;
  double baseCompileMs = 0, headCompileMs = 0;
  std::string baseVersion, headVersion;
  /// diff::programSha256 of each arm's compiled program (dq arms; "" when it was not compiled).
  std::string baseProgramSha256, headProgramSha256;
};

using Direction = stats::Direction;
using Verdict = stats::Verdict;

/// One statistical comparison (model x metric). Ratio = head / base.
struct MetricComparison {
  std::string model, metric, unit;
  Direction direction = Direction::LowerIsBetter;
  int rounds = 0;
  double baseMedian = 0, headMedian = 0; ///< medians of the per-round arm values
  double ratio = 1;                      ///< Hodges-Lehmann estimate of head/base
  double ciLow = 1, ciHigh = 1;          ///< its CI at level 1 - alphaUsed
  /// The equivalence interval behind "no change": the HL interval at level 1 - 2 a, a the look's
  /// level before Holm (stats::decideFamily); "no change" when it lies within the margin.
  double eqLow = 1, eqHigh = 1;
  double medianRatio = 1;           ///< exp(median of per-round log ratios)
  double bootLow = 1, bootHigh = 1; ///< percentile bootstrap CI of the median ratio, same level
  double p = 1;                     ///< Wilcoxon signed-rank, two-sided
  double pAdjusted = 1;             ///< Holm over the suite's comparisons at the deciding look
  double alphaUsed = 0;             ///< this comparison's alpha at that look (Holm step of the look's share)
  int decidedAtRounds = 0;          ///< rounds at the look that closed it; 0 while open
  std::vector<int> outlierRounds;   ///< rounds with |robust z| > 3.5 (flagged, kept)
  Verdict verdict = Verdict::Inconclusive;
  /// False for a comparison of the side metric (sideMetric): reported, never in the exit code,
  /// the verdict line's counts or the Holm family of the deciding comparisons.
  bool deciding = true;
  /// True when the comparison was decided exactly, without a test: a deterministic metric whose
  /// every sample of each arm is one value (analyze). p is then 0 when the ratio differs from 1
  /// and 1 when it is 1; the interval is [ratio, ratio].
  bool exact = false;
};

/// A deterministic signal that differs between the arms (exact, so any difference is definite).
struct CounterChange {
  std::string model, name;
  int64_t base = 0, head = 0;
};

/// What the machine looked like; compared between the start and the end of the timed rounds.
struct Environment {
  std::string machine;                          ///< CPU model, cores, memory
  double loadAverage1 = -1;                     ///< /proc/loadavg, -1 when unreadable
  std::string affinity;                         ///< CPUs this process may run on
  std::string governor;                         ///< cpufreq governor of cpu0, "" when unreadable
  std::map<std::string, std::string> kernelEnv; ///< env vars that change kernels (OMP_*, CUDA_*, ...)
  std::string gpuClocks;                        ///< nvidia-smi SM and memory clocks (MHz) per GPU, "" without a GPU
};

/// Everything one A/B run produced.
struct AbResult {
  std::vector<ModelCheck> checks;
  std::vector<Sample> samples; ///< samples of the deciding metric (decidingMetric)
  /// Samples of the side metric (sideMetric), same layout; empty when the arms do not provide it
  /// (the modelled time of a runner or hip arm). Kept in memory only: its comparisons are stored.
  std::vector<Sample> sideSamples;
  /// Compile-time samples (Measurement::compileTime): one per arm per round, position 0 or 1 in
  /// the round's compile order, rep 0, iterations 1.
  std::vector<Sample> compileSamples;
  std::vector<MetricComparison> comparisons;
  std::vector<CounterChange> counterChanges;
  Environment envStart, envEnd;
  std::vector<std::string> envWarnings;     ///< differences the verdict mentions
  std::vector<std::string> warnings;        ///< e.g. budget cannot reach the adjusted alpha
  std::vector<std::string> infraErrors;     ///< arms or runners that could not be used
  std::map<std::string, double> slowdownUs; ///< injected busy work per model, microseconds
  /// Sizes of the arms' binaries (dq arms): file name -> (base bytes, head bytes).
  std::map<std::string, std::pair<uint64_t, uint64_t>> binaryBytes;
  /// SHA-256 of the arms' runtime binaries (dq arms): file name -> (base, head), 64 hex digits.
  std::map<std::string, std::pair<std::string, std::string>> runtimeSha256;
  exec::TimingClock clock = exec::TimingClock::Wall; ///< clock of the samples (Measurement::clock)
  DecisionMetric metric = kDefaultDecisionMetric;    ///< Measurement::metric of the run
  RoundValue roundValue = RoundValue::Min;           ///< Policy::roundValue of the run
  /// Non-empty when the analysis (looks, alpha, margin, round value) was chosen after the data
  /// existed (an --import-device that departs from its plan): each entry says what changed. Such a
  /// result is exploratory: reports say so, and its timing verdicts never give exit code 1.
  std::vector<std::string> exploratory;
  int rounds = 0;
  int looksDone = 0; ///< looks analysed (the last one decided)
  bool budgetExhausted = false;
  double wallSeconds = 0;
};

/// Exit codes shared by ab, gate and calibrate: 0 pass, 1 regression or accuracy failure,
/// 2 usage or input error, 3 inconclusive within budget, 4 infrastructure error. Several apply:
/// 1 wins over 4, 4 over 3. An exploratory result's regression gives 3, not 1 (accuracy failures
/// do not depend on the analysis and still give 1).
enum ExitCode { kPass = 0, kRegression = 1, kUsage = 2, kInconclusive = 3, kInfra = 4 };
int exitCodeFor(const AbResult& r);
/// One line: "regression: tiny_bert latency_ms +9.8% [...]", "pass: 4 models no change", ...;
/// an exploratory result's line starts "EXPLORATORY (...)".
std::string verdictLine(const AbResult& r);

} // namespace dynqual::diff
