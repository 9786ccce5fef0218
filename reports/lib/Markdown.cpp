#include "Tables.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

namespace dynqual::reports {

using namespace detail;

namespace {

std::string sci(double v) {
  return std::isnan(v) ? "-" : fmt::format("{:.3e}", v);
}

std::string withChange(const Pair& p, int precision, bool hasBase) {
  if (!hasBase)
    return fixed(p.head, precision);
  return fixed(p.base, precision) + " → " + fixed(p.head, precision) + " (" + changePercent(p) + ")";
}

std::string counterCell(const Pair& p, bool hasBase) {
  if (!p.head)
    return "-";
  std::string s = fmt::format("{}", static_cast<int64_t>(*p.head));
  if (hasBase)
    s += p.base ? fmt::format(" ({:+})", static_cast<int64_t>(*p.head - *p.base)) : " (new)";
  return s;
}

void row(std::ostringstream& os, const std::vector<std::string>& cells) {
  os << "|";
  for (const auto& c : cells)
    os << " " << c << " |";
  os << "\n";
}

void header(std::ostringstream& os, const std::vector<std::string>& cols, size_t leftAligned) {
  row(os, cols);
  os << "|";
  for (size_t i = 0; i < cols.size(); ++i)
    os << (i < leftAligned ? "---|" : "---:|");
  os << "\n";
}

} // namespace

std::string renderMarkdown(const ReportInput& in) {
  Tables t = buildTables(in);
  std::ostringstream os;
  os << "## " << escapeMarkdown(t.title) << "\n\n";
  if (!t.warning.empty())
    os << "**Warning:** " << escapeMarkdown(t.warning) << "\n\n";
  if (!t.baseNote.empty())
    os << escapeMarkdown(t.baseNote) << "\n\n";
  os << "**" << escapeMarkdown(resultLine(t)) << "**\n\n";

  os << "### L2 Accuracy Results (EP vs CPU)\n\n";
  if (t.accuracy.empty()) {
    os << "No accuracy results in this run.\n\n";
  } else {
    header(os, {"Model", "Combined L2", "Relative L2", "Cosine", "Total Elems", "Skipped NaN/Inf", "Verdict"}, 1);
    for (const auto& a : t.accuracy) {
      std::string verdict = a.verdict == "pass" ? "pass" : "**" + escapeMarkdown(a.verdict) + "**";
      if (!a.error.empty())
        verdict += ": " + escapeMarkdown(a.error);
      row(os, {escapeMarkdown(a.label), sci(a.l2), sci(a.relL2),
               std::isnan(a.cosine) ? std::string("-") : fmt::format("{:.6f}", a.cosine),
               a.measured ? std::to_string(a.elements) : "-", a.measured ? std::to_string(a.nanInf) : "-", verdict});
    }
    os << "\n" << escapeMarkdown(t.threshold) << "\n\n";
  }

  os << "### Performance Results\n\n";
  if (t.performance.empty()) {
    os << "No performance samples in this run.\n\n";
  } else {
    std::vector<std::string> cols = {"Model"};
    for (const auto& c : perfColumns())
      cols.push_back(c.header);
    header(os, cols, 1);
    for (const auto& p : t.performance) {
      std::vector<std::string> cells = {escapeMarkdown(p.label)};
      for (size_t i = 0; i < p.cells.size(); ++i)
        cells.push_back(withChange(p.cells[i], perfColumns()[i].precision, t.hasBase));
      row(os, cells);
    }
    os << "\n";
    if (t.hasBase)
      os << "Cells read base → head (change %), change = (head - base) / base × 100; each value is the median of "
            "the run's samples. Confidence intervals and verdicts come from the gate.\n\n";
  }

  os << "### Device counters\n\n";
  if (t.counters.empty()) {
    os << "No device counters in this run.\n\n";
  } else {
    std::vector<std::string> cols = {"Model"};
    for (const auto& c : counterColumns())
      cols.push_back(c.header);
    header(os, cols, 1);
    for (const auto& c : t.counters) {
      std::vector<std::string> cells = {escapeMarkdown(c.label)};
      for (const auto& p : c.cells)
        cells.push_back(counterCell(p, t.hasBase));
      row(os, cells);
    }
    os << "\n";
    if (t.hasBase)
      os << "Counters are exact: (+N) is head minus base.\n\n";
  }

  if (!t.generation.empty()) {
    os << "### Generation Results\n\n";
    std::vector<std::string> cols = {"Model"};
    for (const auto& [h, k] : genParams())
      cols.push_back(h);
    for (const auto& c : genColumns())
      cols.push_back(c.header);
    header(os, cols, 1);
    for (const auto& g : t.generation) {
      std::vector<std::string> cells = {escapeMarkdown(g.label)};
      for (const auto& p : g.params)
        cells.push_back(escapeMarkdown(p));
      for (size_t i = 0; i < g.cells.size(); ++i)
        cells.push_back(fixed(g.cells[i], genColumns()[i].precision));
      row(os, cells);
    }
    os << "\n";
  }

  os << "### Binary sizes\n\n";
  if (t.sizes.empty()) {
    os << "No build artifacts recorded.\n\n";
  } else {
    header(os, {"File", "This (MB)", "Base (MB)", "Delta (MB)"}, 1);
    for (const auto& s : t.sizes) {
      std::optional<double> delta;
      if (s.thisMB && s.baseMB)
        delta = *s.thisMB - *s.baseMB;
      row(os, {escapeMarkdown(s.file), fixed(s.thisMB, 3), fixed(s.baseMB, 3),
               delta ? fmt::format("{:+.3f}", *delta) : "-"});
    }
    os << "\n";
  }

  os << kStickyMarker << "\n---\n";
  for (const auto& [k, v] : t.footer)
    os << "**" << k << ":** " << escapeMarkdown(v) << "  \n";
  return os.str();
}

} // namespace dynqual::reports
