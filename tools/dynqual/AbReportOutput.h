#pragma once
// Writes an A/B result in every report format.
#include "AbFlags.h"

#include "dynqual/diff/AbTypes.h"
#include "dynqual/reports/GateReport.h"

namespace dynqual::cli {

/// Writes the report of `r` in --format to stdout and the three files of --out.
void emitAbReport(const AbFlags& f, const diff::AbResult& r, const reports::GateContext& ctx);

} // namespace dynqual::cli
