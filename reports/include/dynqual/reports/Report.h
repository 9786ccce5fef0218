#pragma once
// Reports rendered from the results store (docs/commands/report.md): Markdown for a PR comment,
// JSON, and a self-contained HTML page with Chart.js charts. Renderers format what the store
// holds; the only arithmetic is base/head change % and the median of a metric's samples.
#include "dynqual/store/Records.h"
#include "dynqual/store/Store.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dynqual::reports {

/// What one report shows: the run, an optional baseline, and the history of runs of the same
/// kind for the HTML charts (oldest first, head last).
struct ReportInput {
  store::RunRecord head;
  std::optional<store::RunRecord> base;
  std::vector<store::RunRecord> history;
  std::string dynqualVersion; ///< the version that rendered the report
};

/// The first line of the Markdown footer; a bot finds its sticky PR comment by it.
inline constexpr const char* kStickyMarker = "<!-- dynqual-report:sticky -->";

/// Markdown for a PR comment: accuracy, performance (base/head/change % with a base), device
/// counters (exact deltas), generation results (only when a case has a "ttft_ms" or "tps"
/// sample), binary sizes, and a footer starting with kStickyMarker. Every string from the
/// store is escaped (escapeMarkdown).
std::string renderMarkdown(const ReportInput& in);

/// The same tables as one JSON document {"format": "dynqual-report", "version": 1, ...}.
nlohmann::json renderJson(const ReportInput& in);

/// One self-contained HTML page: the same tables plus charts (history of each metric over
/// commits per machine, sample distributions per model, counters over time). Chart.js is read
/// from `chartJsPath` and inlined, and a Content-Security-Policy forbids every fetch. Throws
/// std::runtime_error naming the file when Chart.js cannot be read ("install libjs-chart.js").
std::string renderHtml(const ReportInput& in, const std::string& chartJsPath);

/// Where Debian's libjs-chart.js installs the UMD build of Chart.js.
std::string defaultChartJsPath();

/// Escapes text for a Markdown table cell or line: HTML metacharacters become entities,
/// Markdown metacharacters get a backslash, and line breaks become spaces.
std::string escapeMarkdown(const std::string& s);
/// Escapes text for HTML element content and double-quoted attributes.
std::string escapeHtml(const std::string& s);

/// `dynqual report` without the argument parsing.
struct ReportRequest {
  std::string db;             ///< the store to read (opened read-only)
  std::string run = "latest"; ///< "latest", a run id or a key prefix
  std::string base;           ///< optional baseline run, same selectors
  std::string format = "md";  ///< "md", "json" or "html"
  std::string output = "-";   ///< file, or "-" for stdout
  std::string chartJs;        ///< Chart.js file for html (default: defaultChartJsPath())
  int historyLimit = 50;      ///< runs shown in the history charts
};

/// Renders the report of a case-based run (qualify, run, generate). The output file is opened
/// before the database is read, so a bad path fails at once. Returns the report's exit code
/// (caseRunExitCode). Throws std::runtime_error (or store::StoreError) with one line naming the
/// file or run and what to do.
int runReport(const ReportRequest& req, std::ostream& stdoutStream);

/// Writes the report of case-based run `runId` of the open store `s` to `out` in req.format
/// (req.run and req.output are not read; req.base is resolved in `s`). Returns caseRunExitCode.
int renderCaseRun(const ReportRequest& req, store::Store& s, int64_t runId, std::ostream& out);

/// Exit code of a case-based run's report: 1 when a case failed, 2 when the run is unfinished
/// and nothing failed so far (it has no verdict), else 0.
int caseRunExitCode(const ReportInput& in);

} // namespace dynqual::reports
