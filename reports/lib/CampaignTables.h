#pragma once
// Numbers of a campaign night shared by its Markdown, JSON and HTML renderers.
#include "dynqual/reports/CampaignReport.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dynqual::reports::detail {

/// The phases of a case, in the order they run (summary "ms" keys).
inline constexpr const char* kPhases[] = {"generate", "check", "reference", "compile", "run", "minimize", "coverage"};

/// Sums over the night's shards and counts over its buckets.
struct CampaignNumbers {
  int64_t shards = 0, unfinished = 0, cases = 0, valid = 0, findings = 0;
  double wallSeconds = 0; ///< summed over shards
  std::map<std::string, double> ms;
  std::map<std::string, int64_t> ops, invalid;
  /// Valid cases per feature ("OP|feature", summed over the shards that recorded features) and
  /// the valid cases of those shards, the percentages' base.
  std::map<std::string, int64_t> features;
  int64_t featureValid = 0;
  int64_t newBuckets = 0, knownBuckets = 0, fixedBuckets = 0, bucketsTonight = 0;
  int median = 0, p10 = 0, p90 = 0, maxNodes = 0; ///< nearest-rank quantiles of the sizes
};

CampaignNumbers campaignNumbers(const CampaignReportInput& in);

/// Counts of valid cases per size bin of 4 nodes ("1-4", "5-8", ...), empty bins included.
std::vector<std::pair<std::string, int64_t>> sizeHistogram(const std::vector<int>& sizes);

/// True when the night fails: a new bucket, or a failing qualify run (NightQualify::failing).
bool campaignFailed(const CampaignNumbers& n, const std::optional<NightQualify>& q);

/// "Result: FAIL, N new bucket(s) ...; qualify: 1 of 3 models failed (tiny_bert)" or
/// "Result: pass, no new bucket (...); qualify: 3 of 3 models passed".
std::string resultLine(const CampaignNumbers& n, const std::optional<NightQualify>& q);

/// One sentence on the qualify run: "run 7, finished: 3 models, 2 passed, 1 failed, 0 input
/// errors, 0 skipped", or why there is none.
std::string qualifySummary(const std::optional<NightQualify>& q);

} // namespace dynqual::reports::detail
