#pragma once
// The interleaved comparison of generation engines (scripts/gpu-generate-versus.sh on the GPU
// machine writes the runs; `dynqual bench generate --import` computes the comparison here):
// per-cycle TPS ratios, their median with a bootstrap interval, the Hodges-Lehmann ratio with its
// interval, and the one-sided Wilcoxon signed-rank p-value, all from harness/lib/stats
// (docs/metrics/tps.md, "TPS ratio of two engines, interleaved").
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dynqual::store {

/// One run of an interleaved comparison: a generation document (GenerationRecords.h) plus the
/// "versus_cycle" (integer >= 0) and "versus_engine" (a name) gpu-generate-versus.sh adds.
struct VersusRun {
  int cycle = 0;
  std::string engine;
  std::vector<double> tps;    ///< tps.samples: one per timed repetition (tokens/s)
  std::vector<double> ttftMs; ///< ttft_ms.samples: one per timed repetition (ms)
  std::string where;          ///< "FILE:LINE", for messages
};

/// The versus run of `doc`, or nothing when the document has neither "versus_cycle" nor
/// "versus_engine" (a plain generation document). Throws std::runtime_error starting with `where`
/// ("FILE:LINE") when only one of them is present, the cycle is not an integer
/// >= 0, the engine not a non-empty string, or tps.samples / ttft_ms.samples is missing, empty or
/// holds a value that is not a positive finite number.
std::optional<VersusRun> versusRun(const nlohmann::json& doc, const std::string& where);

/// One engine against a base over the cycles that ran both.
struct VersusComparison {
  struct Cycle {
    int cycle = 0;
    double engineTps = 0, baseTps = 0, ratio = 0; ///< TPS = median of the run's samples (tokens/s)
  };
  std::string engine, base;
  std::vector<Cycle> perCycle; ///< ascending cycle
  int ahead = 0;               ///< cycles with ratio > 1
  double medianRatio = 0;      ///< median of the per-cycle ratios
  double bootLow = 0, bootHigh = 0;
  double hlRatio = 1, hlLow = 0, hlHigh = 0; ///< exp of the HL estimate and interval of log ratios
  double hlCoverage = 1;                     ///< achieved coverage of the HL interval
  double pOneSided = 1;                      ///< P(W+ >= observed) of the log ratios
  bool pExact = true;                        ///< exact permutation p (n <= 50), else normal approximation
  double engineTpsMedian = 0, baseTpsMedian = 0, engineTtftMsMedian = 0, baseTtftMsMedian = 0;
};

/// Confidence of both intervals, bootstrap resamples and seed (the values of the former script).
inline constexpr double kVersusConfidence = 0.95;
inline constexpr int kVersusResamples = 10000;
inline constexpr unsigned kVersusSeed = 1;

/// The engine every other one is compared with when none is named: "torch" when it ran, else the
/// first engine in the order of the runs (gpu-generate-versus.sh's choice).
std::string defaultVersusBase(const std::vector<VersusRun>& runs);

/// Compares every engine with `base`, and every later non-base engine with the first non-base one
/// (engines in the order they first appear). Per cycle i that ran both:
///   r_i = median(TPS samples of the engine's run) / median(TPS samples of the base's run)
/// (stats::median), then
///  - medianRatio = median(r_i); bootLow/bootHigh: 95 % percentile bootstrap interval of that
///    median (stats::bootstrapMedianInterval, 10 000 resamples, seed 1; Efron & Tibshirani 1993,
///    ch. 13.3; docs/metrics/bootstrap-ci.md);
///  - hlRatio, hlLow, hlHigh: exp of the Hodges-Lehmann estimate and 95 % interval of log r_i
///    (stats::hodgesLehmannInterval, all cycles; (0, +inf) when 2^-n > 0.025, i.e. n < 6;
///    docs/metrics/hodges-lehmann.md);
///  - pOneSided: one-sided Wilcoxon signed-rank p-value of log r_i, alternative "the engine is
///    faster" (stats::signedRankTest pGreater: zeros dropped, midranks, exact for n <= 50;
///    docs/metrics/wilcoxon-signed-rank.md);
///  - ahead = #{r_i > 1}; medians over the cycles of each side's run medians of TPS and TTFT.
/// A pair without a common cycle gives no comparison. Throws std::runtime_error naming the run
/// ("FILE:LINE") for a second run of one engine in one cycle, when no engine is named `base`
/// ("no engine named 'X' (engines: ...)"), or when no pair shares a cycle ("no cycle with both
/// engines").
std::vector<VersusComparison> compareVersus(const std::vector<VersusRun>& runs, const std::string& base);

/// {"format": "dynqual-generation-versus", "version": 1, "comparisons": [...]}: per comparison
/// engine, base, cycles, ahead, median_ratio, ci95 [low, high] (bootstrap), hl_ratio,
/// hl_ci95 [low, high] (an unbounded end is null), hl_coverage, p_one_sided, p_method ("exact" or
/// "normal"), the four medians and per_cycle [{cycle, engine_tps, base_tps, ratio}].
nlohmann::json versusJson(const std::vector<VersusComparison>& comparisons);

/// Markdown for people: per comparison, the per-cycle table and one summary line.
std::string versusMarkdown(const std::vector<VersusComparison>& comparisons);

} // namespace dynqual::store
