// Building blocks of the self-contained HTML pages: tables, script-safe JSON, the template fill
// and Chart.js inlined.
#include "HtmlPage.h"

#include "dynqual/reports/Report.h"

#include <fstream>
#include <stdexcept>

namespace dynqual::reports::detail {

using nlohmann::json;

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(path +
                             ": cannot read Chart.js; install libjs-chart.js (scripts/setup) or pass --chartjs FILE");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

std::string cell(const std::string& text, bool num) {
  return std::string(num ? "<td class=\"num\">" : "<td>") + escapeHtml(text) + "</td>";
}

void table(std::ostringstream& os, const std::vector<std::string>& cols,
           const std::vector<std::vector<std::string>>& rows) {
  os << "<table><tr>";
  for (const auto& c : cols)
    os << "<th>" << escapeHtml(c) << "</th>";
  os << "</tr>\n";
  for (const auto& r : rows) {
    os << "<tr>";
    for (size_t i = 0; i < r.size(); ++i)
      os << cell(r[i], i > 0);
    os << "</tr>\n";
  }
  os << "</table>\n";
}

/// JSON safe inside <script>: no "<", ">" or "&" outside escapes, so "</script>" cannot occur.
std::string scriptSafe(const json& j) {
  std::string s = j.dump(), out;
  for (char c : s) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

std::string fill(const std::string& tpl, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t a = tpl.find("@@", pos);
    if (a == std::string::npos)
      break;
    size_t b = tpl.find("@@", a + 2);
    if (b == std::string::npos)
      break;
    auto it = values.find(tpl.substr(a + 2, b - a - 2));
    if (it == values.end()) {
      out += tpl.substr(pos, a + 2 - pos);
      pos = a + 2;
      continue;
    }
    out += tpl.substr(pos, a - pos) + it->second;
    pos = b + 2;
  }
  return out + tpl.substr(pos);
}

std::string inlineScript(const std::string& chartJsPath) {
  std::string js = readFile(chartJsPath);
  // An inlined script ends at the first "</script"; the library must not contain one.
  for (size_t p = js.find("</"); p != std::string::npos; p = js.find("</", p + 3))
    js.replace(p, 2, "<\\/");
  return js;
}

} // namespace dynqual::reports::detail
