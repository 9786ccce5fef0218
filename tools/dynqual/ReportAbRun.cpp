// `dynqual report RUN` of an ab, gate or calibrate run: the stored result through the gate
// renderers, with the run's own exit code.
#include "ReportAbRun.h"

#include "AbStoredRun.h"

#include "dynqual/reports/GateReport.h"

#include <fmt/format.h>

namespace dynqual::cli {

namespace {

/// The page of an A/B run that never recorded its result: one headline, no tables.
void writeUnfinished(const reports::ReportRequest& req, const diff::StoredAbRun& s, std::ostream& out) {
  std::string line = fmt::format("UNFINISHED: run {} ({}) never recorded a result: its process stopped before the "
                                 "end, or is still running; there is no verdict",
                                 s.runId, s.kind);
  if (req.format == "json") {
    out << nlohmann::json{{"format", "dynqual-ab"}, {"version", 1},    {"command", s.kind}, {"run_id", s.runId},
                          {"status", "unfinished"}, {"verdict", line}, {"exit_code", 2}}
               .dump(2)
        << "\n";
  } else if (req.format == "html") {
    std::string text = reports::escapeHtml(line);
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << text
        << "</title></head>\n<body><h1>dynqual " << reports::escapeHtml(s.kind) << "</h1><p class=\"warning\"><b>"
        << text << "</b></p></body></html>\n";
  } else {
    out << reports::kGateStickyMarker << "\n**dynqual " << reports::escapeMarkdown(s.kind) << ": "
        << reports::escapeMarkdown(line) << "**\n";
  }
}

} // namespace

int reportAbRun(const reports::ReportRequest& req, store::Store& db, int64_t runId, std::ostream& out) {
  if (!req.base.empty())
    throw std::runtime_error("--base compares case-based runs; an ab, gate or calibrate run holds its own base arm");
  RebuiltAbRun run = rebuildAbRun(db, runId, StoredComparisons::AsRecorded);
  const diff::StoredAbRun& s = run.stored;
  bool finished = db.loadRun(runId).status == store::kRunFinished;
  if (!s.outcome) {
    if (!finished) {
      writeUnfinished(req, s, out);
      return 2;
    }
    if (s.checks.empty() && s.samples.empty() && s.comparisons.empty())
      throw std::runtime_error(fmt::format("run {} ({}) holds no A/B records: `dynqual db import` and `db merge` "
                                           "carry only a run's header and parameters; report it from the store it "
                                           "was recorded in",
                                           runId, s.kind));
    throw std::runtime_error(fmt::format("run {} ({}) was recorded before dynqual stored the outcome of A/B runs "
                                         "(schema version 6): its infrastructure errors are unknown, so its verdict "
                                         "cannot be shown; `dynqual gate --reanalyze {}` recomputes its comparisons",
                                         runId, s.kind, runId));
  }
  int code = diff::exitCodeFor(run.result);
  if (s.outcome->exitCode != code)
    throw std::runtime_error(fmt::format("run {} ended with exit code {}, but its stored records give {}: written by "
                                         "a different dynqual; use the dynqual that recorded it",
                                         runId, s.outcome->exitCode, code));
  if (!finished)
    run.result.warnings.push_back("the run is marked unfinished in the store (its end could not be recorded); the "
                                  "result above is complete");
  if (!run.differences.empty())
    run.result.warnings.push_back(fmt::format("this dynqual recomputes {} comparison(s) differently from the stored "
                                              "ones; `dynqual gate --reanalyze {}` shows them",
                                              run.differences.size(), runId));
  if (req.format == "md")
    out << reports::renderGateMarkdown(run.result, run.context);
  else if (req.format == "json")
    out << reports::renderGateJson(run.result, run.context).dump(2) << "\n";
  else if (req.format == "html")
    out << reports::renderGateHtml(run.result, run.context,
                                   req.chartJs.empty() ? reports::defaultChartJsPath() : req.chartJs);
  else
    throw std::runtime_error("unsupported: report format '" + req.format + "'; use md, json or html");
  return code;
}

} // namespace dynqual::cli
