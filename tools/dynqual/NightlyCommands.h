#pragma once
// The commands of nightly campaigns, apart from Commands.h so that adding one does not rebuild
// every command: `dynqual fuzz triage` and `dynqual campaign submit`.
#include <CLI/CLI.hpp>

namespace dynqual::cli {

/// `dynqual fuzz triage` (FuzzTriageCommand.cpp), a subcommand of `fuzz`.
void addFuzzTriageCommand(CLI::App* fuzz);
/// `dynqual campaign submit` (CampaignCommand.cpp).
void addCampaignCommand(CLI::App& app);

} // namespace dynqual::cli
