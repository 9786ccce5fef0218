#pragma once
// Splitting argv template elements into literal text and {placeholders} (internal).

#include <string>
#include <vector>

namespace dynqual::runners::detail {

struct Piece {
  bool placeholder = false;
  std::string text; ///< literal text (braces unescaped), or the placeholder name
};

/// Splits one argv element: "{{" and "}}" are literal braces, "{name}" a placeholder. Throws
/// std::invalid_argument on an unmatched '{' or '}' or an empty name.
std::vector<Piece> splitTemplate(const std::string& element);

bool isKnownPlaceholder(const std::string& name);

/// "{protocol}, {model}, ..." for error messages.
std::string knownPlaceholderList();

} // namespace dynqual::runners::detail
