#pragma once
// Fuzz rows written straight into a store (schema 7), for the tests of buckets, merging and the
// campaign report. Every value is given by the test, so its expectations can be counted by hand.
#include "dynqual/store/Store.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <string>

namespace fuzzfixture {

/// A shard row; `endedAt` "" leaves it unfinished.
inline void shard(dynqual::store::Store& s, const std::string& campaign, const std::string& night,
                  const std::string& startedAt, const std::string& endedAt, double wall,
                  const std::string& summary = "{}") {
  SQLite::Statement q(s.db(), "INSERT INTO fuzz_campaigns(campaign, night, started_at, ended_at, revision, "
                              "wall_seconds, summary) VALUES(?, ?, ?, ?, 'abcdef0123456789', ?, ?)");
  q.bind(1, campaign);
  q.bind(2, night);
  q.bind(3, startedAt);
  if (endedAt.empty())
    q.bind(4);
  else
    q.bind(4, endedAt);
  q.bind(5, wall);
  q.bind(6, summary);
  q.exec();
}

/// One finished case.
inline void caseRow(dynqual::store::Store& s, const std::string& campaign, int64_t index, int64_t seed, bool valid,
                    int nodes, int findings = 0) {
  SQLite::Statement q(s.db(), "INSERT INTO fuzz_campaign_cases(campaign, case_index, seed, generator, valid, nodes, "
                              "findings) VALUES(?, ?, ?, 'shapegen-3', ?, ?, ?)");
  q.bind(1, campaign);
  q.bind(2, index);
  q.bind(3, seed);
  q.bind(4, valid ? 1 : 0);
  q.bind(5, nodes);
  q.bind(6, findings);
  q.exec();
}

/// One finding of bucket `bucket` (key "run-trap|unattributed|OP|msg").
inline void finding(dynqual::store::Store& s, const std::string& campaign, int64_t index, int64_t seed,
                    const std::string& bucket, const std::string& op, int nodesAfter, int64_t elements,
                    const std::string& recordedAt, const std::string& signature = "") {
  SQLite::Statement q(s.db(),
                      "INSERT INTO fuzz_findings(campaign, case_index, seed, generator, signature, symptom, detail, "
                      "variant, knob, binding, nodes_before, nodes_after, case_dir, reproducer, state, "
                      "seconds_into_campaign, recorded_at, bucket, bucket_key, origin, elements_after, "
                      "minimized_detail, graph_text) VALUES(?, ?, ?, 'shapegen-3', ?, 'run-trap', 'detail', "
                      "'dq:production@sim', '', 'N0=1', 10, ?, '', ?, 'new', 1.0, ?, ?, ?, ?, ?, 'trap <here>', ?)");
  q.bind(1, campaign);
  q.bind(2, index);
  q.bind(3, seed);
  q.bind(4, signature.empty() ? "run-trap|" + op + "|unattributed" : signature);
  q.bind(5, nodesAfter);
  q.bind(6, "dynqual fuzz-case --seed " + std::to_string(seed));
  q.bind(7, recordedAt);
  q.bind(8, bucket);
  q.bind(9, "run-trap|unattributed|" + op + "|trap <here>");
  q.bind(10, op);
  q.bind(11, elements);
  q.bind(12, "input x: float[N0]\n" + op + "_1 = " + op + "(x) -> y\noutput y: float[?]\n");
  q.exec();
}

} // namespace fuzzfixture
