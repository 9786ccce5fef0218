#include "dynqual/store/History.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cmath>

namespace dynqual::store {

std::vector<HistoryPoint> metricHistory(Store& db, const HistoryQuery& q) {
  std::string kinds;
  for (size_t i = 0; i < q.kinds.size(); ++i)
    kinds += (i ? ", ?" : "?");
  std::string sql =
      "SELECT r.id, r.key, r.kind, r.started_at, COALESCE(b.revision, ''), COALESCE(b.dirty, 0), mc.fingerprint, "
      "r.device, m.name, m.hash, c.id, s.unit, s.value "
      "FROM runs r JOIN machines mc ON mc.id = r.machine_id LEFT JOIN builds b ON b.id = r.build_id "
      "JOIN cases c ON c.run_id = r.id AND c.dataset_id IS NULL JOIN models m ON m.id = c.model_id "
      "JOIN samples s ON s.case_id = c.id AND s.metric = ? "
      "WHERE r.status = 'finished'";
  if (!q.kinds.empty())
    sql += " AND r.kind IN (" + kinds + ")";
  if (!q.model.empty())
    sql += " AND m.name = ?";
  if (!q.machine.empty())
    sql += " AND substr(mc.fingerprint, 1, length(?)) = ?";
  sql += " ORDER BY r.started_at, r.id, m.name, c.id, s.rep";
  std::vector<HistoryPoint> out;
  try {
    SQLite::Statement s(db.db(), sql);
    int i = 1;
    s.bind(i++, q.metric);
    for (const auto& k : q.kinds)
      s.bind(i++, k);
    if (!q.model.empty())
      s.bind(i++, q.model);
    if (!q.machine.empty()) {
      s.bind(i++, q.machine);
      s.bind(i++, q.machine);
    }
    int64_t lastCase = -1;
    while (s.executeStep()) {
      int64_t caseId = s.getColumn(10).getInt64();
      if (caseId != lastCase) {
        if (!out.empty() && out.back().values.empty())
          out.pop_back();
        HistoryPoint p;
        p.runId = s.getColumn(0).getInt64();
        p.runKey = s.getColumn(1).getString();
        p.kind = s.getColumn(2).getString();
        p.startedAt = s.getColumn(3).getString();
        p.revision = s.getColumn(4).getString();
        p.dirty = s.getColumn(5).getInt() != 0;
        p.machine = s.getColumn(6).getString();
        p.device = s.getColumn(7).getString();
        p.model = s.getColumn(8).getString();
        p.modelHash = s.getColumn(9).getString();
        p.unit = s.getColumn(11).getString();
        out.push_back(std::move(p));
        lastCase = caseId;
      }
      if (!s.getColumn(12).isNull() && std::isfinite(s.getColumn(12).getDouble()))
        out.back().values.push_back(s.getColumn(12).getDouble());
    }
    if (!out.empty() && out.back().values.empty())
      out.pop_back();
  } catch (const StoreError&) {
    throw;
  } catch (const std::exception& e) {
    throw StoreError(db.path().string() + ": reading the history of " + q.metric + ": " + e.what());
  }
  return out;
}

} // namespace dynqual::store
