#pragma once
// The fuzzer's tables read as nights, shards and buckets (schema 6, docs/store.md,
// docs/fuzz/buckets.md), and their merge from shard databases. Shared by `dynqual fuzz triage`,
// `dynqual db merge` and the campaign report, so each reads the same numbers.
#include "dynqual/store/Store.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace dynqual::store {

/// One campaign shard (a fuzz_campaigns row plus counts from fuzz_campaign_cases).
struct FuzzShard {
  std::string campaign, night, startedAt, endedAt, revision; ///< endedAt "" = unfinished
  double wallSeconds = 0;
  int64_t cases = 0, valid = 0, findings = 0;
  nlohmann::json summary; ///< {"ms": {...}, "op_counts": {...}, "counters": {...}, "invalid": {...}}
};

/// One bucket as triage shows it.
struct FuzzBucket {
  std::string bucket; ///< 16 hex digits
  std::string key;    ///< symptom|pass|origin|message
  std::string symptom, pass, origin, message;
  std::string status;      ///< "new" (first seen this night), "known", or "fixed"
  int64_t hits = 0;        ///< findings in the whole store
  int64_t hitsTonight = 0; ///< findings in the night's shards
  std::string firstCampaign, firstSeen, firstRevision, firstNight;
  std::string lastCampaign, lastSeen;
  // The smallest reproducer: fewest nodes after minimization, then fewest input elements.
  int64_t nodes = 0, elements = 0;
  uint64_t seed = 0;
  std::string caseDir, reproducer, detail, variant, knob, signature, binding;
  std::string graph;                  ///< the smallest reproducer's graph as text (one node a line)
  std::vector<uint64_t> exampleSeeds; ///< up to 5 other seeds of the bucket
  int64_t signatures = 0;             ///< distinct signatures folded into it
  std::string corpusCase;             ///< the corpus case added for it, or ""
  std::string checkedAt, checkedRevision;
  int passes = -1; ///< last corpus check of its case: 1 pass, 0 fail, -1 none
};

/// Nights in the store, oldest first (distinct fuzz_campaigns.night).
std::vector<std::string> fuzzNights(Store& store);

/// The shards of `night` ("" = every shard), oldest first.
std::vector<FuzzShard> fuzzShards(Store& store, const std::string& night);

/// One night in numbers, for the history chart.
struct FuzzNightStats {
  std::string night;
  int64_t shards = 0, unfinished = 0, cases = 0, valid = 0, findings = 0;
  int64_t buckets = 0;    ///< distinct buckets hit that night
  int64_t newBuckets = 0; ///< buckets first seen that night
  double wallSeconds = 0; ///< summed over shards
};

/// Every night, oldest first (the last `limit`).
std::vector<FuzzNightStats> fuzzNightStats(Store& store, int limit = 30);

/// Node counts of the valid cases of `night`'s shards ("" = all), for the size distribution.
std::vector<int> fuzzCaseSizes(Store& store, const std::string& night);

/// Every bucket the store knows, with its status relative to `night` ("" = the newest night):
/// new when its first finding is in a shard of that night; fixed when its corpus case passed at
/// the last check and no finding of it came after that check; known otherwise. Sorted new, known,
/// fixed, then by hits (descending). Findings recorded before schema 6 (no bucket) are left out,
/// and so are buckets first seen on a later night than `night`.
std::vector<FuzzBucket> fuzzBuckets(Store& store, const std::string& night = "");

/// Records what a corpus check of a bucket's case found (`passes`), and its corpus case name
/// when not empty. One transaction. Throws StoreError.
void setBucketStatus(Store& store, const std::string& bucket, const std::string& corpusCase, bool checked, bool passes,
                     const std::string& revision);

/// The bucket whose id starts with `prefix` (at least 4 hex digits). Throws StoreError when none
/// or more than one matches, naming `dynqual fuzz triage` to list them.
FuzzBucket findBucket(Store& store, const std::string& prefix);

/// Rows of the fuzz tables added by one mergeFuzzTables call.
struct FuzzMergeCounts {
  int64_t cases = 0, findings = 0, shards = 0, unfinished = 0;
};

/// Copies the fuzz rows of `shard` (opened read-only by the caller) into `into`, in one
/// transaction: cases and findings that are already there (same campaign, case, signature) are
/// skipped, so merging a shard twice adds nothing; a shard row is taken over when it is new or
/// when the incoming one is further along (finished, or more wall time). Signatures' hits are
/// recounted. Returns what was added; `unfinished` counts merged shards still without an end.
FuzzMergeCounts mergeFuzzTables(Store& into, const std::filesystem::path& shard);

/// `dynqual fuzz triage`: the buckets as Markdown (a table, new first) or JSON.
void writeTriage(const std::vector<FuzzBucket>& buckets, const std::string& night, const std::string& format,
                 std::ostream& out);

nlohmann::json toJson(const FuzzBucket& b);

} // namespace dynqual::store
