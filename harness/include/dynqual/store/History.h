#pragma once
// One metric of stored runs over time, for `dynqual history` (docs/commands/history.md): each
// finished run's samples of the metric on each model's whole-model case, oldest first.
#include "dynqual/store/Store.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dynqual::store {

/// Which points to read. Empty strings match everything.
struct HistoryQuery {
  std::string metric = "latency_ms";            ///< a samples.metric name (docs/store.md)
  std::string model;                            ///< model name (its folder name), exact
  std::string machine;                          ///< prefix of the machine fingerprint
  std::vector<std::string> kinds = {"qualify"}; ///< run kinds; the nightly job records qualify runs
};

/// One run's samples of the metric on one model (one point of a history).
struct HistoryPoint {
  int64_t runId = 0;
  std::string runKey, kind, startedAt; ///< startedAt: UTC ISO 8601
  std::string revision;                ///< git commit of the run's build; "" when it has none
  bool dirty = false;                  ///< the build's work tree had uncommitted changes
  std::string machine;                 ///< fingerprint
  std::string device;
  std::string model, modelHash;
  std::string unit;
  std::vector<double> values; ///< every finite sample, in repetition order (unit above)
};

/// Points matching `q`, ordered by (started_at, run id, model name). A run contributes one point
/// per model whose whole-model case (no data set) holds samples of q.metric; non-finite samples
/// (stored as NULL) are left out, and a case with none left gives no point. Unfinished runs are
/// left out. Throws StoreError naming the database on a read failure.
std::vector<HistoryPoint> metricHistory(Store& db, const HistoryQuery& q);

} // namespace dynqual::store
