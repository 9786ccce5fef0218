#pragma once
// The build-command flags gate and bisect share: how a revision of the repository is built into
// the gate's cache (docs/gate-builds.md).
#include "dynqual/gate/RevisionBuild.h"

#include <CLI/CLI.hpp>

#include <string>

namespace dynqual::cli {

/// --configure-command and --build-command: "" keeps the gate's defaults (cmake / ninja).
struct BuildCommandFlags {
  std::string configure, build;
};

/// Adds --configure-command CMD and --build-command CMD to `cmd`.
void addBuildCommandFlags(CLI::App* cmd, BuildCommandFlags& f);

/// Puts the commands of `f` into `req`: each is split at spaces into an argv (no shell, no
/// quoting; wrap anything fancier in a script), `{src}` and `{build}` replaced by the builder.
/// Throws UsageError naming the flag when a given command is blank.
void applyBuildCommandFlags(const BuildCommandFlags& f, gate::BuildRequest& req);

} // namespace dynqual::cli
