#include "dynqual/reports/GateReport.h"
#include "dynqual/reports/Report.h"

#include <fmt/format.h>

#include <sstream>

namespace dynqual::reports {

std::string renderGateJunit(const diff::AbResult& r, const GateContext& ctx) {
  std::ostringstream cases;
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  std::string suite = "dynqual-" + ctx.command;
  for (const auto& e : r.infraErrors) {
    ++tests;
    ++errors;
    cases << fmt::format(
        "  <testcase classname=\"{}.infrastructure\" name=\"arms\"><error message=\"{}\"/></testcase>\n", suite,
        escapeHtml(e));
  }
  for (const auto& c : r.checks) {
    ++tests;
    cases << fmt::format("  <testcase classname=\"{}.accuracy\" name=\"{}\">", suite, escapeHtml(c.model));
    if (!c.passed) {
      ++failures;
      cases << fmt::format("<failure message=\"{}\"/>", escapeHtml(c.detail));
    }
    cases << "</testcase>\n";
  }
  for (const auto& c : r.comparisons) {
    ++tests;
    cases << fmt::format("  <testcase classname=\"{}.{}\" name=\"{}\">", suite, c.metric, escapeHtml(c.model));
    std::string summary = fmt::format("ratio {:.4f} CI [{:.4f}, {:.4f}] p {:.3g} (level {:.3g}) after {} rounds",
                                      c.ratio, c.ciLow, c.ciHigh, c.p, c.alphaUsed, c.rounds);
    if (c.verdict == diff::Verdict::Identical) {
      cases << "<system-out>identical: both arms run byte-identical programs on byte-identical runtimes; not "
               "timed</system-out>";
    } else if (!c.deciding) { // the side metric: reported, never a failure
      cases << fmt::format("<system-out>beside the decision, not deciding: {}: {}</system-out>",
                           stats::verdictName(c.verdict), escapeHtml(summary));
    } else if (c.verdict == diff::Verdict::Regression && !r.exploratory.empty()) {
      ++skipped; // an analysis chosen after the data confirms nothing
      cases << fmt::format("<skipped message=\"exploratory regression: {}\"/>", escapeHtml(summary));
    } else if (c.verdict == diff::Verdict::Regression) {
      ++failures;
      cases << fmt::format("<failure message=\"regression: {}\"/>", escapeHtml(summary));
    } else if (c.verdict == diff::Verdict::Inconclusive) {
      ++skipped;
      cases << fmt::format("<skipped message=\"inconclusive: {}\"/>", escapeHtml(summary));
    } else {
      cases << fmt::format("<system-out>{}: {}</system-out>", stats::verdictName(c.verdict), escapeHtml(summary));
    }
    cases << "</testcase>\n";
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" "
                     "errors=\"{}\" skipped=\"{}\" time=\"{:.1f}\">\n{}</testsuite>\n",
                     suite, tests, failures, errors, skipped, r.wallSeconds, cases.str());
}

} // namespace dynqual::reports
