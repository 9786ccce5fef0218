#pragma once
// Building blocks of the self-contained HTML pages (run report and gate page).
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace dynqual::reports::detail {

/// One table cell, escaped; numeric cells are right-aligned.
std::string cell(const std::string& text, bool num);
/// A table with header `cols`; every column but the first is numeric.
void table(std::ostringstream& os, const std::vector<std::string>& cols,
           const std::vector<std::vector<std::string>>& rows);
/// JSON safe inside <script>: no "<", ">" or "&" outside escapes, so "</script>" cannot occur.
std::string scriptSafe(const nlohmann::json& j);
/// Replaces every @@NAME@@ of `tpl` that `values` names; others stay as they are.
std::string fill(const std::string& tpl, const std::map<std::string, std::string>& values);
/// The file at `chartJsPath` made safe to inline in a <script> element. Throws
/// std::runtime_error naming the path (and the package that ships it) when it cannot be read.
std::string inlineScript(const std::string& chartJsPath);

} // namespace dynqual::reports::detail
