#pragma once
// The case options `dynqual fuzz-case` (one-shot worker) and `dynqual fuzz-worker` (persistent
// worker) share, and the knob and memory helpers of the fuzz commands.
#include "dynqual/fuzz/CaseRunner.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dynqual::cli {

/// What a worker runs each case with (everything but the seed and the scratch folder).
struct FuzzCaseOpts {
  uint64_t memoryMb = 0;
  int bindings = 4;
  double compileTimeout = 60, runTimeout = 20;
  std::vector<std::string> variants;
  std::string oracle, corpusOut, knob, inject;
  bool noMinimize = false;
  double referenceTimeout = fuzz::kReferenceSecondsLimit;
  int64_t referenceMaxElements = fuzz::kReferenceElementLimit;
};

/// Adds --reference-timeout and --reference-max-elements (the CPU reference's limits per binding;
/// past either, a case is invalid) to `cmd`, stored in `seconds` and `elements`. Campaigns and
/// workers take the same two.
void addReferenceLimitOptions(CLI::App* cmd, double& seconds, int64_t& elements);

/// Adds --bindings, --variant, --inject, --oracle, --corpus-out, --knob, --memory-mb,
/// --compile-timeout, --run-timeout, --reference-timeout, --reference-max-elements and
/// --no-minimize to `cmd`, stored in `o`.
void addFuzzCaseOptions(CLI::App* cmd, FuzzCaseOpts& o);

/// The request of every case (seed and workDir left for the caller). Throws UsageError for an
/// unknown knob or a knob on a variant that is not dq:production, exec::VariantError for a
/// variant that does not parse.
fuzz::CaseRequest fuzzCaseRequest(const FuzzCaseOpts& o);

/// fuzz::variantWithKnob with its std::invalid_argument as UsageError.
std::string fuzzVariantWithKnob(const std::string& variant, const std::string& knob);

/// Throws UsageError listing the knobs when `knob` is neither empty nor a known inject knob.
void checkInjectKnob(const std::string& knob);

/// Limits this process's address space to `mb` MiB (0 = none). RLIMIT_AS does not work under
/// ASan (its shadow memory reserves terabytes), so sanitized builds run without it here; a
/// campaign applies ASan's hard_rss_limit_mb when it starts the worker (process::runChild,
/// process::ServedProcess).
void limitOwnMemory(uint64_t mb);

} // namespace dynqual::cli
