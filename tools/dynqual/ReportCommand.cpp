// `dynqual report RUN|latest [--db FILE] [--format md|json|html] [--base RUN] [-o FILE]`: opens
// the output and the store, then renders the run with the function of its kind. A kind without
// one is refused (exit 2), so a report never says "pass" about a run it cannot read.
#include "Commands.h"
#include "ReportAbRun.h"

#include "dynqual/diff/AbStore.h"
#include "dynqual/reports/CampaignReport.h"
#include "dynqual/reports/Report.h"
#include "dynqual/store/Store.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <fstream>
#include <iostream>

namespace dynqual::cli {

namespace {

/// Report of a qualify, run or generate run: the case tables (reports::renderCaseRun); exit 1
/// when a case failed, 2 when the run is unfinished and nothing failed so far, else 0.
int reportCaseRun(const reports::ReportRequest& req, store::Store& db, int64_t runId, std::ostream& out) {
  return reports::renderCaseRun(req, db, runId, out);
}

/// Renders run `runId` with the function of its kind and returns the exit code. Throws
/// std::runtime_error naming the kind when this dynqual has no report for it.
int reportRun(const reports::ReportRequest& req, store::Store& db, int64_t runId, std::ostream& out) {
  SQLite::Statement q(db.db(), "SELECT kind FROM runs WHERE id = ?");
  q.bind(1, static_cast<int64_t>(runId));
  if (!q.executeStep())
    throw std::runtime_error(db.path().string() + ": no run " + std::to_string(runId));
  std::string kind = q.getColumn(0).getString();
  if (kind == "qualify" || kind == "run" || kind == "generate")
    return reportCaseRun(req, db, runId, out);
  if (diff::isAbRunKind(kind))
    return reportAbRun(req, db, runId, out);
  throw std::runtime_error("unsupported: run " + std::to_string(runId) + " is a '" + kind +
                           "' run, which this dynqual cannot report (it reports qualify, run, generate, ab, gate, "
                           "calibrate and bisect-step runs); use the dynqual that recorded it");
}

} // namespace

void addReportCommand(CLI::App& app) {
  auto req = std::make_shared<reports::ReportRequest>();
  req->db = store::defaultDbPath().string();
  auto* cmd = app.add_subcommand(
      "report", "Render a recorded run from the results database as Markdown (PR comment), JSON, or a\n"
                "self-contained HTML page with charts (docs/commands/report.md). qualify, run and generate\n"
                "runs show their case tables; ab, gate and calibrate runs their verdict, timing, accuracy,\n"
                "counters, sizes, environment and policy, as `dynqual ab` printed them.\n"
                "Exit: the run's verdict. qualify/run/generate: 0 no failing case, 1 a case failed.\n"
                "ab/gate/calibrate: 0 pass, 1 regression or accuracy failure, 3 inconclusive,\n"
                "4 infrastructure error. 2: usage or input error, an unfinished run without a verdict,\n"
                "or a run this dynqual cannot read (unknown kind, written by a newer dynqual).");
  cmd->add_option("run", req->run, "run: latest, an id or a key prefix")->capture_default_str();
  cmd->add_option("--db", req->db, "database file (default: $DYNQUAL_DB, else ./dynqual.db)")->default_str(req->db);
  cmd->add_option("--format", req->format, "output format")
      ->check(CLI::IsMember({"md", "json", "html"}))
      ->capture_default_str();
  cmd->add_option("--base", req->base, "baseline run for base/head/change columns (qualify, run, generate)");
  cmd->add_option("-o,--output", req->output, "output file, - for stdout")->capture_default_str();
  cmd->add_option("--chartjs", req->chartJs, "Chart.js file to inline (default: Debian's libjs-chart.js)");
  cmd->add_option("--history", req->historyLimit, "runs shown in the HTML history charts")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  // Fuzz campaigns (docs/commands/report.md#campaigns): `--campaign NIGHT`, or a store that
  // holds campaigns but no finished run.
  auto night = std::make_shared<std::string>();
  cmd->add_option("--campaign", *night, "render a fuzz campaign night instead of a run: latest or a night label");
  cmd->callback([req, night, cmd] {
    try {
      bool runGiven = cmd->get_option("run")->count() > 0;
      if (!night->empty() || (!runGiven && reports::storeHasOnlyCampaigns(req->db))) {
        reports::CampaignReportRequest c{req->db, *night, req->format, req->output, req->chartJs};
        reports::runCampaignReport(c, std::cout);
        setExitCode(0);
        return;
      }
      // The output is opened first, so a bad path fails before any reading.
      std::ofstream file;
      if (req->output != "-") {
        file.open(req->output, std::ios::binary | std::ios::trunc);
        if (!file)
          throw std::runtime_error(req->output +
                                   ": cannot write the report; check that the folder exists and is writable");
      }
      std::ostream& out = req->output == "-" ? std::cout : file;
      store::OpenOptions ro;
      ro.mode = store::OpenOptions::Mode::ReadOnly;
      store::Store db(req->db, ro);
      int code = reportRun(*req, db, db.resolveRun(req->run), out);
      out.flush();
      if (!out)
        throw std::runtime_error((req->output == "-" ? std::string("stdout") : req->output) +
                                 ": writing the report failed (disk full?)");
      setExitCode(code);
    } catch (const std::exception& e) {
      std::cerr << "dynqual report: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
