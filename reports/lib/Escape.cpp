#include "dynqual/reports/Report.h"

namespace dynqual::reports {

std::string escapeHtml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string escapeMarkdown(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '\n':
    case '\r':
      out += ' ';
      break;
    case '\\':
    case '`':
    case '*':
    case '_':
    case '[':
    case ']':
    case '|':
    case '#':
    case '!':
    case '~':
      out += '\\';
      out += c;
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace dynqual::reports
