#pragma once
// The results store: one SQLite database (WAL mode, busy timeout, foreign keys) holding every
// recorded run. Writers use one IMMEDIATE transaction per logical unit (the run header, one
// model's cases, the final status, one imported run), so a process that dies loses at most the
// unit in flight and leaves its run marked "unfinished". Every value is bound, never spliced.
#include "dynqual/store/Records.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

namespace dynqual::store {

/// Every store failure: one line "PATH: what failed: why; what to do".
class StoreError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// How to open a store.
struct OpenOptions {
  enum class Mode {
    Create,   ///< read-write; creates the file (not its folder) when missing
    Existing, ///< read-write; the file must exist
    ReadOnly, ///< no writes at all (query, export, report, merge source); works in a folder this
              ///< process cannot write (a WAL database is then read as immutable, see Store())
  };
  Mode mode = Mode::Create;
  /// How long a writer waits for another process's lock before failing, in ms.
  int busyTimeoutMs = 10000;
  /// Bring the schema to `schemaTarget` (-1 = current) on open; ignored for ReadOnly.
  bool migrate = true;
  int schemaTarget = -1;
};

/// One line of `db info` / `listRuns`.
struct RunSummary {
  int64_t id = 0;
  std::string key, kind, status, startedAt, endedAt, revision, machine;
  int64_t cases = 0;
};

/// Outcome of importRuns / merge, in runs.
struct ImportResult {
  int added = 0;    ///< new run keys
  int replaced = 0; ///< an unfinished copy replaced by a finished one
  int skipped = 0;  ///< already present (same key)
};

/// A read or write handle on one database file. Not copyable; one per thread.
class Store {
public:
  /// Opens (and by default creates and migrates) `path`. Throws StoreError naming the path for a
  /// missing folder, a read-only file, a lock held past the busy timeout, a file that is not a
  /// dynqual database, or a schema newer than this build.
  explicit Store(const std::filesystem::path& path, const OpenOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// The underlying connection (SQLiteCpp), for queries this class does not cover.
  SQLite::Database& db();
  int schemaVersion();

  /// Inserts the run header (machine, builds, pipeline, params; `cases` ignored) with status
  /// "unfinished" and no end time, in one transaction. Returns the run id.
  int64_t beginRun(const RunRecord& header);
  /// Appends cases to a run in one transaction (all or none).
  void recordCases(int64_t runId, const std::vector<CaseRecord>& cases);
  /// Marks a run "finished" and sets its end time to now (UTC). Waits for another process's
  /// lock up to the busy timeout (retrying a refusal SQLite returns without waiting), then throws
  /// StoreError naming the lock; the run then stays "unfinished".
  void finishRun(int64_t runId);

  /// Adds runs by content key, one transaction per run: a key already present is skipped,
  /// unless the stored copy is unfinished and the incoming one finished (then it is replaced).
  /// Machines, builds, pipelines, models and data sets are shared by their content keys.
  ImportResult importRuns(const std::vector<RunRecord>& runs);

  /// Loads one run with all its cases. Throws StoreError when the id does not exist.
  RunRecord loadRun(int64_t id);
  /// Every run, oldest first.
  std::vector<RunSummary> listRuns();
  /// Resolves "latest" (the newest finished run), a run id, or a unique prefix of a run key.
  /// Throws StoreError "no run matches 'X'; `dynqual db info --db PATH` lists the runs".
  int64_t resolveRun(const std::string& selector);
  /// Finished runs of head's kind that started no later than head (head included), oldest
  /// first, at most `limit` (the newest ones): the points of the history charts.
  std::vector<RunRecord> history(const RunRecord& head, int limit = 50);

  /// Runs `fn` inside BEGIN IMMEDIATE ... COMMIT, rolling back on any exception; SQLite errors
  /// become StoreError with `what` ("recording run 3") as context.
  void transaction(const std::string& what, const std::function<void()>& fn);

private:
  int64_t insertRunRows(const RunRecord& r, bool withCases);
  void insertCases(int64_t runId, const std::vector<CaseRecord>& cases);
  [[noreturn]] void rethrow(const std::string& what);
  /// Reopens the file read-only as immutable (no -shm, no locks); throws StoreError when a
  /// non-empty -wal file holds rows that reading it that way would miss.
  void reopenImmutable();

  std::filesystem::path path_;
  OpenOptions options_;
  std::unique_ptr<SQLite::Database> db_;
  int lastErrorCode_ = 0; ///< primary SQLite result code of the last failure rethrow() saw
};

/// A `dynqual db SUB` command line for `db` that works when pasted into a shell, e.g.
/// "dynqual db info --db 'my runs.db'" (the path is quoted when it needs it). Error hints use it.
std::string dbCommandHint(const std::string& sub, const std::filesystem::path& db);

/// The database `--db` defaults to: $DYNQUAL_DB when set and not empty, else ./dynqual.db.
std::filesystem::path defaultDbPath();

} // namespace dynqual::store
