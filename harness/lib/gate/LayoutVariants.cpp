// Runs scripts/layout-variants.py on a revision's build folder (see LayoutVariants.h).
#include "dynqual/gate/LayoutVariants.h"

#include "dynqual/process/Process.h"

#include <cstdlib>
#include <sstream>

namespace fs = std::filesystem;

namespace dynqual::gate {

fs::path ninjaBuildOf(const fs::path& binDir) {
  for (fs::path p = fs::absolute(binDir).lexically_normal(); !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / "build.ninja"))
      return p;
    if (p == p.parent_path())
      break;
  }
  throw GateError("--layouts: " + binDir.string() +
                  " is not inside a ninja build folder (no build.ninja above it), so its runtime cannot be relinked");
}

std::vector<LayoutVariant> relinkLayouts(const fs::path& binDir, const std::string& target, int k,
                                         const fs::path& outDir) {
  if (k < 1)
    throw GateError("--layouts: K must be at least 1");
  fs::path build = ninjaBuildOf(binDir);
  process::ProcessSpec spec;
  const char* other = std::getenv("DYNQUAL_LAYOUT_SCRIPT"); // another relinker with the same output
  spec.argv = {"python3",         other && *other ? other : DYNQUAL_LAYOUT_SCRIPT,
               build.string(),    target,
               std::to_string(k), outDir.string()};
  spec.searchPath = true;
  spec.timeoutSeconds = 600;
  process::ProcessResult r = process::runProcess(spec);
  if (!r.ok())
    throw GateError("--layouts: relinking " + target + " in " + build.string() + " " + r.describe(spec.timeoutSeconds) +
                    ":\n" + r.err);
  std::vector<LayoutVariant> out;
  std::istringstream lines(r.out);
  std::string label, path, sha;
  while (lines >> label >> path >> sha)
    out.push_back({std::stoi(label.substr(1)), path, sha});
  if (static_cast<int>(out.size()) != k)
    throw GateError("--layouts: scripts/layout-variants.py printed " + std::to_string(out.size()) + " variants, not " +
                    std::to_string(k) + ":\n" + r.out);
  return out;
}

} // namespace dynqual::gate
