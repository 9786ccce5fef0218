#include "dynqual/store/Store.h"

#include "dynqual/store/Fingerprint.h"
#include "dynqual/store/Schema.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace fs = std::filesystem;

namespace dynqual::store {

namespace {

/// What to do about a failed SQLite call, by primary result code.
std::string advice(int code, int busyMs) {
  switch (code) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return "the database is locked by another process (waited " + std::to_string(busyMs) +
           " ms); retry when it finishes, or record into another --db and `dynqual db merge` it later";
  case SQLITE_FULL:
    return "the disk is full (or the database reached its size limit); the transaction was rolled back and "
           "earlier results are intact; free space and rerun";
  case SQLITE_READONLY:
    return "the database is read-only; make it writable or use another --db";
  case SQLITE_CANTOPEN:
    return "cannot open the file; check that its folder exists and is writable";
  case SQLITE_NOTADB:
  case SQLITE_CORRUPT:
    return "not a dynqual database (or a corrupt one); pass another --db";
  case SQLITE_IOERR:
    return "I/O error; check the disk and rerun";
  case SQLITE_PERM:
  case SQLITE_AUTH:
    return "permission denied; use a writable --db";
  default:
    return "";
  }
}

/// `path` as one shell word, so a printed hint can be pasted as it is.
std::string shellWord(const fs::path& path) {
  std::string p = path.string();
  if (!p.empty() && p.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:,@") ==
                        std::string::npos)
    return p;
  std::string out = "'";
  for (char c : p)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void bindText(SQLite::Statement& st, int i, const std::string& s) {
  st.bind(i, s);
}

/// NaN is stored as NULL (SQLite has no NaN); inf is stored as REAL.
void bindReal(SQLite::Statement& st, int i, double v) {
  if (std::isnan(v))
    st.bind(i);
  else
    st.bind(i, v);
}

double realOf(const SQLite::Column& c) {
  return c.isNull() ? std::nan("") : c.getDouble();
}

std::string shapeText(const std::vector<int64_t>& shape) {
  return nlohmann::json(shape).dump();
}

/// INSERT ... ON CONFLICT DO NOTHING, then the id of the row with that content key.
int64_t upsertId(SQLite::Database& db, const std::string& insertSql, const std::string& selectSql,
                 const std::function<void(SQLite::Statement&)>& bindInsert,
                 const std::function<void(SQLite::Statement&)>& bindSelect) {
  SQLite::Statement ins(db, insertSql);
  bindInsert(ins);
  ins.exec();
  SQLite::Statement sel(db, selectSql);
  bindSelect(sel);
  if (!sel.executeStep())
    throw std::runtime_error("internal: content key vanished after insert");
  return sel.getColumn(0).getInt64();
}

int64_t machineId(SQLite::Database& db, const Machine& m) {
  return upsertId(
      db,
      "INSERT INTO machines(fingerprint, cpu_model, cores, memory_bytes, os, gpu_name, gpu_driver) "
      "VALUES(?,?,?,?,?,?,?) ON CONFLICT(fingerprint) DO NOTHING",
      "SELECT id FROM machines WHERE fingerprint = ?",
      [&](SQLite::Statement& s) {
        s.bind(1, m.fingerprint);
        s.bind(2, m.cpuModel);
        s.bind(3, m.cores);
        s.bind(4, m.memoryBytes);
        s.bind(5, m.os);
        s.bind(6, m.gpuName);
        s.bind(7, m.gpuDriver);
      },
      [&](SQLite::Statement& s) { s.bind(1, m.fingerprint); });
}

int64_t buildId(SQLite::Database& db, const Build& b) {
  int64_t id = upsertId(
      db,
      "INSERT INTO builds(key, revision, dirty, compiler_version, dynqual_version) VALUES(?,?,?,?,?) "
      "ON CONFLICT(key) DO NOTHING",
      "SELECT id FROM builds WHERE key = ?",
      [&](SQLite::Statement& s) {
        s.bind(1, b.key);
        s.bind(2, b.revision);
        s.bind(3, b.dirty ? 1 : 0);
        s.bind(4, b.compilerVersion);
        s.bind(5, b.dynqualVersion);
      },
      [&](SQLite::Statement& s) { s.bind(1, b.key); });
  SQLite::Statement art(db, "INSERT INTO build_artifacts(build_id, path, sha256, size_bytes) VALUES(?,?,?,?) "
                            "ON CONFLICT(build_id, path) DO NOTHING");
  for (const auto& a : b.artifacts) {
    art.bind(1, id);
    art.bind(2, a.path);
    art.bind(3, a.sha256);
    art.bind(4, a.sizeBytes);
    art.exec();
    art.reset();
  }
  return id;
}

Build loadBuild(SQLite::Database& db, int64_t id) {
  SQLite::Statement s(db, "SELECT key, revision, dirty, compiler_version, dynqual_version FROM builds WHERE id = ?");
  s.bind(1, id);
  Build b;
  if (s.executeStep()) {
    b.key = s.getColumn(0).getString();
    b.revision = s.getColumn(1).getString();
    b.dirty = s.getColumn(2).getInt() != 0;
    b.compilerVersion = s.getColumn(3).getString();
    b.dynqualVersion = s.getColumn(4).getString();
  }
  SQLite::Statement a(db, "SELECT path, sha256, size_bytes FROM build_artifacts WHERE build_id = ? ORDER BY path");
  a.bind(1, id);
  while (a.executeStep())
    b.artifacts.push_back({a.getColumn(0).getString(), a.getColumn(1).getString(), a.getColumn(2).getInt64()});
  return b;
}

std::map<std::string, std::string> loadParams(SQLite::Database& db, const char* sql, int64_t id) {
  std::map<std::string, std::string> out;
  SQLite::Statement s(db, sql);
  s.bind(1, id);
  while (s.executeStep())
    out[s.getColumn(0).getString()] = s.getColumn(1).getString();
  return out;
}

} // namespace

std::string dbCommandHint(const std::string& sub, const fs::path& db) {
  return "dynqual db " + sub + " --db " + shellWord(db);
}

fs::path defaultDbPath() {
  const char* env = std::getenv("DYNQUAL_DB");
  return env && *env ? fs::path(env) : fs::path("dynqual.db");
}

Store::Store(const fs::path& path, const OpenOptions& options) : path_(path), options_(options) {
  try {
    int flags = 0;
    switch (options.mode) {
    case OpenOptions::Mode::Create:
      flags = SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE;
      break;
    case OpenOptions::Mode::Existing:
      flags = SQLite::OPEN_READWRITE;
      break;
    case OpenOptions::Mode::ReadOnly:
      flags = SQLite::OPEN_READONLY;
      break;
    }
    if (options.mode != OpenOptions::Mode::Create && !fs::exists(path))
      throw StoreError(path.string() + ": no such database; create it with `" + dbCommandHint("init", path) + "`");
    db_ = std::make_unique<SQLite::Database>(path, flags, options.busyTimeoutMs);
    bool writable = options.mode != OpenOptions::Mode::ReadOnly;
    if (writable && sqlite3_db_readonly(db_->getHandle(), "main") == 1)
      throw StoreError(path.string() + ": cannot write: " + advice(SQLITE_READONLY, 0));
    // Reading the schema here turns "not a database" into an error at open time.
    db_->exec("PRAGMA foreign_keys = ON");
    int version = 0;
    try {
      version = store::schemaVersion(*db_);
    } catch (const SQLite::Exception& e) {
      int code = e.getErrorCode() & 0xff;
      if (writable || (code != SQLITE_CANTOPEN && code != SQLITE_READONLY))
        throw;
      // A WAL database needs PATH-shm even to be read; in a folder this process cannot write,
      // it cannot be created, and SQLite refuses the read (SQLITE_READONLY_CANTINIT or
      // SQLITE_CANTOPEN, by version). With no PATH-wal content every
      // committed row is in the main file, so reading it as immutable is exact.
      reopenImmutable();
      version = store::schemaVersion(*db_);
    }
    if (writable) {
      db_->exec("PRAGMA journal_mode = WAL");
      // In WAL mode NORMAL is durable against a killed process (not against power loss).
      db_->exec("PRAGMA synchronous = NORMAL");
      if (options.migrate)
        migrate(*db_, options.schemaTarget);
    } else if (version == 0) {
      throw StoreError(path.string() + ": empty database (schema version 0); create it with `" +
                       dbCommandHint("init", path) + "`");
    } else if (version > currentSchemaVersion()) {
      throw StoreError(path.string() + ": unsupported: schema version " + std::to_string(version) +
                       " is newer than this dynqual (" + std::to_string(currentSchemaVersion()) +
                       "); use a newer dynqual");
    }
  } catch (const StoreError&) {
    throw;
  } catch (...) {
    rethrow("opening the database");
  }
}

void Store::reopenImmutable() {
  fs::path wal = path_.string() + "-wal";
  std::error_code ec;
  if (fs::exists(wal, ec) && fs::file_size(wal, ec) > 0)
    throw StoreError(path_.string() + ": cannot read: its write-ahead log " + wal.string() + " holds rows and " +
                     path_.string() +
                     "-shm cannot be created in this folder; copy the database with its -wal file to a "
                     "writable folder and read it there");
  // URI: every byte outside the unreserved set is percent-encoded, so '?', '#' and '%' in the
  // path stay part of it.
  std::string uri = "file:";
  for (unsigned char c : fs::absolute(path_).string()) {
    if (std::isalnum(c) || std::strchr("/-._~", c))
      uri += static_cast<char>(c);
    else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    }
  }
  uri += "?immutable=1";
  db_.reset();
  db_ = std::make_unique<SQLite::Database>(uri, SQLite::OPEN_READONLY | SQLite::OPEN_URI, options_.busyTimeoutMs);
  db_->exec("PRAGMA foreign_keys = ON");
}

Store::~Store() = default;

SQLite::Database& Store::db() {
  return *db_;
}

int Store::schemaVersion() {
  return store::schemaVersion(*db_);
}

void Store::rethrow(const std::string& what) {
  try {
    throw;
  } catch (const StoreError&) {
    throw;
  } catch (const SQLite::Exception& e) {
    lastErrorCode_ = e.getErrorCode() & 0xff;
    std::string a = advice(lastErrorCode_, options_.busyTimeoutMs);
    throw StoreError(path_.string() + ": " + what + ": " + e.what() + (a.empty() ? "" : "; " + a));
  } catch (const std::exception& e) {
    throw StoreError(path_.string() + ": " + what + ": " + e.what());
  }
}

void Store::transaction(const std::string& what, const std::function<void()>& fn) {
  bool open = false;
  try {
    db_->exec("BEGIN IMMEDIATE");
    open = true;
    fn();
    db_->exec("COMMIT");
  } catch (...) {
    if (open && !sqlite3_get_autocommit(db_->getHandle()))
      sqlite3_exec(db_->getHandle(), "ROLLBACK", nullptr, nullptr, nullptr);
    rethrow(what);
  }
}

int64_t Store::insertRunRows(const RunRecord& r, bool withCases) {
  SQLite::Database& db = *db_;
  int64_t machine = machineId(db, r.machine);
  std::optional<int64_t> build, base, pipeline;
  if (r.build)
    build = buildId(db, *r.build);
  if (r.baseBuild)
    base = buildId(db, *r.baseBuild);
  if (!r.pipeline.hash.empty())
    pipeline = upsertId(
        db, "INSERT INTO pipelines(hash, spec) VALUES(?,?) ON CONFLICT(hash) DO NOTHING",
        "SELECT id FROM pipelines WHERE hash = ?",
        [&](SQLite::Statement& s) {
          s.bind(1, r.pipeline.hash);
          s.bind(2, r.pipeline.spec);
        },
        [&](SQLite::Statement& s) { s.bind(1, r.pipeline.hash); });
  SQLite::Statement ins(db, "INSERT INTO runs(key, kind, status, started_at, ended_at, command_line, device, "
                            "machine_id, build_id, base_build_id, pipeline_id) VALUES(?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, r.key);
  ins.bind(2, r.kind);
  ins.bind(3, r.status);
  ins.bind(4, r.startedAt);
  if (r.endedAt.empty())
    ins.bind(5);
  else
    ins.bind(5, r.endedAt);
  ins.bind(6, r.commandLine);
  ins.bind(7, r.device);
  ins.bind(8, machine);
  auto bindOpt = [&](int i, const std::optional<int64_t>& v) {
    if (v)
      ins.bind(i, *v);
    else
      ins.bind(i);
  };
  bindOpt(9, build);
  bindOpt(10, base);
  bindOpt(11, pipeline);
  ins.exec();
  int64_t runId = db.getLastInsertRowid();
  SQLite::Statement par(db, "INSERT INTO run_params(run_id, key, value) VALUES(?,?,?)");
  for (const auto& [k, v] : r.params) {
    par.bind(1, runId);
    par.bind(2, k);
    par.bind(3, v);
    par.exec();
    par.reset();
  }
  if (withCases)
    insertCases(runId, r.cases);
  return runId;
}

void Store::insertCases(int64_t runId, const std::vector<CaseRecord>& cases) {
  SQLite::Database& db = *db_;
  SQLite::Statement seqQ(db, "SELECT ifnull(max(seq), -1) + 1 FROM cases WHERE run_id = ?");
  seqQ.bind(1, runId);
  seqQ.executeStep();
  int64_t seq = seqQ.getColumn(0).getInt64();
  SQLite::Statement caseIns(db,
                            "INSERT INTO cases(run_id, seq, model_id, dataset_id, status, error) VALUES(?,?,?,?,?,?)");
  SQLite::Statement parIns(db, "INSERT INTO case_params(case_id, key, value) VALUES(?,?,?)");
  SQLite::Statement accIns(db, "INSERT INTO accuracy(case_id, comparison, output, verdict, reason, dtype, shape, "
                               "elements, nan_inf_skipped, mismatches, l2, rel_l2, max_abs, cosine) "
                               "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  SQLite::Statement smpIns(db, "INSERT INTO samples(run_id, case_id, metric, value, unit, rep) VALUES(?,?,?,?,?,?)");
  SQLite::Statement ctrIns(db, "INSERT INTO counters(case_id, name, value) VALUES(?,?,?)");
  for (const auto& c : cases) {
    int64_t model = upsertId(
        db, "INSERT INTO models(name, hash) VALUES(?,?) ON CONFLICT(name, hash) DO NOTHING",
        "SELECT id FROM models WHERE name = ? AND hash = ?",
        [&](SQLite::Statement& s) {
          s.bind(1, c.model.name);
          s.bind(2, c.model.hash);
        },
        [&](SQLite::Statement& s) {
          s.bind(1, c.model.name);
          s.bind(2, c.model.hash);
        });
    std::optional<int64_t> dataset;
    if (!c.dataset.name.empty())
      dataset = upsertId(
          db, "INSERT INTO datasets(name, kind, binding, hash) VALUES(?,?,?,?) ON CONFLICT(hash, name) DO NOTHING",
          "SELECT id FROM datasets WHERE hash = ? AND name = ?",
          [&](SQLite::Statement& s) {
            s.bind(1, c.dataset.name);
            s.bind(2, c.dataset.kind);
            s.bind(3, c.dataset.binding);
            s.bind(4, c.dataset.hash);
          },
          [&](SQLite::Statement& s) {
            s.bind(1, c.dataset.hash);
            s.bind(2, c.dataset.name);
          });
    caseIns.bind(1, runId);
    caseIns.bind(2, seq++);
    caseIns.bind(3, model);
    if (dataset)
      caseIns.bind(4, *dataset);
    else
      caseIns.bind(4);
    caseIns.bind(5, c.status);
    caseIns.bind(6, c.error);
    caseIns.exec();
    caseIns.reset();
    int64_t caseId = db.getLastInsertRowid();
    for (const auto& [k, v] : c.params) {
      parIns.bind(1, caseId);
      parIns.bind(2, k);
      parIns.bind(3, v);
      parIns.exec();
      parIns.reset();
    }
    for (const auto& a : c.accuracy) {
      accIns.bind(1, caseId);
      bindText(accIns, 2, a.comparison);
      bindText(accIns, 3, a.output);
      bindText(accIns, 4, a.verdict);
      bindText(accIns, 5, a.reason);
      bindText(accIns, 6, a.dtype);
      accIns.bind(7, shapeText(a.shape));
      accIns.bind(8, a.elements);
      accIns.bind(9, a.nanInfSkipped);
      accIns.bind(10, a.mismatches);
      bindReal(accIns, 11, a.l2);
      bindReal(accIns, 12, a.relL2);
      bindReal(accIns, 13, a.maxAbs);
      bindReal(accIns, 14, a.cosine);
      accIns.exec();
      accIns.reset();
    }
    for (const auto& s : c.samples)
      for (size_t rep = 0; rep < s.values.size(); ++rep) {
        smpIns.bind(1, runId);
        smpIns.bind(2, caseId);
        smpIns.bind(3, s.metric);
        bindReal(smpIns, 4, s.values[rep]);
        smpIns.bind(5, s.unit);
        smpIns.bind(6, static_cast<int64_t>(rep));
        smpIns.exec();
        smpIns.reset();
      }
    for (const auto& [name, value] : c.counters) {
      ctrIns.bind(1, caseId);
      ctrIns.bind(2, name);
      ctrIns.bind(3, value);
      ctrIns.exec();
      ctrIns.reset();
    }
  }
}

int64_t Store::beginRun(const RunRecord& header) {
  RunRecord r = header;
  r.status = kRunUnfinished;
  r.endedAt.clear();
  int64_t id = 0;
  transaction("recording the start of run " + r.key, [&] { id = insertRunRows(r, false); });
  return id;
}

void Store::recordCases(int64_t runId, const std::vector<CaseRecord>& cases) {
  transaction("recording results of run " + std::to_string(runId), [&] { insertCases(runId, cases); });
}

void Store::finishRun(int64_t runId) {
  // SQLite's busy handler waits for the lock, but can hand back SQLITE_BUSY at once (e.g. while
  // another connection recovers the WAL); such a refusal is retried until the busy timeout.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.busyTimeoutMs);
  for (;;) {
    lastErrorCode_ = SQLITE_OK;
    try {
      transaction("marking run " + std::to_string(runId) + " finished", [&] {
        SQLite::Statement s(*db_, "UPDATE runs SET status = 'finished', ended_at = ? WHERE id = ?");
        s.bind(1, utcNow());
        s.bind(2, runId);
        if (s.exec() != 1)
          throw std::runtime_error("no run with id " + std::to_string(runId));
      });
      return;
    } catch (const StoreError&) {
      bool busy = lastErrorCode_ == SQLITE_BUSY || lastErrorCode_ == SQLITE_LOCKED;
      if (!busy || std::chrono::steady_clock::now() >= deadline)
        throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

ImportResult Store::importRuns(const std::vector<RunRecord>& runs) {
  ImportResult res;
  for (const auto& r : runs)
    transaction("importing run " + r.key, [&] {
      SQLite::Statement q(*db_, "SELECT id, status FROM runs WHERE key = ?");
      q.bind(1, r.key);
      if (q.executeStep()) {
        bool storedFinished = q.getColumn(1).getString() == kRunFinished;
        if (storedFinished || r.status != kRunFinished) {
          ++res.skipped;
          return;
        }
        SQLite::Statement del(*db_, "DELETE FROM runs WHERE id = ?");
        del.bind(1, q.getColumn(0).getInt64());
        q.reset();
        del.exec();
        ++res.replaced;
      } else {
        ++res.added;
      }
      insertRunRows(r, true);
    });
  return res;
}

RunRecord Store::loadRun(int64_t id) {
  try {
    SQLite::Database& db = *db_;
    SQLite::Statement s(db, "SELECT r.key, r.kind, r.status, r.started_at, ifnull(r.ended_at, ''), r.command_line, "
                            "r.device, r.build_id, r.base_build_id, ifnull(p.hash, ''), ifnull(p.spec, ''), "
                            "m.fingerprint, m.cpu_model, m.cores, m.memory_bytes, m.os, m.gpu_name, m.gpu_driver "
                            "FROM runs r JOIN machines m ON m.id = r.machine_id "
                            "LEFT JOIN pipelines p ON p.id = r.pipeline_id WHERE r.id = ?");
    s.bind(1, id);
    if (!s.executeStep())
      throw StoreError(path_.string() + ": no run with id " + std::to_string(id) + "; `" +
                       dbCommandHint("info", path_) + "` lists the runs");
    RunRecord r;
    r.id = id;
    r.key = s.getColumn(0).getString();
    r.kind = s.getColumn(1).getString();
    r.status = s.getColumn(2).getString();
    r.startedAt = s.getColumn(3).getString();
    r.endedAt = s.getColumn(4).getString();
    r.commandLine = s.getColumn(5).getString();
    r.device = s.getColumn(6).getString();
    if (!s.getColumn(7).isNull())
      r.build = loadBuild(db, s.getColumn(7).getInt64());
    if (!s.getColumn(8).isNull())
      r.baseBuild = loadBuild(db, s.getColumn(8).getInt64());
    r.pipeline = {s.getColumn(9).getString(), s.getColumn(10).getString()};
    r.machine = {s.getColumn(11).getString(), s.getColumn(12).getString(), s.getColumn(13).getInt64(),
                 s.getColumn(14).getInt64(),  s.getColumn(15).getString(), s.getColumn(16).getString(),
                 s.getColumn(17).getString()};
    r.params = loadParams(db, "SELECT key, value FROM run_params WHERE run_id = ?", id);

    SQLite::Statement cq(db, "SELECT c.id, md.name, md.hash, ifnull(d.name, ''), ifnull(d.kind, ''), "
                             "ifnull(d.binding, ''), ifnull(d.hash, ''), c.status, c.error FROM cases c "
                             "JOIN models md ON md.id = c.model_id LEFT JOIN datasets d ON d.id = c.dataset_id "
                             "WHERE c.run_id = ? ORDER BY c.seq");
    cq.bind(1, id);
    SQLite::Statement aq(db, "SELECT comparison, output, verdict, reason, dtype, shape, elements, nan_inf_skipped, "
                             "mismatches, l2, rel_l2, max_abs, cosine FROM accuracy WHERE case_id = ? "
                             "ORDER BY comparison, output");
    SQLite::Statement sq(db, "SELECT metric, unit, value FROM samples WHERE case_id = ? ORDER BY metric, rep");
    SQLite::Statement kq(db, "SELECT name, value FROM counters WHERE case_id = ? ORDER BY name");
    while (cq.executeStep()) {
      CaseRecord c;
      int64_t caseId = cq.getColumn(0).getInt64();
      c.model = {cq.getColumn(1).getString(), cq.getColumn(2).getString()};
      c.dataset = {cq.getColumn(3).getString(), cq.getColumn(4).getString(), cq.getColumn(5).getString(),
                   cq.getColumn(6).getString()};
      c.status = cq.getColumn(7).getString();
      c.error = cq.getColumn(8).getString();
      c.params = loadParams(db, "SELECT key, value FROM case_params WHERE case_id = ?", caseId);
      aq.bind(1, caseId);
      while (aq.executeStep()) {
        AccuracyRow a;
        a.comparison = aq.getColumn(0).getString();
        a.output = aq.getColumn(1).getString();
        a.verdict = aq.getColumn(2).getString();
        a.reason = aq.getColumn(3).getString();
        a.dtype = aq.getColumn(4).getString();
        a.shape = nlohmann::json::parse(aq.getColumn(5).getString()).get<std::vector<int64_t>>();
        a.elements = aq.getColumn(6).getInt64();
        a.nanInfSkipped = aq.getColumn(7).getInt64();
        a.mismatches = aq.getColumn(8).getInt64();
        a.l2 = realOf(aq.getColumn(9));
        a.relL2 = realOf(aq.getColumn(10));
        a.maxAbs = realOf(aq.getColumn(11));
        a.cosine = realOf(aq.getColumn(12));
        c.accuracy.push_back(a);
      }
      aq.reset();
      sq.bind(1, caseId);
      while (sq.executeStep()) {
        std::string metric = sq.getColumn(0).getString();
        if (c.samples.empty() || c.samples.back().metric != metric)
          c.samples.push_back({metric, sq.getColumn(1).getString(), {}});
        c.samples.back().values.push_back(realOf(sq.getColumn(2)));
      }
      sq.reset();
      kq.bind(1, caseId);
      while (kq.executeStep())
        c.counters[kq.getColumn(0).getString()] = kq.getColumn(1).getInt64();
      kq.reset();
      r.cases.push_back(std::move(c));
    }
    return r;
  } catch (...) {
    rethrow("reading run " + std::to_string(id));
  }
}

std::vector<RunSummary> Store::listRuns() {
  try {
    SQLite::Statement s(*db_, "SELECT r.id, r.key, r.kind, r.status, r.started_at, ifnull(r.ended_at, ''), "
                              "ifnull(b.revision, ''), m.cpu_model, "
                              "(SELECT count(*) FROM cases c WHERE c.run_id = r.id) "
                              "FROM runs r JOIN machines m ON m.id = r.machine_id "
                              "LEFT JOIN builds b ON b.id = r.build_id ORDER BY r.started_at, r.id");
    std::vector<RunSummary> out;
    while (s.executeStep())
      out.push_back({s.getColumn(0).getInt64(), s.getColumn(1).getString(), s.getColumn(2).getString(),
                     s.getColumn(3).getString(), s.getColumn(4).getString(), s.getColumn(5).getString(),
                     s.getColumn(6).getString(), s.getColumn(7).getString(), s.getColumn(8).getInt64()});
    return out;
  } catch (...) {
    rethrow("listing runs");
  }
}

int64_t Store::resolveRun(const std::string& selector) {
  try {
    if (selector == "latest") {
      SQLite::Statement s(*db_,
                          "SELECT id FROM runs WHERE status = 'finished' ORDER BY started_at DESC, id DESC LIMIT 1");
      if (s.executeStep())
        return s.getColumn(0).getInt64();
      throw StoreError(path_.string() + ": no finished run yet; record one with `dynqual qualify --db " +
                       shellWord(path_) + "`");
    }
    if (!selector.empty() && std::all_of(selector.begin(), selector.end(), ::isdigit)) {
      SQLite::Statement s(*db_, "SELECT id FROM runs WHERE id = ?");
      s.bind(1, static_cast<int64_t>(std::stoll(selector)));
      if (s.executeStep())
        return s.getColumn(0).getInt64();
    }
    SQLite::Statement s(*db_, "SELECT id FROM runs WHERE substr(key, 1, length(?1)) = ?1 LIMIT 2");
    s.bind(1, selector);
    std::vector<int64_t> ids;
    while (s.executeStep())
      ids.push_back(s.getColumn(0).getInt64());
    if (ids.size() == 1 && !selector.empty())
      return ids[0];
    throw StoreError(path_.string() + ": " + (ids.size() > 1 ? "more than one run matches '" : "no run matches '") +
                     selector + "'; `" + dbCommandHint("info", path_) + "` lists the runs");
  } catch (...) {
    rethrow("finding run '" + selector + "'");
  }
}

std::vector<RunRecord> Store::history(const RunRecord& head, int limit) {
  std::vector<int64_t> ids;
  try {
    SQLite::Statement s(*db_, "SELECT id FROM runs WHERE kind = ? AND status = 'finished' AND "
                              "(started_at < ? OR (started_at = ? AND id <= ?)) "
                              "ORDER BY started_at DESC, id DESC LIMIT ?");
    s.bind(1, head.kind);
    s.bind(2, head.startedAt);
    s.bind(3, head.startedAt);
    s.bind(4, head.id);
    s.bind(5, limit);
    while (s.executeStep())
      ids.push_back(s.getColumn(0).getInt64());
  } catch (...) {
    rethrow("reading the run history");
  }
  std::vector<RunRecord> out;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it)
    out.push_back(loadRun(*it));
  return out;
}

} // namespace dynqual::store
