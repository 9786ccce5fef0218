#pragma once
#include <cmath>
// The report's tables, computed once from a ReportInput and formatted by each renderer.
#include "dynqual/reports/Report.h"

#include <optional>
#include <string>
#include <vector>

namespace dynqual::reports::detail {

/// A numeric column fed by one metric: the cell is the median of the case's samples times
/// `scale` (unit conversion only), printed with `precision` decimals.
struct MetricColumn {
  const char* header;
  const char* metric;
  double scale;
  int precision;
};

/// A value in the head run and, when a base run is given, in the base run.
struct Pair {
  std::optional<double> head, base;
};

/// One accuracy row. A failed case without a comparison (compile failure, crash, timeout,
/// runtime error) is a row too, with `measured` false, so a failure is never left out.
struct AccuracyLine {
  std::string label, comparison, verdict;
  double l2 = 0, relL2 = 0;
  int64_t elements = 0, nanInf = 0;
  double cosine = std::nan(""); ///< the smallest cosine of the comparison's outputs; NaN when none
  std::string error;            ///< the case's error for a failed case, else ""
  bool measured = true;         ///< false: no comparison was made, the numbers are meaningless
  bool failed = false;          ///< the case failed (or its verdict is not "pass")
};
struct PerfLine {
  std::string label;
  std::vector<Pair> cells; ///< one per perfColumns()
};
struct CounterLine {
  std::string label;
  std::vector<Pair> cells; ///< one per counterColumns()
};
struct GenLine {
  std::string label;
  std::vector<std::string> params;          ///< one per genParams()
  std::vector<std::optional<double>> cells; ///< one per genColumns()
};
struct SizeLine {
  std::string file;
  std::optional<double> thisMB, baseMB;
};

struct Tables {
  std::string title;
  std::string warning;     ///< non-empty for an unfinished run
  std::string baseNote;    ///< "Compared with base run ..." or ""
  std::string threshold;   ///< the accuracy threshold and its meaning
  int failures = 0;        ///< accuracy lines with failed set
  bool unfinished = false; ///< the run never finished: no verdict without a failure
  std::vector<AccuracyLine> accuracy;
  std::vector<PerfLine> performance;
  std::vector<CounterLine> counters;
  std::vector<GenLine> generation;
  std::vector<SizeLine> sizes;
  std::vector<std::pair<std::string, std::string>> footer; ///< (label, value)
  bool hasBase = false;
};

const std::vector<MetricColumn>& perfColumns();
const std::vector<MetricColumn>& counterColumns();                   ///< metric = counter name, scale 1
const std::vector<std::pair<const char*, const char*>>& genParams(); ///< (header, param key)
const std::vector<MetricColumn>& genColumns();

Tables buildTables(const ReportInput& in);

/// The verdict shown for a failed case: "FAIL (timeout)" / "FAIL (crash)" from its recorded
/// "verdict" param, "FAIL (compile)" for an error starting "compile:", else "FAIL".
std::string failureVerdict(const store::CaseRecord& c);
/// "verdict", or "verdict: error" when the line carries an error.
std::string verdictText(const AccuracyLine& a);
/// One line for the top of a report: "Result: FAIL, N failing cases (see the accuracy table).",
/// "Result: unfinished, no failing case so far (no verdict)." or "Result: pass, no failing cases."
std::string resultLine(const Tables& t);

/// "12.0", "-" for a missing value.
std::string fixed(std::optional<double> v, int precision);
/// Change in percent, (head - base) / base * 100, as "+8.3%"; "n/a" when base is 0 or missing.
std::string changePercent(const Pair& p);
/// "m1 / test_data_set_0", or the model name for a whole-model case.
std::string caseLabel(const store::CaseRecord& c);

} // namespace dynqual::reports::detail
