// `dynqual report RUN|latest [--db FILE] [--format md|json|html] [--base RUN] [-o FILE]`: thin
// argument parsing over dynqual_reports (reports/include/dynqual/reports/Report.h).
#include "Commands.h"

#include "dynqual/reports/CampaignReport.h"
#include "dynqual/reports/Report.h"
#include "dynqual/store/Store.h"

#include <iostream>

namespace dynqual::cli {

void addReportCommand(CLI::App& app) {
  auto req = std::make_shared<reports::ReportRequest>();
  req->db = store::defaultDbPath().string();
  auto* cmd = app.add_subcommand("report", "Render a recorded run from the results database as Markdown (PR\n"
                                           "comment), JSON, or a self-contained HTML page with charts.");
  cmd->add_option("run", req->run, "run: latest, an id or a key prefix")->capture_default_str();
  cmd->add_option("--db", req->db, "database file (default: $DYNQUAL_DB, else ./dynqual.db)")->default_str(req->db);
  cmd->add_option("--format", req->format, "output format")->check(CLI::IsMember({"md", "json", "html"}))
      ->capture_default_str();
  cmd->add_option("--base", req->base, "baseline run for base/head/change columns");
  cmd->add_option("-o,--output", req->output, "output file, - for stdout")->capture_default_str();
  cmd->add_option("--chartjs", req->chartJs, "Chart.js file to inline (default: Debian's libjs-chart.js)");
  cmd->add_option("--history", req->historyLimit, "runs shown in the HTML history charts")
      ->check(CLI::PositiveNumber)->capture_default_str();
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
      reports::runReport(*req, std::cout);
      setExitCode(0);
    } catch (const std::exception& e) {
      std::cerr << "dynqual report: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
