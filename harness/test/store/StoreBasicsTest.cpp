// Round trips through the store: record, load, export/import, merge, queries, error lines.
#include "StoreTestUtil.h"

#include "dynqual/store/DbTool.h"
#include "dynqual/store/Fingerprint.h"
#include "dynqual/store/Schema.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <sstream>

using namespace dynqual::store;
namespace fs = std::filesystem;

TEST(Fingerprint, Sha256KnownVectors) {
  // FIPS 180-4 appendix B.1 test vector, and the hash of the empty string.
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Fingerprint, MachineProbeIsStable) {
  Machine a = probeMachine(), b = probeMachine();
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.fingerprint.size(), 64u);
  EXPECT_GT(a.cores, 0);
}

TEST(Store, RecordAndLoadRoundTrip) {
  TempDir dir;
  RunRecord in = sampleRun("qualify", "k-1", "2026-01-01T00:00:00Z", {1.0, 2.0, 4.0});
  int64_t id;
  {
    Store s(dir.path / "a.db");
    id = s.beginRun(in);
    s.recordCases(id, in.cases);
    s.finishRun(id);
  }
  Store s(dir.path / "a.db");
  RunRecord out = s.loadRun(id);
  EXPECT_EQ(out.status, "finished");
  EXPECT_FALSE(out.endedAt.empty());
  ASSERT_EQ(out.cases.size(), in.cases.size());
  EXPECT_EQ(out.cases[1].samples.at(0).metric, "latency_ms");
  EXPECT_EQ(out.cases[1].samples.at(0).values, (std::vector<double>{1.0, 2.0, 4.0}));
  EXPECT_EQ(out.cases[1].counters.at("scalar_readbacks"), 3);
  EXPECT_EQ(out.cases[1].accuracy.at(0).relL2, in.cases[1].accuracy.at(0).relL2);
  EXPECT_EQ(out.machine.fingerprint, in.machine.fingerprint);
  ASSERT_TRUE(out.build);
  EXPECT_EQ(out.build->artifacts.at(0).sizeBytes, 1500000);
  // Samples are narrow rows: one per repetition, with unit and rep index.
  SQLite::Statement q(s.db(),
                      "SELECT count(*), min(rep), max(rep), min(unit) FROM samples WHERE metric = 'latency_ms'");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getInt(), 3);
  EXPECT_EQ(q.getColumn(1).getInt(), 0);
  EXPECT_EQ(q.getColumn(2).getInt(), 2);
  EXPECT_EQ(q.getColumn(3).getString(), "ms");
}

TEST(Store, ExportImportIsLosslessAndIdempotent) {
  TempDir dir;
  {
    Store s(dir.path / "a.db");
    s.importRuns({sampleRun("qualify", "k-1", "2026-01-01T00:00:00Z", {1.0, 2.0}),
                  sampleRun("qualify", "k-2", "2026-01-02T00:00:00Z", {3.0})});
  }
  std::ostringstream exported;
  dbExport(dir.path / "a.db", {}, exported);
  std::istringstream in(exported.str());
  std::ostringstream log;
  ImportResult first = dbImport(dir.path / "b.db", {"-"}, in, log);
  EXPECT_EQ(first.added, 2);
  std::istringstream again(exported.str());
  ImportResult second = dbImport(dir.path / "b.db", {"-"}, again, log);
  EXPECT_EQ(second.added, 0);
  EXPECT_EQ(second.skipped, 2);
  std::ostringstream reexported;
  dbExport(dir.path / "b.db", {}, reexported);
  EXPECT_EQ(reexported.str(), exported.str());
}

TEST(Store, MergeFoldsShardsWithoutDuplicates) {
  TempDir dir;
  RunRecord shared = sampleRun("qualify", "shared", "2026-01-01T00:00:00Z", {1.0});
  {
    Store main(dir.path / "main.db");
    main.importRuns({shared});
    Store shard(dir.path / "shard.db");
    shard.importRuns({shared, sampleRun("qualify", "only-shard", "2026-01-03T00:00:00Z", {2.0})});
  }
  std::ostringstream log;
  ImportResult r = dbMerge(dir.path / "main.db", {dir.path / "shard.db"}, log);
  EXPECT_EQ(r.added, 1);
  EXPECT_EQ(r.skipped, 1);
  r = dbMerge(dir.path / "main.db", {dir.path / "shard.db"}, log);
  EXPECT_EQ(r.added, 0);
  EXPECT_EQ(r.skipped, 2);
  Store s(dir.path / "main.db");
  EXPECT_EQ(s.listRuns().size(), 2u);
  // Both runs share one machine, one build, one pipeline and one model row (content keys).
  for (const char* t : {"machines", "builds", "pipelines", "models"})
    EXPECT_EQ(s.db().execAndGet(std::string("SELECT count(*) FROM ") + t).getInt(), 1) << t;
}

TEST(Store, MergeReplacesUnfinishedCopyWithFinishedOne) {
  TempDir dir;
  RunRecord run = sampleRun("qualify", "k", "2026-01-01T00:00:00Z", {1.0});
  RunRecord partial = run;
  partial.status = kRunUnfinished;
  partial.endedAt.clear();
  partial.cases.resize(1);
  {
    Store main(dir.path / "main.db");
    main.importRuns({partial});
    Store shard(dir.path / "shard.db");
    shard.importRuns({run});
  }
  std::ostringstream log;
  ImportResult r = dbMerge(dir.path / "main.db", {dir.path / "shard.db"}, log);
  EXPECT_EQ(r.replaced, 1);
  Store s(dir.path / "main.db");
  RunRecord got = s.loadRun(s.resolveRun("k"));
  EXPECT_EQ(got.status, "finished");
  EXPECT_EQ(got.cases.size(), run.cases.size());
}

TEST(Store, ResolveRunSelectors) {
  TempDir dir;
  Store s(dir.path / "a.db");
  s.importRuns({sampleRun("qualify", "aaa1", "2026-01-01T00:00:00Z", {1.0}),
                sampleRun("qualify", "bbb2", "2026-01-05T00:00:00Z", {1.0})});
  RunRecord unfinished = sampleRun("qualify", "ccc3", "2026-01-09T00:00:00Z", {1.0});
  unfinished.status = kRunUnfinished;
  s.importRuns({unfinished});
  EXPECT_EQ(s.loadRun(s.resolveRun("latest")).key, "bbb2"); // unfinished runs are never "latest"
  EXPECT_EQ(s.loadRun(s.resolveRun("aa")).key, "aaa1");
  EXPECT_EQ(s.loadRun(s.resolveRun("1")).key, "aaa1");
  try {
    s.resolveRun("zzz");
    FAIL() << "expected an error";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("no run matches 'zzz'"), std::string::npos) << e.what();
  }
}

TEST(Store, ImportRejectsBadDocumentAndWritesNothing) {
  TempDir dir;
  std::ostringstream exported;
  {
    Store s(dir.path / "a.db");
    s.importRuns({sampleRun("qualify", "k-1", "2026-01-01T00:00:00Z", {1.0})});
  }
  dbExport(dir.path / "a.db", {}, exported);
  auto doc = nlohmann::json::parse(exported.str());
  doc["runs"].push_back(doc["runs"][0]);
  doc["runs"][1]["key"] = "k-2";
  doc["runs"][1]["cases"][1]["samples"][0]["values"][0] = "fast";
  std::istringstream in(doc.dump());
  std::ostringstream log;
  try {
    dbImport(dir.path / "b.db", {"-"}, in, log);
    FAIL() << "expected an error";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("runs[1].cases[1].samples[0]"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path / "b.db"));
  doc["version"] = 7;
  std::istringstream v7(doc.dump());
  try {
    dbImport(dir.path / "b.db", {"-"}, v7, log);
    FAIL() << "expected an error";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported: dynqual-store version 7"), std::string::npos) << e.what();
  }
}

TEST(Store, NonFiniteValuesSurviveExportImport) {
  TempDir dir;
  RunRecord r = sampleRun("run", "k", "2026-01-01T00:00:00Z", {1.0});
  r.cases[1].accuracy[0].relL2 = INFINITY;
  r.cases[1].accuracy[0].cosine = std::nan("");
  Store a(dir.path / "a.db");
  a.importRuns({r});
  auto doc = toJson({a.loadRun(1)});
  auto back = runsFromJson(nlohmann::json::parse(doc.dump()));
  EXPECT_TRUE(std::isinf(back[0].cases[1].accuracy[0].relL2));
  EXPECT_TRUE(std::isnan(back[0].cases[1].accuracy[0].cosine));
}

TEST(DbTool, InfoAndQuery) {
  TempDir dir;
  std::ostringstream out;
  dbInit(dir.path / "a.db", out);
  EXPECT_EQ(out.str(),
            (dir.path / "a.db").string() + ": schema version " + std::to_string(currentSchemaVersion()) + "\n");
  {
    Store s(dir.path / "a.db");
    s.importRuns({sampleRun("qualify", "k-1", "2026-01-01T00:00:00Z", {1.5, 2.5})});
  }
  std::ostringstream q;
  dbQuery(dir.path / "a.db", "SELECT metric, value, unit, rep FROM samples WHERE metric = 'latency_ms' ORDER BY rep",
          "text", q);
  EXPECT_EQ(q.str(), "metric\tvalue\tunit\trep\nlatency_ms\t1.5\tms\t0\nlatency_ms\t2.5\tms\t1\n");
  std::ostringstream j;
  dbQuery(dir.path / "a.db", "SELECT count(*) AS n FROM runs", "json", j);
  EXPECT_EQ(nlohmann::json::parse(j.str())[0]["n"], 1);
  std::ostringstream info;
  dbInfo(dir.path / "a.db", "json", info);
  auto ij = nlohmann::json::parse(info.str());
  EXPECT_EQ(ij["rows"]["samples"], 2 + 1); // two latency samples + one compile_ms sample
  EXPECT_EQ(ij["runs"][0]["status"], "finished");
  // The query connection is read-only: a write is refused with a clear line.
  std::ostringstream w;
  try {
    dbQuery(dir.path / "a.db", "DELETE FROM samples", "text", w);
    FAIL() << "expected an error";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dbQuery(dir.path / "a.db", "SELECT 1; SELECT 2", "text", w), StoreError);
}
