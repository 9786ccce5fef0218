#pragma once
// The fuzzer's rows in the results store (schema 5: fuzz_campaign_cases, fuzz_findings,
// fuzz_signatures; docs/store.md).
#include "dynqual/fuzz/CaseRunner.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

namespace dynqual::store {
class Store;
}

namespace dynqual::fuzz {

/// One shard's writer. Not thread-safe: the campaign coordinator owns it.
class FindingStore {
public:
  /// Opens (creating and migrating) `db`. Throws store::StoreError naming the file.
  explicit FindingStore(const std::filesystem::path& db);
  ~FindingStore();

  /// Case indices of `campaign` already recorded.
  std::set<int64_t> doneCases(const std::string& campaign);

  /// Records one finished case and its findings in one transaction. Returns "new" or "known" per
  /// finding: new when its signature was not in fuzz_signatures before; a finding already stored
  /// for (campaign, case, signature) is not stored twice (a rerun of a shard is idempotent).
  std::vector<std::string> recordCase(const std::string& campaign, int64_t caseIndex, const CaseReport& report,
                                      const std::string& knob, double secondsIntoCampaign);

  /// Marks the shard as running (schema 6 fuzz_campaigns): a new row, or an existing one set back
  /// to unfinished (a rerun or --resume). `night` groups the shards of one nightly campaign.
  void beginShard(const std::string& campaign, const std::string& night, const std::string& revision);

  /// Adds this run's totals (`delta`: {"ms": {...}, "op_counts": {...}, "counters": {...},
  /// "invalid": {...}}, numbers summed key by key) and `wallSeconds` to the shard's row, and sets
  /// its end time when `completed` (the shard ran to its bound; a stop on an error leaves it
  /// unfinished). One transaction.
  void finishShard(const std::string& campaign, const nlohmann::json& delta, double wallSeconds, bool completed);

private:
  std::unique_ptr<store::Store> store_;
};

} // namespace dynqual::fuzz
