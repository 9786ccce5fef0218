#pragma once
// Replaying one corpus case folder through the executor: shared by `dynqual corpus check` and
// `dynqual fuzz triage --check` (a bucket is fixed when its case passes on the current build).
#include "dynqual/exec/Executor.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace dynqual::cli {

/// The source tree's corpus/ folder.
std::filesystem::path defaultCorpus();

/// `dir`/meta.json as an object ({} when missing). Throws UsageError for a file that is not a
/// JSON object.
nlohmann::json readMeta(const std::filesystem::path& dir);

/// One replayed case: "pass", "detected", "fail" or "skip", with a reason.
struct Replay {
  std::string verdict, reason;
};

/// Runs `dir` on `variantText` over its data sets (or four generated bindings with reference
/// outputs when it has none), comparing bit-exact when `bitExact`; sets `detected` and `why` when
/// a compile, run or comparison failed. Throws exec::ExecError (Stage::Infra) when the variant
/// cannot run here.
Replay replay(const std::filesystem::path& dir, const std::string& variantText, bool bitExact, exec::Executor& executor,
              bool& detected, std::string& why);

} // namespace dynqual::cli
