#include "dynqual/store/Schema.h"

#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include <stdexcept>

namespace dynqual::store {

namespace {

// Version 1: machines, builds, pipelines, runs, models, data sets, cases, accuracy, samples,
// counters. Content keys (fingerprint, key, hash) are UNIQUE so import and merge deduplicate.
const char* kV1 = R"sql(
CREATE TABLE machines(
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  cpu_model TEXT NOT NULL,
  cores INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  os TEXT NOT NULL,
  gpu_name TEXT NOT NULL DEFAULT '',
  gpu_driver TEXT NOT NULL DEFAULT '');
CREATE TABLE builds(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  revision TEXT NOT NULL,
  dirty INTEGER NOT NULL,
  compiler_version TEXT NOT NULL,
  dynqual_version TEXT NOT NULL);
CREATE TABLE build_artifacts(
  build_id INTEGER NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  PRIMARY KEY(build_id, path));
CREATE TABLE pipelines(
  id INTEGER PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  spec TEXT NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  status TEXT NOT NULL CHECK(status IN ('unfinished', 'finished')),
  started_at TEXT NOT NULL,
  ended_at TEXT,
  command_line TEXT NOT NULL,
  device TEXT NOT NULL,
  machine_id INTEGER NOT NULL REFERENCES machines(id),
  build_id INTEGER REFERENCES builds(id),
  base_build_id INTEGER REFERENCES builds(id),
  pipeline_id INTEGER REFERENCES pipelines(id));
CREATE TABLE run_params(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY(run_id, key));
CREATE TABLE models(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  hash TEXT NOT NULL,
  UNIQUE(name, hash));
CREATE TABLE datasets(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  binding TEXT NOT NULL,
  hash TEXT NOT NULL,
  UNIQUE(hash, name));
CREATE TABLE cases(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  model_id INTEGER NOT NULL REFERENCES models(id),
  dataset_id INTEGER REFERENCES datasets(id),
  status TEXT NOT NULL,
  error TEXT NOT NULL,
  UNIQUE(run_id, seq));
CREATE TABLE case_params(
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY(case_id, key));
CREATE TABLE accuracy(
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  comparison TEXT NOT NULL,
  output TEXT NOT NULL,
  verdict TEXT NOT NULL,
  reason TEXT NOT NULL,
  dtype TEXT NOT NULL,
  shape TEXT NOT NULL,
  elements INTEGER NOT NULL,
  nan_inf_skipped INTEGER NOT NULL,
  mismatches INTEGER NOT NULL,
  l2 REAL, rel_l2 REAL, max_abs REAL, cosine REAL,
  PRIMARY KEY(case_id, comparison, output));
CREATE TABLE samples(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  value REAL,
  unit TEXT NOT NULL,
  rep INTEGER NOT NULL,
  PRIMARY KEY(case_id, metric, rep));
CREATE INDEX samples_by_run_metric ON samples(run_id, metric);
CREATE TABLE counters(
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value INTEGER NOT NULL,
  PRIMARY KEY(case_id, name));
)sql";

// Version 2: fuzz cases and findings, and statistical verdicts of A/B comparisons, with the
// LNT-style state of each regression ("active", "fixed", "ignored").
const char* kV2 = R"sql(
CREATE TABLE fuzz_cases(
  id INTEGER PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  generator TEXT NOT NULL,
  seed INTEGER NOT NULL,
  model_id INTEGER REFERENCES models(id),
  first_run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL);
CREATE TABLE findings(
  id INTEGER PRIMARY KEY,
  fuzz_case_id INTEGER NOT NULL REFERENCES fuzz_cases(id) ON DELETE CASCADE,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  bug_class TEXT NOT NULL,
  detail TEXT NOT NULL,
  state TEXT NOT NULL);
CREATE TABLE verdicts(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  base_run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  case_id INTEGER REFERENCES cases(id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  verdict TEXT NOT NULL,
  state TEXT NOT NULL,
  detail TEXT NOT NULL);
CREATE INDEX runs_by_kind_start ON runs(kind, started_at);
)sql";

// Version 3: typed results of A/B runs (ab, gate, calibrate): every timing sample with its round
// and ABBA position, the correctness check and exact counters of each model and arm, and the
// numbers that decided each comparison. The policy lives in run_params, so a run can be
// reanalysed from these rows alone.
const char* kV3 = R"sql(
CREATE TABLE ab_samples(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  arm TEXT NOT NULL CHECK(arm IN ('base', 'head')),
  round INTEGER NOT NULL,
  position INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  iterations INTEGER NOT NULL,
  PRIMARY KEY(run_id, model, arm, round, position, rep));
CREATE TABLE ab_checks(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  passed INTEGER NOT NULL,
  detail TEXT NOT NULL,
  bit_exact INTEGER NOT NULL,
  cases INTEGER NOT NULL,
  base_artifact_bytes INTEGER NOT NULL,
  head_artifact_bytes INTEGER NOT NULL,
  base_compile_ms REAL,
  head_compile_ms REAL,
  PRIMARY KEY(run_id, model));
CREATE TABLE ab_counters(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  arm TEXT NOT NULL CHECK(arm IN ('base', 'head')),
  name TEXT NOT NULL,
  value INTEGER NOT NULL,
  PRIMARY KEY(run_id, model, arm, name));
CREATE TABLE ab_comparisons(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  metric TEXT NOT NULL,
  unit TEXT NOT NULL,
  direction TEXT NOT NULL,
  rounds INTEGER NOT NULL,
  base_median REAL, head_median REAL,
  ratio REAL, ci_low REAL, ci_high REAL,
  median_ratio REAL, bootstrap_low REAL, bootstrap_high REAL,
  p REAL, p_holm REAL, alpha REAL,
  decided_at_rounds INTEGER NOT NULL,
  outlier_rounds TEXT NOT NULL,
  verdict TEXT NOT NULL,
  PRIMARY KEY(run_id, model, metric));
CREATE TABLE noise_calibrations(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  machine_id INTEGER NOT NULL REFERENCES machines(id),
  model TEXT NOT NULL,
  metric TEXT NOT NULL,
  rounds INTEGER NOT NULL,
  scaled_mad_log_ratio REAL NOT NULL,
  sd_log_ratio REAL NOT NULL,
  PRIMARY KEY(run_id, model, metric));
)sql";

// Compile-time samples of A/B runs timed with --compile-time: one compile child per arm per
// round, position 0 or 1 in that round's compile order.
const char* kV4 = R"sql(
CREATE TABLE ab_compile_samples(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  arm TEXT NOT NULL CHECK(arm IN ('base', 'head')),
  round INTEGER NOT NULL,
  position INTEGER NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  PRIMARY KEY(run_id, model, arm, round, position));
)sql";

// Version 5: shape-fuzzer campaigns. Each campaign shard records every case it finished (so a
// rerun with --resume skips them), each finding with its minimized signature, and one row per
// distinct signature, which decides whether a finding is new or known.
const char* kV5 = R"sql(
CREATE TABLE fuzz_campaign_cases(
  campaign TEXT NOT NULL,
  case_index INTEGER NOT NULL,
  seed INTEGER NOT NULL,
  generator TEXT NOT NULL,
  valid INTEGER NOT NULL,
  nodes INTEGER NOT NULL,
  findings INTEGER NOT NULL,
  PRIMARY KEY(campaign, case_index));
CREATE TABLE fuzz_signatures(
  signature TEXT PRIMARY KEY,
  symptom TEXT NOT NULL,
  ops TEXT NOT NULL,
  pass TEXT NOT NULL,
  first_campaign TEXT NOT NULL,
  first_seed INTEGER NOT NULL,
  first_seen TEXT NOT NULL,
  hits INTEGER NOT NULL);
CREATE TABLE fuzz_findings(
  id INTEGER PRIMARY KEY,
  campaign TEXT NOT NULL,
  case_index INTEGER NOT NULL,
  seed INTEGER NOT NULL,
  generator TEXT NOT NULL,
  signature TEXT NOT NULL,
  symptom TEXT NOT NULL,
  detail TEXT NOT NULL,
  variant TEXT NOT NULL,
  knob TEXT NOT NULL,
  binding TEXT NOT NULL,
  nodes_before INTEGER NOT NULL,
  nodes_after INTEGER NOT NULL,
  case_dir TEXT NOT NULL,
  reproducer TEXT NOT NULL,
  state TEXT NOT NULL CHECK(state IN ('new', 'known')),
  seconds_into_campaign REAL NOT NULL,
  recorded_at TEXT NOT NULL,
  UNIQUE(campaign, case_index, signature));
)sql";

// Version 6: the outcome of an A/B run beyond its samples, checks and comparisons: the exit code
// and verdict line it ended with, rounds and looks, and (as one JSON document) the infrastructure
// errors, warnings, environment check, binary sizes and injected slowdowns, so a report rebuilt
// from the store shows everything the run printed. `record_version` lets an older reader refuse
// a record it does not understand.
const char* kV6 = R"sql(
CREATE TABLE ab_outcomes(
  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  record_version INTEGER NOT NULL,
  exit_code INTEGER NOT NULL,
  verdict_line TEXT NOT NULL,
  rounds INTEGER NOT NULL,
  looks_done INTEGER NOT NULL,
  budget_exhausted INTEGER NOT NULL,
  wall_s REAL,
  details TEXT NOT NULL);
)sql";

// Version 7: buckets (one per bug, docs/fuzz/buckets.md) and campaign shards as units. Each
// finding carries its bucket; a bucket's hits, first and last sighting and smallest reproducer are
// read from fuzz_findings, so a merge that copies rows once (INSERT OR IGNORE) keeps them right.
// fuzz_campaigns holds one row per shard: ended_at stays NULL until the shard completes (a killed
// shard stays unfinished), and its summary (JSON: time split, op counts, counters) adds up over
// --resume runs. fuzz_bucket_status holds what triage learns: the corpus case of a bucket and
// whether it passed on the build checked.
const char* kV7 = R"sql(
ALTER TABLE fuzz_findings ADD COLUMN bucket TEXT NOT NULL DEFAULT '';
ALTER TABLE fuzz_findings ADD COLUMN bucket_key TEXT NOT NULL DEFAULT '';
ALTER TABLE fuzz_findings ADD COLUMN origin TEXT NOT NULL DEFAULT '';
ALTER TABLE fuzz_findings ADD COLUMN elements_after INTEGER NOT NULL DEFAULT 0;
ALTER TABLE fuzz_findings ADD COLUMN minimized_detail TEXT NOT NULL DEFAULT '';
ALTER TABLE fuzz_findings ADD COLUMN graph_text TEXT NOT NULL DEFAULT '';
CREATE INDEX fuzz_findings_bucket ON fuzz_findings(bucket);
CREATE TABLE fuzz_campaigns(
  campaign TEXT PRIMARY KEY,
  night TEXT NOT NULL,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  revision TEXT NOT NULL,
  wall_seconds REAL NOT NULL DEFAULT 0,
  summary TEXT NOT NULL DEFAULT '{}');
CREATE TABLE fuzz_bucket_status(
  bucket TEXT PRIMARY KEY,
  corpus_case TEXT NOT NULL DEFAULT '',
  checked_at TEXT,
  checked_revision TEXT,
  passes INTEGER);
)sql";

// Version 8: the equivalence interval of each A/B comparison, on which "no change" rests
// (docs/metrics/gate-decision.md); NULL in rows of older runs, whose "no change" used the CI.
// ab_side_samples holds the side metric's samples (diff::sideMetric), laid out as ab_samples, so
// that a reanalysis recomputes its comparisons too.
const char* kV8 = R"sql(
ALTER TABLE ab_comparisons ADD COLUMN equivalence_low REAL;
ALTER TABLE ab_comparisons ADD COLUMN equivalence_high REAL;
CREATE TABLE ab_side_samples(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  arm TEXT NOT NULL CHECK(arm IN ('base', 'head')),
  round INTEGER NOT NULL,
  position INTEGER NOT NULL,
  rep INTEGER NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  iterations INTEGER NOT NULL,
  PRIMARY KEY(run_id, model, arm, round, position, rep));
)sql";

} // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> all = {
      {1, "core results tables", kV1},
      {2, "fuzz findings and verdicts", kV2},
      {3, "A/B samples, checks, counters, comparisons and noise calibrations", kV3},
      {4, "A/B compile-time samples", kV4},
      {5, "shape-fuzzer campaign cases, findings and signatures", kV5},
      {6, "A/B run outcomes: exit code, verdict line, infrastructure errors, environment", kV6},
      {7, "fuzz buckets and campaign shards", kV7},
      {8, "A/B equivalence intervals and side-metric samples", kV8},
  };
  return all;
}

int currentSchemaVersion() {
  return migrations().back().version;
}

int schemaVersion(SQLite::Database& db) {
  return db.execAndGet("PRAGMA user_version").getInt();
}

void migrate(SQLite::Database& db, int target) {
  if (target < 0)
    target = currentSchemaVersion();
  int have = schemaVersion(db);
  if (have > currentSchemaVersion())
    throw std::runtime_error("unsupported: schema version " + std::to_string(have) + " is newer than this dynqual (" +
                             std::to_string(currentSchemaVersion()) + "); use a newer dynqual");
  for (const auto& m : migrations()) {
    if (m.version > target)
      break;
    if (m.version <= have)
      continue;
    db.exec("BEGIN IMMEDIATE");
    try {
      // Another process may have migrated while this one waited for the lock.
      if (schemaVersion(db) >= m.version) {
        db.exec("COMMIT");
        continue;
      }
      db.exec(m.sql);
      db.exec("PRAGMA user_version = " + std::to_string(m.version));
      db.exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db.getHandle(), "ROLLBACK", nullptr, nullptr, nullptr); // may be rolled back already
      throw;
    }
    have = m.version;
  }
}

} // namespace dynqual::store
