#include "dynqual/reports/Report.h"

#include "dynqual/store/Store.h"

#include <fstream>
#include <iostream>
#include <stdexcept>

namespace dynqual::reports {

void runReport(const ReportRequest& req, std::ostream& stdoutStream) {
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
  ReportInput in;
  in.head = s.loadRun(s.resolveRun(req.run));
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
  out.flush();
  if (!out)
    throw std::runtime_error((req.output == "-" ? std::string("stdout") : req.output) +
                             ": writing the report failed (disk full?)");
}

} // namespace dynqual::reports
