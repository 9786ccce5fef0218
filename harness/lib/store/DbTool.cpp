#include "dynqual/store/DbTool.h"

#include "dynqual/store/FuzzRecords.h"
#include "dynqual/store/Schema.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace dynqual::store {

namespace {

const char* kTables[] = {"machines",
                         "builds",
                         "build_artifacts",
                         "pipelines",
                         "runs",
                         "run_params",
                         "models",
                         "datasets",
                         "cases",
                         "case_params",
                         "accuracy",
                         "samples",
                         "counters",
                         "fuzz_cases",
                         "findings",
                         "verdicts",
                         "fuzz_campaign_cases",
                         "fuzz_signatures",
                         "fuzz_findings",
                         "fuzz_campaigns",
                         "fuzz_bucket_status"};

OpenOptions readOnly() {
  OpenOptions o;
  o.mode = OpenOptions::Mode::ReadOnly;
  return o;
}

json columnJson(const SQLite::Column& c) {
  if (c.isNull())
    return nullptr;
  if (c.isInteger())
    return c.getInt64();
  if (c.isFloat())
    return c.getDouble();
  if (c.isBlob())
    return "<blob " + std::to_string(c.getBytes()) + " bytes>";
  return c.getString();
}

std::string columnText(const SQLite::Column& c) {
  if (c.isNull())
    return "NULL";
  if (c.isBlob())
    return "<blob " + std::to_string(c.getBytes()) + " bytes>";
  return c.getString();
}

} // namespace

void dbInit(const fs::path& db, std::ostream& out) {
  Store s(db);
  out << db.string() << ": schema version " << s.schemaVersion() << "\n";
}

void dbInfo(const fs::path& db, const std::string& format, std::ostream& out) {
  Store s(db, readOnly());
  json counts = json::object();
  for (const char* t : kTables) {
    try {
      counts[t] = s.db().execAndGet(std::string("SELECT count(*) FROM ") + t).getInt64();
    } catch (const SQLite::Exception&) {
      // Older schema: the table does not exist yet.
    }
  }
  auto runs = s.listRuns();
  if (format == "json") {
    json rj = json::array();
    for (const auto& r : runs)
      rj.push_back({{"id", r.id},
                    {"key", r.key},
                    {"kind", r.kind},
                    {"status", r.status},
                    {"started_at", r.startedAt},
                    {"ended_at", r.endedAt},
                    {"revision", r.revision},
                    {"machine", r.machine},
                    {"cases", r.cases}});
    out << json{{"path", db.string()},
                {"schema_version", s.schemaVersion()},
                {"current_schema_version", currentSchemaVersion()},
                {"rows", counts},
                {"runs", rj}}
               .dump(2)
        << "\n";
    return;
  }
  out << db.string() << ": schema version " << s.schemaVersion() << " (this dynqual writes " << currentSchemaVersion()
      << ")\n";
  for (const auto& [t, n] : counts.items())
    out << "  " << t << ": " << n.get<int64_t>() << "\n";
  out << "runs:\n";
  for (const auto& r : runs)
    out << "  " << r.id << "  " << r.key.substr(0, 12) << "  " << r.kind << "  " << r.status << "  " << r.startedAt
        << "  " << (r.revision.empty() ? "-" : r.revision.substr(0, 12)) << "  " << r.cases << " cases\n";
}

void dbQuery(const fs::path& db, const std::string& sql, const std::string& format, std::ostream& out) {
  Store s(db, readOnly());
  try {
    const char* tail = nullptr;
    sqlite3_stmt* probe = nullptr;
    int rc = sqlite3_prepare_v2(s.db().getHandle(), sql.c_str(), -1, &probe, &tail);
    sqlite3_finalize(probe);
    if (rc == SQLITE_OK && tail && std::string(tail).find_first_not_of(" \t\r\n;") != std::string::npos)
      throw StoreError(db.string() + ": query: one SQL statement at a time");
    SQLite::Statement st(s.db(), sql);
    json rows = json::array();
    bool header = false;
    while (st.executeStep()) {
      if (format == "json") {
        json row = json::object();
        for (int i = 0; i < st.getColumnCount(); ++i)
          row[st.getColumnName(i)] = columnJson(st.getColumn(i));
        rows.push_back(row);
        continue;
      }
      if (!header) {
        for (int i = 0; i < st.getColumnCount(); ++i)
          out << (i ? "\t" : "") << st.getColumnName(i);
        out << "\n";
        header = true;
      }
      for (int i = 0; i < st.getColumnCount(); ++i)
        out << (i ? "\t" : "") << columnText(st.getColumn(i));
      out << "\n";
    }
    if (format == "json")
      out << rows.dump(2) << "\n";
  } catch (const StoreError&) {
    throw;
  } catch (const std::exception& e) {
    throw StoreError(db.string() + ": query: " + e.what() +
                     " (the database is opened read-only; see docs/store.md for the tables)");
  }
}

void dbExport(const fs::path& db, const std::vector<std::string>& runs, std::ostream& out) {
  Store s(db, readOnly());
  std::vector<RunRecord> records;
  if (runs.empty())
    for (const auto& r : s.listRuns())
      records.push_back(s.loadRun(r.id));
  else
    for (const auto& sel : runs)
      records.push_back(s.loadRun(s.resolveRun(sel)));
  out << toJson(records).dump(1) << "\n";
}

ImportResult dbImport(const fs::path& db, const std::vector<std::string>& files, std::istream& in, std::ostream& out) {
  std::vector<RunRecord> all;
  for (const auto& f : files) {
    std::string name = f == "-" ? "<stdin>" : f;
    try {
      json doc;
      if (f == "-") {
        doc = json::parse(in);
      } else {
        std::ifstream file(f);
        if (!file)
          throw std::runtime_error("cannot read the file");
        doc = json::parse(file);
      }
      auto runs = runsFromJson(doc);
      all.insert(all.end(), runs.begin(), runs.end());
    } catch (const std::exception& e) {
      throw StoreError(name + ": " + e.what() + "; nothing was imported");
    }
  }
  Store s(db);
  ImportResult r = s.importRuns(all);
  out << "imported " << r.added << ", replaced " << r.replaced << ", skipped " << r.skipped << " runs into "
      << db.string() << "\n";
  return r;
}

ImportResult dbMerge(const fs::path& db, const std::vector<fs::path>& shards, std::ostream& out) {
  std::vector<std::vector<RunRecord>> perShard;
  for (const auto& sh : shards) {
    if (fs::exists(db) && fs::exists(sh) && fs::equivalent(db, sh))
      throw StoreError(sh.string() + ": a database cannot be merged into itself");
    Store src(sh, readOnly());
    std::vector<RunRecord> runs;
    for (const auto& r : src.listRuns())
      runs.push_back(src.loadRun(r.id));
    perShard.push_back(std::move(runs));
  }
  Store s(db);
  ImportResult total;
  for (size_t i = 0; i < shards.size(); ++i) {
    ImportResult r = s.importRuns(perShard[i]);
    // The fuzzer's rows: cases and findings copied once, so merging a shard again adds nothing.
    FuzzMergeCounts f = mergeFuzzTables(s, shards[i]);
    out << shards[i].string() << ": added " << r.added << ", replaced " << r.replaced << ", skipped " << r.skipped
        << " runs";
    if (f.shards > 0 || f.cases > 0)
      out << "; fuzz: " << f.cases << " new cases, " << f.findings << " new findings from " << f.shards << " shard(s)"
          << (f.unfinished ? ", " + std::to_string(f.unfinished) + " unfinished (rerun with --resume)" : "");
    out << "\n";
    total.added += r.added;
    total.replaced += r.replaced;
    total.skipped += r.skipped;
  }
  return total;
}

} // namespace dynqual::store
