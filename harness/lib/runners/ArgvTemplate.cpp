#include "ArgvTemplate.h"

#include <array>
#include <stdexcept>

namespace dynqual::runners::detail {

namespace {
constexpr std::array<const char*, 9> kPlaceholders = {"protocol",      "model",  "output_dir", "reps", "warmup",
                                                      "min_sample_ms", "inputs", "clock",      "serve"};
}

std::vector<Piece> splitTemplate(const std::string& element) {
  std::vector<Piece> pieces;
  std::string literal;
  auto flush = [&] {
    if (!literal.empty())
      pieces.push_back({false, std::move(literal)});
    literal.clear();
  };
  for (std::size_t i = 0; i < element.size(); ++i) {
    char c = element[i];
    if (c == '{' && i + 1 < element.size() && element[i + 1] == '{') {
      literal += '{';
      ++i;
    } else if (c == '}' && i + 1 < element.size() && element[i + 1] == '}') {
      literal += '}';
      ++i;
    } else if (c == '{') {
      std::size_t close = element.find('}', i + 1);
      if (close == std::string::npos)
        throw std::invalid_argument("unmatched '{' (write {{ for a literal brace)");
      std::string name = element.substr(i + 1, close - i - 1);
      if (name.empty() || name.find('{') != std::string::npos)
        throw std::invalid_argument("bad placeholder \"" + element.substr(i, close - i + 1) + "\"");
      flush();
      pieces.push_back({true, name});
      i = close;
    } else if (c == '}') {
      throw std::invalid_argument("unmatched '}' (write }} for a literal brace)");
    } else {
      literal += c;
    }
  }
  flush();
  return pieces;
}

bool isKnownPlaceholder(const std::string& name) {
  for (const char* p : kPlaceholders)
    if (name == p)
      return true;
  return false;
}

std::string knownPlaceholderList() {
  std::string out;
  for (const char* p : kPlaceholders)
    out += (out.empty() ? "{" : ", {") + std::string(p) + "}";
  return out;
}

} // namespace dynqual::runners::detail
