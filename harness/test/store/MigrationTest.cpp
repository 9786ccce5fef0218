// Upgrades the checked-in schema-version-1 database (fixtures/schema-v1.db, see
// fixtures/README.md) to the current schema and checks that its data survive.
#include "StoreTestUtil.h"

#include "dynqual/store/Schema.h"
#include "dynqual/store/Store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <cstdlib>

using namespace dynqual::store;
namespace fs = std::filesystem;

namespace {
const fs::path kFixture = fs::path(DYNQUAL_STORE_FIXTURES) / "schema-v1.db";
}

TEST(Migration, UpgradesVersion1FixtureToCurrent) {
  TempDir dir;
  fs::path db = dir.path / "v1.db";
  fs::copy_file(kFixture, db);
  {
    SQLite::Database raw(db, SQLite::OPEN_READONLY);
    ASSERT_EQ(schemaVersion(raw), 1) << "the fixture must stay at schema version 1";
    EXPECT_FALSE(raw.tableExists("verdicts"));
  }
  Store s(db);
  EXPECT_EQ(s.schemaVersion(), currentSchemaVersion());
  for (const char* t : {"fuzz_cases", "findings", "verdicts"})
    EXPECT_TRUE(s.db().tableExists(t)) << t;
  EXPECT_EQ(s.db().execAndGet("PRAGMA integrity_check").getString(), "ok");
  SQLite::Statement fk(s.db(), "PRAGMA foreign_key_check");
  EXPECT_FALSE(fk.executeStep()) << "a foreign key points nowhere";
  // The fixture holds sampleRun("qualify", "v1-run", ..., {1.0, 2.0, 4.0}); see README.md.
  RunRecord r = s.loadRun(s.resolveRun("v1-run"));
  EXPECT_EQ(r.status, "finished");
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[1].samples.at(0).values, (std::vector<double>{1.0, 2.0, 4.0}));
  EXPECT_EQ(r.cases[1].counters.at("kernel_launches"), 7);
  // The upgraded database takes new runs.
  s.importRuns({sampleRun("qualify", "after", "2026-02-01T00:00:00Z", {5.0})});
  EXPECT_EQ(s.listRuns().size(), 2u);
}

TEST(Migration, RefusesNewerSchema) {
  TempDir dir;
  fs::path db = dir.path / "future.db";
  {
    SQLite::Database raw(db, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("PRAGMA user_version = " + std::to_string(currentSchemaVersion() + 1));
  }
  try {
    Store s(db);
    FAIL() << "expected an error";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("is newer than this dynqual"), std::string::npos) << e.what();
  }
}

TEST(Migration, MigrationsAreNumberedInOrder) {
  int expect = 1;
  for (const auto& m : migrations())
    EXPECT_EQ(m.version, expect++) << m.name;
}

// Writes fixtures/schema-v1.db again; runs only with DYNQUAL_REGENERATE_FIXTURES=1. The fixture
// must never change after a release of schema 1: this exists to document how it was made.
TEST(Migration, RegenerateVersion1Fixture) {
  if (!std::getenv("DYNQUAL_REGENERATE_FIXTURES"))
    GTEST_SKIP() << "set DYNQUAL_REGENERATE_FIXTURES=1 to rewrite " << kFixture;
  fs::remove(kFixture);
  {
    OpenOptions o;
    o.schemaTarget = 1;
    Store s(kFixture, o);
    s.importRuns({sampleRun("qualify", "v1-run", "2026-01-01T00:00:00Z", {1.0, 2.0, 4.0})});
    s.db().exec("PRAGMA journal_mode = DELETE");
    s.db().exec("VACUUM");
  }
  SQLite::Database raw(kFixture, SQLite::OPEN_READONLY);
  EXPECT_EQ(schemaVersion(raw), 1);
}
