#pragma once
// What ab, gate and calibrate share: one A/B run from its flags to its exit code (validate the
// request, resolve the measurement, record into the store, report), and the arms of a device plan.
#include "AbFlags.h"
#include "AbReportOutput.h"

#include "dynqual/diff/AbTypes.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace dynqual::cli {

/// Runs one A/B comparison of `base` against `head` with the flags, prints the report in
/// --format on stdout, writes --out files, records into the store unless --no-db, and returns
/// the exit code (diff::exitCodeFor; 2 when recording failed). `kind` is "ab", "gate" or
/// "calibrate"; `extraParams` are stored with the run. Throws for usage errors before any work.
int runAbCommand(
    const std::string& kind, const AbFlags& f, diff::AbOptions options,
    const std::map<std::string, std::string>& extraParams = {},
    const std::function<void(int64_t runId, const diff::AbResult&, const std::string& machine)>& afterRecord = {});

/// The arms of a device import: the plan's variants (`dir`/ab.json). `a` and `b` are the variants
/// given on the command line ("" when absent); a given one that differs from the plan's is a
/// UsageError naming both.
void armsFromDevicePlan(const std::string& dir, const std::string& a, const std::string& b, diff::AbOptions& o,
                        const char* flagA = "--a", const char* flagB = "--b");

} // namespace dynqual::cli
