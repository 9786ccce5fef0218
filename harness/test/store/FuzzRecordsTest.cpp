// Buckets read from fuzz_findings (status, hits, smallest reproducer) and the merge of shard
// databases: exactly once, idempotent, unfinished shards counted.
#include "FuzzFixture.h"
#include "StoreTestUtil.h"

#include "dynqual/store/FuzzRecords.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

using namespace dynqual::store;
namespace fx = fuzzfixture;

namespace {

int64_t count(Store& s, const std::string& sql) {
  SQLite::Statement q(s.db(), sql);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

/// Night n1 (shard a1): bucket A twice, bucket C once. Night n2 (shard b1): A once more, B twice.
void twoNights(Store& s) {
  fx::shard(s, "a1", "n1", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z", 3600);
  fx::shard(s, "b1", "n2", "2026-01-02T00:00:00Z", "2026-01-02T01:00:00Z", 3600);
  fx::finding(s, "a1", 0, 100, "aaaa000000000001", "Slice", 4, 10, "2026-01-01T00:10:00Z");
  fx::finding(s, "a1", 5, 105, "aaaa000000000001", "Slice", 2, 30, "2026-01-01T00:20:00Z", "run-trap|Add,Slice|x");
  fx::finding(s, "a1", 7, 107, "cccc000000000003", "Tile", 3, 3, "2026-01-01T00:30:00Z");
  fx::finding(s, "b1", 1, 201, "aaaa000000000001", "Slice", 2, 8, "2026-01-02T00:10:00Z");
  fx::finding(s, "b1", 2, 202, "bbbb000000000002", "Concat", 5, 5, "2026-01-02T00:20:00Z");
  fx::finding(s, "b1", 3, 203, "bbbb000000000002", "Concat", 5, 5, "2026-01-02T00:30:00Z");
}

TEST(FuzzRecords, BucketsCountHitsAndKeepTheSmallestReproducer) {
  TempDir t;
  Store s(t.path / "f.db");
  twoNights(s);
  setBucketStatus(s, "cccc000000000003", "fuzz-run-trap-cccc0000", true, true, "rev");
  auto buckets = fuzzBuckets(s, "n2");
  ASSERT_EQ(buckets.size(), 3u);
  // Order: new (B, first seen on n2), known (A), fixed (C: its case passed after its last hit).
  EXPECT_EQ(buckets[0].bucket, "bbbb000000000002");
  EXPECT_EQ(buckets[0].status, "new");
  EXPECT_EQ(buckets[0].hits, 2);
  EXPECT_EQ(buckets[1].bucket, "aaaa000000000001");
  EXPECT_EQ(buckets[1].status, "known");
  EXPECT_EQ(buckets[1].hits, 3);
  EXPECT_EQ(buckets[1].hitsTonight, 1);
  EXPECT_EQ(buckets[1].signatures, 2);
  // Smallest: 2 nodes twice (seeds 105 with 30 elements, 201 with 8), so seed 201.
  EXPECT_EQ(buckets[1].nodes, 2);
  EXPECT_EQ(buckets[1].seed, 201u);
  EXPECT_EQ(buckets[1].firstSeen, "2026-01-01T00:10:00Z");
  EXPECT_EQ(buckets[1].lastSeen, "2026-01-02T00:10:00Z");
  EXPECT_EQ(buckets[1].firstNight, "n1");
  EXPECT_EQ(buckets[1].origin, "Slice");
  EXPECT_EQ(buckets[1].message, "trap <here>");
  EXPECT_EQ(buckets[2].status, "fixed");
  EXPECT_EQ(buckets[2].corpusCase, "fuzz-run-trap-cccc0000");
  // Relative to n1, A and C are new, and B (first seen on n2) is not there yet.
  auto first = fuzzBuckets(s, "n1");
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].status, "new");
  EXPECT_EQ(first[1].status, "new");
  // A finding after the passing check makes a fixed bucket known again (a regression).
  fx::finding(s, "b1", 9, 209, "cccc000000000003", "Tile", 3, 3, "2999-01-01T00:00:00Z");
  for (const auto& b : fuzzBuckets(s, "n2"))
    if (b.bucket == "cccc000000000003")
      EXPECT_EQ(b.status, "known");
}

TEST(FuzzRecords, FindBucketByPrefix) {
  TempDir t;
  Store s(t.path / "f.db");
  twoNights(s);
  EXPECT_EQ(findBucket(s, "bbbb").bucket, "bbbb000000000002");
  EXPECT_THROW(findBucket(s, "dddd"), StoreError);
  EXPECT_THROW(findBucket(s, "aa"), StoreError); // too short
}

TEST(FuzzRecords, MergeCopiesEachCaseOnceAndIsIdempotent) {
  TempDir t;
  {
    Store a(t.path / "a.db");
    fx::shard(a, "s0", "n", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", 60);
    for (int i = 0; i < 3; ++i)
      fx::caseRow(a, "s0", i, 10 + i, true, 5);
    fx::finding(a, "s0", 1, 11, "aaaa000000000001", "Slice", 2, 2, "2026-01-01T00:00:30Z");
    Store b(t.path / "b.db");
    fx::shard(b, "s1", "n", "2026-01-01T00:00:00Z", "", 20); // killed: unfinished
    for (int i = 0; i < 2; ++i)
      fx::caseRow(b, "s1", i, 20 + i, i == 0, 7);
  }
  Store m(t.path / "m.db");
  FuzzMergeCounts first = mergeFuzzTables(m, t.path / "a.db");
  FuzzMergeCounts second = mergeFuzzTables(m, t.path / "b.db");
  EXPECT_EQ(first.cases, 3);
  EXPECT_EQ(first.findings, 1);
  EXPECT_EQ(second.cases, 2);
  EXPECT_EQ(second.unfinished, 1);
  // Again: nothing new.
  FuzzMergeCounts again = mergeFuzzTables(m, t.path / "a.db");
  EXPECT_EQ(again.cases, 0);
  EXPECT_EQ(again.findings, 0);
  EXPECT_EQ(count(m, "SELECT COUNT(*) FROM fuzz_campaign_cases"), 5);
  EXPECT_EQ(count(m, "SELECT COUNT(*) FROM fuzz_findings"), 1);
  EXPECT_EQ(count(m, "SELECT COUNT(*) FROM fuzz_campaigns WHERE ended_at IS NULL"), 1);
  // The killed shard is resumed and finishes: its row is taken over, its new cases added.
  {
    Store b(t.path / "b.db");
    fx::caseRow(b, "s1", 2, 22, true, 7);
    SQLite::Statement u(b.db(), "UPDATE fuzz_campaigns SET ended_at = '2026-01-01T00:02:00Z', wall_seconds = 40");
    u.exec();
  }
  FuzzMergeCounts resumed = mergeFuzzTables(m, t.path / "b.db");
  EXPECT_EQ(resumed.cases, 1);
  EXPECT_EQ(resumed.unfinished, 0);
  EXPECT_EQ(count(m, "SELECT COUNT(*) FROM fuzz_campaigns WHERE ended_at IS NULL"), 0);
  auto shards = fuzzShards(m, "n");
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[0].cases + shards[1].cases, 6);
  auto stats = fuzzNightStats(m);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].cases, 6);
  EXPECT_EQ(stats[0].valid, 5); // 3 + (1 of 2) + 1
  EXPECT_EQ(stats[0].buckets, 1);
  EXPECT_EQ(stats[0].newBuckets, 1);
}

} // namespace
