#include "dynqual/reports/Report.h"

#include "Tables.h"

#include "dynqual/store/Store.h"

#include <fstream>
#include <iostream>
#include <stdexcept>

namespace dynqual::reports {

int caseRunExitCode(const ReportInput& in) {
  detail::Tables t = detail::buildTables(in);
  if (t.failures > 0)
    return 1;
  return t.unfinished ? 2 : 0;
}

int renderCaseRun(const ReportRequest& req, store::Store& s, int64_t runId, std::ostream& out) {
  if (req.format != "md" && req.format != "json" && req.format != "html")
    throw std::runtime_error("unsupported: report format '" + req.format + "'; use md, json or html");
  ReportInput in;
  in.head = s.loadRun(runId);
  if (!req.base.empty())
    in.base = s.loadRun(s.resolveRun(req.base));
  in.dynqualVersion = DYNQUAL_VERSION_STRING;
  if (req.format == "md") {
    out << renderMarkdown(in);
  } else if (req.format == "json") {
    out << renderJson(in).dump(2) << "\n";
  } else {
    in.history = s.history(in.head, req.historyLimit);
    out << renderHtml(in, req.chartJs.empty() ? defaultChartJsPath() : req.chartJs);
  }
  return caseRunExitCode(in);
}

int runReport(const ReportRequest& req, std::ostream& stdoutStream) {
  if (req.format != "md" && req.format != "json" && req.format != "html")
    throw std::runtime_error("unsupported: report format '" + req.format + "'; use md, json or html");
  std::ofstream file;
  if (req.output != "-") {
    file.open(req.output, std::ios::binary | std::ios::trunc);
    if (!file)
      throw std::runtime_error(req.output + ": cannot write the report; check that the folder exists and is writable");
  }
  std::ostream& out = req.output == "-" ? stdoutStream : file;

  store::OpenOptions ro;
  ro.mode = store::OpenOptions::Mode::ReadOnly;
  store::Store s(req.db, ro);
  int code = renderCaseRun(req, s, s.resolveRun(req.run), out);
  out.flush();
  if (!out)
    throw std::runtime_error((req.output == "-" ? std::string("stdout") : req.output) +
                             ": writing the report failed (disk full?)");
  return code;
}

} // namespace dynqual::reports
