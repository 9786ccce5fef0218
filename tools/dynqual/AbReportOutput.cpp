// Writes an A/B result in every report format: stdout in --format, and the files of --out.
#include "AbReportOutput.h"

#include "dynqual/reports/Report.h"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

void emitAbReport(const AbFlags& f, const diff::AbResult& r, const reports::GateContext& ctx) {
  std::string md = reports::renderGateMarkdown(r, ctx);
  std::string js = reports::renderGateJson(r, ctx).dump(2) + "\n";
  std::string ju = reports::renderGateJunit(r, ctx);
  std::string html;
  if (f.format == "html" || !f.outDir.empty()) {
    try {
      html = reports::renderGateHtml(r, ctx, reports::defaultChartJsPath());
    } catch (const std::exception& e) {
      std::cerr << "dynqual: no HTML page: " << e.what() << "\n";
    }
  }
  std::cout << (f.format == "json" ? js : f.format == "junit" ? ju : f.format == "html" ? html : md);
  if (!f.outDir.empty()) {
    for (const auto& [name, text] :
         {std::pair{"report.md", &md}, {"report.json", &js}, {"junit.xml", &ju}, {"report.html", &html}}) {
      if (text->empty())
        continue;
      std::ofstream out(fs::path(f.outDir) / name);
      out << *text;
      if (!out)
        std::cerr << "dynqual: cannot write " << (fs::path(f.outDir) / name).string() << "\n";
    }
  }
}

} // namespace dynqual::cli
