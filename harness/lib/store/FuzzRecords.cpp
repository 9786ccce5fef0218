#include "dynqual/store/FuzzRecords.h"

#include "dynqual/store/Fingerprint.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <set>

namespace fs = std::filesystem;

namespace dynqual::store {

namespace {

std::string text(SQLite::Statement& q, int col) {
  return q.getColumn(col).isNull() ? "" : q.getColumn(col).getString();
}

/// Splits "symptom|pass|origin|message" (the message may itself hold '|').
void splitKey(FuzzBucket& b) {
  std::string rest = b.key;
  std::string* parts[] = {&b.symptom, &b.pass, &b.origin};
  for (std::string* p : parts) {
    size_t bar = rest.find('|');
    *p = rest.substr(0, bar);
    rest = bar == std::string::npos ? "" : rest.substr(bar + 1);
  }
  b.message = rest;
}

/// Binds a value read from another database, keeping its type (NULL, integer, real, text).
void bindColumn(SQLite::Statement& ins, int index, const SQLite::Column& c) {
  if (c.isNull())
    ins.bind(index);
  else if (c.isInteger())
    ins.bind(index, c.getInt64());
  else if (c.isFloat())
    ins.bind(index, c.getDouble());
  else
    ins.bind(index, c.getString());
}

int statusRank(const std::string& s) {
  return s == "new" ? 0 : s == "known" ? 1 : 2;
}

/// Markdown table cell: pipes and newlines would break the row.
std::string cell(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|')
      o += "\\|";
    else if (c == '\n')
      o += ' ';
    else
      o += c;
  }
  return o;
}

} // namespace

std::vector<std::string> fuzzNights(Store& store) {
  std::vector<std::string> nights;
  SQLite::Statement q(store.db(), "SELECT night FROM fuzz_campaigns GROUP BY night ORDER BY MIN(started_at), night");
  while (q.executeStep())
    nights.push_back(q.getColumn(0).getString());
  return nights;
}

std::vector<FuzzShard> fuzzShards(Store& store, const std::string& night) {
  std::vector<FuzzShard> shards;
  SQLite::Statement q(store.db(),
                      "SELECT c.campaign, c.night, c.started_at, c.ended_at, c.revision, c.wall_seconds, c.summary, "
                      "(SELECT COUNT(*) FROM fuzz_campaign_cases k WHERE k.campaign = c.campaign), "
                      "(SELECT COALESCE(SUM(valid), 0) FROM fuzz_campaign_cases k WHERE k.campaign = c.campaign), "
                      "(SELECT COUNT(*) FROM fuzz_findings f WHERE f.campaign = c.campaign) "
                      "FROM fuzz_campaigns c WHERE ? = '' OR c.night = ? ORDER BY c.started_at, c.campaign");
  q.bind(1, night);
  q.bind(2, night);
  while (q.executeStep()) {
    FuzzShard s;
    s.campaign = text(q, 0);
    s.night = text(q, 1);
    s.startedAt = text(q, 2);
    s.endedAt = text(q, 3);
    s.revision = text(q, 4);
    s.wallSeconds = q.getColumn(5).getDouble();
    s.summary = nlohmann::json::parse(text(q, 6), nullptr, false);
    if (!s.summary.is_object())
      s.summary = nlohmann::json::object();
    s.cases = q.getColumn(7).getInt64();
    s.valid = q.getColumn(8).getInt64();
    s.findings = q.getColumn(9).getInt64();
    shards.push_back(std::move(s));
  }
  return shards;
}

std::vector<FuzzNightStats> fuzzNightStats(Store& store, int limit) {
  std::vector<FuzzNightStats> out;
  std::map<std::string, int64_t> fresh;
  for (const auto& b : fuzzBuckets(store, ""))
    ++fresh[b.firstNight];
  for (const auto& night : fuzzNights(store)) {
    FuzzNightStats n;
    n.night = night;
    for (const auto& s : fuzzShards(store, night)) {
      ++n.shards;
      n.unfinished += s.endedAt.empty();
      n.cases += s.cases;
      n.valid += s.valid;
      n.findings += s.findings;
      n.wallSeconds += s.wallSeconds;
    }
    SQLite::Statement q(store.db(), "SELECT COUNT(DISTINCT f.bucket) FROM fuzz_findings f JOIN fuzz_campaigns c "
                                    "ON c.campaign = f.campaign WHERE c.night = ? AND f.bucket != ''");
    q.bind(1, night);
    if (q.executeStep())
      n.buckets = q.getColumn(0).getInt64();
    n.newBuckets = fresh[night];
    out.push_back(n);
  }
  if (static_cast<int>(out.size()) > limit)
    out.erase(out.begin(), out.end() - limit);
  return out;
}

std::vector<int> fuzzCaseSizes(Store& store, const std::string& night) {
  std::vector<int> sizes;
  SQLite::Statement q(store.db(), "SELECT k.nodes FROM fuzz_campaign_cases k JOIN fuzz_campaigns c ON c.campaign = "
                                  "k.campaign WHERE k.valid = 1 AND (? = '' OR c.night = ?)");
  q.bind(1, night);
  q.bind(2, night);
  while (q.executeStep())
    sizes.push_back(q.getColumn(0).getInt());
  return sizes;
}

std::vector<FuzzBucket> fuzzBuckets(Store& store, const std::string& nightIn) {
  std::string night = nightIn;
  if (night.empty()) {
    auto nights = fuzzNights(store);
    if (!nights.empty())
      night = nights.back();
  }
  std::map<std::string, FuzzBucket> byId;
  std::map<std::string, std::set<std::string>> sigs;
  std::map<std::string, std::set<uint64_t>> seeds;
  SQLite::Statement q(
      store.db(), "SELECT f.bucket, f.bucket_key, f.campaign, f.seed, f.signature, f.detail, f.minimized_detail, "
                  "f.variant, f.knob, f.binding, f.nodes_after, f.elements_after, f.case_dir, f.reproducer, "
                  "f.recorded_at, COALESCE(c.night, ''), COALESCE(c.revision, ''), f.graph_text FROM fuzz_findings f "
                  "LEFT JOIN fuzz_campaigns c ON c.campaign = f.campaign WHERE f.bucket != '' "
                  "ORDER BY f.recorded_at, f.id");
  while (q.executeStep()) {
    std::string id = text(q, 0);
    auto [it, fresh] = byId.try_emplace(id);
    FuzzBucket& b = it->second;
    uint64_t seed = static_cast<uint64_t>(q.getColumn(3).getInt64());
    int64_t nodes = q.getColumn(10).getInt64(), elements = q.getColumn(11).getInt64();
    std::string campaign = text(q, 2), at = text(q, 14), rowNight = text(q, 15);
    if (fresh) {
      b.bucket = id;
      b.key = text(q, 1);
      splitKey(b);
      b.firstCampaign = campaign;
      b.firstSeen = at;
      b.firstNight = rowNight;
      b.firstRevision = text(q, 16);
    }
    ++b.hits;
    if (rowNight == night)
      ++b.hitsTonight;
    b.lastCampaign = campaign;
    b.lastSeen = at;
    sigs[id].insert(text(q, 4));
    seeds[id].insert(seed);
    bool smaller = fresh || nodes < b.nodes || (nodes == b.nodes && elements < b.elements) ||
                   (nodes == b.nodes && elements == b.elements && seed < b.seed);
    if (smaller) {
      b.nodes = nodes;
      b.elements = elements;
      b.seed = seed;
      b.signature = text(q, 4);
      b.detail = text(q, 6).empty() ? text(q, 5) : text(q, 6);
      b.variant = text(q, 7);
      b.knob = text(q, 8);
      b.binding = text(q, 9);
      b.caseDir = text(q, 12);
      b.reproducer = text(q, 13);
      b.graph = text(q, 17);
    }
  }
  SQLite::Statement st(store.db(),
                       "SELECT bucket, corpus_case, checked_at, checked_revision, passes FROM fuzz_bucket_status");
  while (st.executeStep()) {
    auto it = byId.find(text(st, 0));
    if (it == byId.end())
      continue;
    it->second.corpusCase = text(st, 1);
    it->second.checkedAt = text(st, 2);
    it->second.checkedRevision = text(st, 3);
    it->second.passes = st.getColumn(4).isNull() ? -1 : st.getColumn(4).getInt();
  }
  // A report of an older night leaves out the buckets that did not exist yet.
  auto nights = fuzzNights(store);
  auto rank = [&](const std::string& n) {
    auto it = std::find(nights.begin(), nights.end(), n);
    return it == nights.end() ? -1 : static_cast<int>(it - nights.begin());
  };
  int nightRank = rank(night);
  std::vector<FuzzBucket> out;
  for (auto& [id, b] : byId) {
    if (nightRank >= 0 && rank(b.firstNight) > nightRank)
      continue;
    b.signatures = static_cast<int64_t>(sigs[id].size());
    for (uint64_t s : seeds[id])
      if (s != b.seed && b.exampleSeeds.size() < 5)
        b.exampleSeeds.push_back(s);
    if (!night.empty() && b.firstNight == night)
      b.status = "new";
    else if (b.passes == 1 && !b.checkedAt.empty() && b.lastSeen <= b.checkedAt)
      b.status = "fixed";
    else
      b.status = "known";
    out.push_back(std::move(b));
  }
  std::stable_sort(out.begin(), out.end(), [](const FuzzBucket& a, const FuzzBucket& b) {
    if (statusRank(a.status) != statusRank(b.status))
      return statusRank(a.status) < statusRank(b.status);
    if (a.hits != b.hits)
      return a.hits > b.hits;
    return a.bucket < b.bucket;
  });
  return out;
}

void setBucketStatus(Store& store, const std::string& bucket, const std::string& corpusCase, bool checked, bool passes,
                     const std::string& revision) {
  store.transaction("recording the status of bucket " + bucket, [&] {
    SQLite::Statement ins(store.db(), "INSERT OR IGNORE INTO fuzz_bucket_status(bucket) VALUES(?)");
    ins.bind(1, bucket);
    ins.exec();
    if (!corpusCase.empty()) {
      SQLite::Statement u(store.db(), "UPDATE fuzz_bucket_status SET corpus_case = ? WHERE bucket = ?");
      u.bind(1, corpusCase);
      u.bind(2, bucket);
      u.exec();
    }
    if (checked) {
      SQLite::Statement u(store.db(), "UPDATE fuzz_bucket_status SET checked_at = ?, checked_revision = ?, passes = ? "
                                      "WHERE bucket = ?");
      u.bind(1, utcNow());
      u.bind(2, revision);
      u.bind(3, passes ? 1 : 0);
      u.bind(4, bucket);
      u.exec();
    }
  });
}

FuzzBucket findBucket(Store& store, const std::string& prefix) {
  if (prefix.size() < 4)
    throw StoreError(store.path().string() + ": bucket '" + prefix +
                     "' is too short; give at least 4 hex digits (`dynqual fuzz triage --db " + store.path().string() +
                     "` lists them)");
  std::vector<FuzzBucket> hits;
  for (auto& b : fuzzBuckets(store))
    if (b.bucket.rfind(prefix, 0) == 0)
      hits.push_back(b);
  if (hits.size() != 1)
    throw StoreError(store.path().string() + ": " + (hits.empty() ? "no bucket" : "more than one bucket") +
                     " starts with '" + prefix + "'; `dynqual fuzz triage --db " + store.path().string() +
                     "` lists them");
  return hits[0];
}

FuzzMergeCounts mergeFuzzTables(Store& into, const fs::path& shardPath) {
  OpenOptions ro;
  ro.mode = OpenOptions::Mode::ReadOnly;
  Store shard(shardPath, ro);
  FuzzMergeCounts n;
  int version = shard.schemaVersion();
  if (version < 5)
    return n;             // no fuzz tables yet
  bool v6 = version >= 7; // buckets arrived with schema version 7
  into.transaction("merging the fuzz rows of " + shardPath.string(), [&] {
    {
      SQLite::Statement q(shard.db(), "SELECT campaign, case_index, seed, generator, valid, nodes, findings "
                                      "FROM fuzz_campaign_cases");
      SQLite::Statement ins(into.db(), "INSERT OR IGNORE INTO fuzz_campaign_cases(campaign, case_index, seed, "
                                       "generator, valid, nodes, findings) VALUES(?, ?, ?, ?, ?, ?, ?)");
      while (q.executeStep()) {
        for (int c = 0; c < 7; ++c)
          bindColumn(ins, c + 1, q.getColumn(c));
        n.cases += ins.exec();
        ins.reset();
      }
    }
    {
      std::string cols = "campaign, case_index, seed, generator, signature, symptom, detail, variant, knob, binding, "
                         "nodes_before, nodes_after, case_dir, reproducer, state, seconds_into_campaign, recorded_at";
      std::string more = ", bucket, bucket_key, origin, elements_after, minimized_detail, graph_text";
      int count = 17 + (v6 ? 6 : 0);
      SQLite::Statement q(shard.db(), "SELECT " + cols + (v6 ? more : "") + " FROM fuzz_findings ORDER BY id");
      std::string marks;
      for (int c = 0; c < count; ++c)
        marks += c ? ", ?" : "?";
      SQLite::Statement ins(into.db(), "INSERT OR IGNORE INTO fuzz_findings(" + cols + (v6 ? more : "") + ") VALUES(" +
                                           marks + ")");
      while (q.executeStep()) {
        for (int c = 0; c < count; ++c)
          bindColumn(ins, c + 1, q.getColumn(c));
        n.findings += ins.exec();
        ins.reset();
      }
    }
    {
      SQLite::Statement q(shard.db(), "SELECT signature, symptom, ops, pass, first_campaign, first_seed, first_seen, "
                                      "hits FROM fuzz_signatures");
      SQLite::Statement ins(into.db(), "INSERT OR IGNORE INTO fuzz_signatures(signature, symptom, ops, pass, "
                                       "first_campaign, first_seed, first_seen, hits) VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
      while (q.executeStep()) {
        for (int c = 0; c < 8; ++c)
          bindColumn(ins, c + 1, q.getColumn(c));
        ins.exec();
        ins.reset();
      }
      into.db().exec("UPDATE fuzz_signatures SET hits = (SELECT COUNT(*) FROM fuzz_findings f "
                     "WHERE f.signature = fuzz_signatures.signature) WHERE EXISTS (SELECT 1 FROM fuzz_findings f "
                     "WHERE f.signature = fuzz_signatures.signature)");
    }
    if (v6) {
      SQLite::Statement q(shard.db(), "SELECT campaign, night, started_at, ended_at, revision, wall_seconds, summary "
                                      "FROM fuzz_campaigns");
      SQLite::Statement ins(into.db(),
                            "INSERT INTO fuzz_campaigns(campaign, night, started_at, ended_at, revision, wall_seconds, "
                            "summary) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(campaign) DO UPDATE SET "
                            "ended_at = excluded.ended_at, wall_seconds = excluded.wall_seconds, "
                            "summary = excluded.summary WHERE (fuzz_campaigns.ended_at IS NULL AND excluded.ended_at "
                            "IS NOT NULL) OR excluded.wall_seconds > fuzz_campaigns.wall_seconds");
      while (q.executeStep()) {
        for (int c = 0; c < 7; ++c)
          bindColumn(ins, c + 1, q.getColumn(c));
        ins.exec();
        ins.reset();
        ++n.shards;
        if (q.getColumn(3).isNull())
          ++n.unfinished;
      }
      SQLite::Statement bs(shard.db(), "SELECT bucket, corpus_case, checked_at, checked_revision, passes "
                                       "FROM fuzz_bucket_status");
      SQLite::Statement bi(into.db(), "INSERT OR IGNORE INTO fuzz_bucket_status(bucket, corpus_case, checked_at, "
                                      "checked_revision, passes) VALUES(?, ?, ?, ?, ?)");
      while (bs.executeStep()) {
        for (int c = 0; c < 5; ++c)
          bindColumn(bi, c + 1, bs.getColumn(c));
        bi.exec();
        bi.reset();
      }
    }
  });
  return n;
}

nlohmann::json toJson(const FuzzBucket& b) {
  return {
      {"bucket", b.bucket},
      {"key", b.key},
      {"status", b.status},
      {"symptom", b.symptom},
      {"pass", b.pass},
      {"origin", b.origin},
      {"message", b.message},
      {"hits", b.hits},
      {"hits_tonight", b.hitsTonight},
      {"signatures", b.signatures},
      {"first_seen",
       {{"campaign", b.firstCampaign}, {"at", b.firstSeen}, {"revision", b.firstRevision}, {"night", b.firstNight}}},
      {"last_seen", {{"campaign", b.lastCampaign}, {"at", b.lastSeen}}},
      {"smallest",
       {{"nodes", b.nodes},
        {"input_elements", b.elements},
        {"seed", b.seed},
        {"signature", b.signature},
        {"binding", b.binding},
        {"variant", b.variant},
        {"knob", b.knob},
        {"case_dir", b.caseDir},
        {"reproducer", b.reproducer},
        {"detail", b.detail}}},
      {"example_seeds", b.exampleSeeds},
      {"corpus_case", b.corpusCase},
      {"last_check",
       b.passes < 0 ? nlohmann::json(nullptr)
                    : nlohmann::json{{"at", b.checkedAt}, {"revision", b.checkedRevision}, {"passes", b.passes == 1}}}};
}

void writeTriage(const std::vector<FuzzBucket>& buckets, const std::string& night, const std::string& format,
                 std::ostream& out) {
  if (format == "json") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& b : buckets)
      list.push_back(toJson(b));
    out << nlohmann::json{{"format", "dynqual-triage"}, {"version", 1}, {"night", night}, {"buckets", list}}.dump(2)
        << "\n";
    return;
  }
  int fresh = 0, known = 0, fixed = 0;
  for (const auto& b : buckets)
    (b.status == "new" ? fresh : b.status == "known" ? known : fixed)++;
  out << "# Fuzz buckets" << (night.empty() ? "" : " (night " + night + ")") << "\n\n";
  out << buckets.size() << " bucket(s): " << fresh << " new, " << known << " known, " << fixed << " fixed.\n\n";
  if (buckets.empty())
    return;
  out << "| status | bucket | symptom | pass | origin | hits (night / all) | signatures | first seen | last seen | "
         "smallest | corpus case |\n";
  out << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& b : buckets)
    out << "| " << b.status << " | `" << b.bucket.substr(0, 12) << "` | " << cell(b.symptom) << " | " << cell(b.pass)
        << " | " << cell(b.origin) << " | " << b.hitsTonight << " / " << b.hits << " | " << b.signatures << " | "
        << cell(b.firstSeen) << " | " << cell(b.lastSeen) << " | " << b.nodes << " nodes, seed " << b.seed << " | "
        << (b.corpusCase.empty() ? "-" : cell(b.corpusCase)) << " |\n";
  out << "\n";
  for (const auto& b : buckets) {
    out << "## `" << b.bucket.substr(0, 12) << "` " << b.status << ": " << cell(b.symptom) << " in " << cell(b.origin)
        << " (" << cell(b.pass) << ")\n\n";
    out << "- message: `" << b.message << "`\n";
    if (!b.detail.empty()) {
      // The smallest reproducer's own message, with how its origin was traced (docs/fuzz/buckets.md).
      std::string detail = b.detail;
      std::replace(detail.begin(), detail.end(), '`', '\'');
      out << "- detail: `" << detail << "`\n";
    }
    out << "- reproducer: `" << b.reproducer << "`\n";
    if (!b.caseDir.empty())
      out << "- case: `" << b.caseDir << "` (`dynqual corpus add --bucket " << b.bucket.substr(0, 12) << "`)\n";
    out << "- first seen: " << b.firstSeen << " in `" << b.firstCampaign << "` at "
        << (b.firstRevision.empty() ? "unknown" : b.firstRevision.substr(0, 12)) << "\n";
    out << "\n";
  }
}

} // namespace dynqual::store
