#include "dynqual/fuzz/FindingStore.h"

#include "dynqual/store/Store.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <chrono>
#include <ctime>

namespace dynqual::fuzz {

namespace {

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : ",") + x;
  return s;
}

} // namespace

FindingStore::FindingStore(const std::filesystem::path& db) : store_(std::make_unique<store::Store>(db)) {
}
FindingStore::~FindingStore() = default;

std::set<int64_t> FindingStore::doneCases(const std::string& campaign) {
  std::set<int64_t> done;
  SQLite::Statement q(store_->db(), "SELECT case_index FROM fuzz_campaign_cases WHERE campaign = ?");
  q.bind(1, campaign);
  while (q.executeStep())
    done.insert(q.getColumn(0).getInt64());
  return done;
}

std::vector<std::string> FindingStore::recordCase(const std::string& campaign, int64_t caseIndex, const CaseReport& r,
                                                  const std::string& knob, double seconds) {
  std::vector<std::string> states;
  store_->transaction("recording fuzz case " + std::to_string(caseIndex), [&] {
    SQLite::Statement c(store_->db(),
                        "INSERT OR REPLACE INTO fuzz_campaign_cases(campaign, case_index, seed, generator, valid, "
                        "nodes, findings) VALUES(?, ?, ?, ?, ?, ?, ?)");
    c.bind(1, campaign);
    c.bind(2, static_cast<int64_t>(caseIndex));
    c.bind(3, static_cast<int64_t>(r.seed));
    c.bind(4, kGeneratorVersion);
    c.bind(5, r.valid ? 1 : 0);
    c.bind(6, r.nodes);
    c.bind(7, static_cast<int>(r.findings.size()));
    c.exec();
    std::string now = nowUtc();
    for (const auto& f : r.findings) {
      SQLite::Statement known(store_->db(), "SELECT 1 FROM fuzz_signatures WHERE signature = ?");
      known.bind(1, f.signature);
      bool isKnown = known.executeStep();
      states.push_back(isKnown ? "known" : "new");
      SQLite::Statement ins(
          store_->db(),
          "INSERT OR IGNORE INTO fuzz_findings(campaign, case_index, seed, generator, signature, "
          "symptom, detail, variant, knob, binding, nodes_before, nodes_after, case_dir, reproducer, "
          "state, seconds_into_campaign, recorded_at, bucket, bucket_key, origin, elements_after, "
          "minimized_detail, graph_text) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
          "?)");
      int k = 1;
      ins.bind(k++, campaign);
      ins.bind(k++, static_cast<int64_t>(caseIndex));
      ins.bind(k++, static_cast<int64_t>(r.seed));
      ins.bind(k++, kGeneratorVersion);
      ins.bind(k++, f.signature);
      ins.bind(k++, f.finding.symptom);
      ins.bind(k++, f.finding.detail);
      ins.bind(k++, f.finding.variant);
      ins.bind(k++, knob);
      ins.bind(k++, f.finding.bindingText);
      ins.bind(k++, f.nodesBefore);
      ins.bind(k++, f.nodesAfter);
      ins.bind(k++, f.caseDir);
      ins.bind(k++, f.reproducer);
      ins.bind(k++, states.back());
      ins.bind(k++, seconds);
      ins.bind(k++, now);
      ins.bind(k++, f.bucketHash);
      ins.bind(k++, f.bucket);
      ins.bind(k++, f.origin);
      ins.bind(k++, f.elementsAfter);
      ins.bind(k++, f.minimizedDetail);
      ins.bind(k++, f.graphText);
      bool inserted = ins.exec() > 0;
      if (!isKnown) {
        SQLite::Statement sig(store_->db(),
                              "INSERT INTO fuzz_signatures(signature, symptom, ops, pass, first_campaign, first_seed, "
                              "first_seen, hits) VALUES(?, ?, ?, ?, ?, ?, ?, 1)");
        sig.bind(1, f.signature);
        sig.bind(2, f.finding.symptom);
        sig.bind(3, joined(f.ops));
        sig.bind(4, f.pass);
        sig.bind(5, campaign);
        sig.bind(6, static_cast<int64_t>(r.seed));
        sig.bind(7, now);
        sig.exec();
      } else if (inserted) {
        SQLite::Statement hit(store_->db(), "UPDATE fuzz_signatures SET hits = hits + 1 WHERE signature = ?");
        hit.bind(1, f.signature);
        hit.exec();
      }
    }
  });
  return states;
}

void FindingStore::beginShard(const std::string& campaign, const std::string& night, const std::string& revision) {
  store_->transaction("starting fuzz shard", [&] {
    SQLite::Statement ins(store_->db(), "INSERT INTO fuzz_campaigns(campaign, night, started_at, revision) "
                                        "VALUES(?, ?, ?, ?) ON CONFLICT(campaign) DO UPDATE SET ended_at = NULL");
    ins.bind(1, campaign);
    ins.bind(2, night);
    ins.bind(3, nowUtc());
    ins.bind(4, revision);
    ins.exec();
  });
}

namespace {

/// Adds the numbers of `delta` into `into`, key by key, recursively.
void addInto(nlohmann::json& into, const nlohmann::json& delta) {
  for (auto it = delta.begin(); it != delta.end(); ++it) {
    if (it->is_object()) {
      if (!into.contains(it.key()) || !into[it.key()].is_object())
        into[it.key()] = nlohmann::json::object();
      addInto(into[it.key()], *it);
    } else if (it->is_number()) {
      double have = into.contains(it.key()) && into[it.key()].is_number() ? into[it.key()].get<double>() : 0.0;
      into[it.key()] = have + it->get<double>();
    } else {
      into[it.key()] = *it;
    }
  }
}

} // namespace

void FindingStore::finishShard(const std::string& campaign, const nlohmann::json& delta, double wallSeconds,
                               bool completed) {
  store_->transaction("finishing fuzz shard", [&] {
    SQLite::Statement q(store_->db(), "SELECT summary FROM fuzz_campaigns WHERE campaign = ?");
    q.bind(1, campaign);
    nlohmann::json summary = nlohmann::json::object();
    if (q.executeStep())
      summary = nlohmann::json::parse(q.getColumn(0).getString(), nullptr, false);
    if (!summary.is_object())
      summary = nlohmann::json::object();
    addInto(summary, delta);
    SQLite::Statement u(store_->db(), "UPDATE fuzz_campaigns SET summary = ?, wall_seconds = wall_seconds + ?, "
                                      "ended_at = CASE WHEN ? THEN ? ELSE NULL END WHERE campaign = ?");
    u.bind(1, summary.dump());
    u.bind(2, wallSeconds);
    u.bind(3, completed ? 1 : 0);
    u.bind(4, nowUtc());
    u.bind(5, campaign);
    u.exec();
  });
}

} // namespace dynqual::fuzz
