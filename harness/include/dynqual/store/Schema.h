#pragma once
// The store's schema: numbered migrations, applied in order, tracked by PRAGMA user_version.
// A schema change is a new migration appended here; an existing one is never edited
// (harness/test/store/MigrationTest.cpp upgrades a checked-in version-1 database).
#include <SQLiteCpp/Database.h>

#include <string>
#include <vector>

namespace dynqual::store {

/// One schema step: running `sql` on a database at version `version - 1` yields `version`.
struct Migration {
  int version;
  const char* name;
  const char* sql;
};

/// Every migration, in version order (1, 2, ...).
const std::vector<Migration>& migrations();

/// Version of the newest migration (the schema this build writes).
int currentSchemaVersion();

/// Reads PRAGMA user_version.
int schemaVersion(SQLite::Database& db);

/// Applies the migrations after the database's version up to `target` (default: current), each
/// in its own IMMEDIATE transaction that also sets user_version, so a crash leaves a valid
/// earlier version. Throws std::runtime_error "unsupported: schema version N is newer than this
/// dynqual (M); use a newer dynqual" for a database from a newer build.
void migrate(SQLite::Database& db, int target = -1);

} // namespace dynqual::store
