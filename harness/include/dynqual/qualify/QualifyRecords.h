#pragma once
// Store records of one qualified model: the typed path from qualify::ModelQualification to
// store::CaseRecord. The model's own process builds them; the parent records them.
#include "dynqual/qualify/QualifyModel.h"
#include "dynqual/store/Records.h"

#include <vector>

namespace dynqual::qualify {

/// Store cases of one model: run::caseRecords of `q.result` (seed config.run.seed), with the
/// whole-model case extended by
///  - params pass_ms.<pass> (compile time of each pass, ms, 3 decimals) and, when known, a
///    "peak_host_bytes" sample (bytes);
///  - when timed: params warmup, reps (from `config`) and timed_case; samples "qps" (1/s,
///    stats::summarizeLatencies, only when finite), "session_s" (s), "first_infer_ms" (ms),
///    "latency_ms" (ms, one value per repetition) and "cpu_percent" (%); the device counters of
///    the timed run;
///  - when not timed: param perf_error with the reason, if there is one.
/// Throws what run::caseRecords throws, and std::invalid_argument from summarizeLatencies for a
/// timed result with a negative or non-finite latency.
std::vector<store::CaseRecord> caseRecords(const ModelQualification& q, const QualifyConfig& config);

} // namespace dynqual::qualify
