// Layout variants of a built runtime: the same objects relinked K ways that move code and nothing
// else (docs/gate-layouts.md), for `dynqual gate --layouts K`.
#pragma once

#include "dynqual/gate/RevisionBuild.h"

#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::gate {

/// One relinked runtime: variant k (1-based; link-order seed k, text padding from k), its path and
/// the SHA-256 of its bytes (hex).
struct LayoutVariant {
  int k = 0;
  std::filesystem::path exec;
  std::string sha256;
};

/// The ninja build folder that holds `binDir` (binDir itself or the nearest parent with a
/// build.ninja). Throws GateError when there is none (prebuilt binaries without their build).
std::filesystem::path ninjaBuildOf(const std::filesystem::path& binDir);

/// Relinks `target` (a ninja target such as "dynqual-exec") of the build holding
/// `binDir` K ways into outDir/L<k>/ with scripts/layout-variants.py (python3 from PATH; the
/// environment variable DYNQUAL_LAYOUT_SCRIPT names another script that prints the same
/// "L<k> PATH SHA256" lines), k = 1..K.
/// Variants already there (from an earlier gate of the same build) are relinked again; the link
/// takes seconds. Throws GateError naming the build folder and the script's output when it
/// fails, or when k < 1.
std::vector<LayoutVariant> relinkLayouts(const std::filesystem::path& binDir, const std::string& target, int k,
                                         const std::filesystem::path& outDir);

} // namespace dynqual::gate
