#pragma once
// The work behind `dynqual db init|info|query|export|import|merge` (docs/commands/db.md). Each
// function writes its normal output to `out` and throws StoreError (one line naming the file and
// what to do) on failure; the CLI turns that into exit code 2.
#include "dynqual/store/Store.h"

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace dynqual::store {

/// Creates `db` (or opens it) and migrates it to the current schema; prints
/// "PATH: schema version N".
void dbInit(const std::filesystem::path& db, std::ostream& out);

/// Prints the schema version, row counts per table and one line per run (id, key prefix, kind,
/// status, start, revision, cases). `format` is "text" or "json".
void dbInfo(const std::filesystem::path& db, const std::string& format, std::ostream& out);

/// Runs one read-only SQL statement (the connection is opened read-only, so writes fail) and
/// prints the rows: tab-separated with a header line ("text"), or a JSON array of objects.
/// Throws StoreError for more than one statement or an SQL error.
void dbQuery(const std::filesystem::path& db, const std::string& sql, const std::string& format, std::ostream& out);

/// Writes the "dynqual-store" JSON document (docs/store.md) holding the selected runs ("latest",
/// ids or key prefixes; all runs when empty).
void dbExport(const std::filesystem::path& db, const std::vector<std::string>& runs, std::ostream& out);

/// Imports "dynqual-store" documents from files ("-" reads `in`) into `db` (created when
/// missing), deduplicating by content keys; prints "imported A, replaced R, skipped S runs".
/// Every file is parsed before anything is written, so a bad file adds nothing.
ImportResult dbImport(const std::filesystem::path& db, const std::vector<std::string>& files, std::istream& in,
                      std::ostream& out);

/// Folds shard databases into `db` (created when missing) without duplicates: every run of
/// every shard is imported by its content key (see Store::importRuns). Shards are opened
/// read-only and never changed.
ImportResult dbMerge(const std::filesystem::path& db, const std::vector<std::filesystem::path>& shards,
                     std::ostream& out);

} // namespace dynqual::store
