#pragma once
// The persistent fuzz worker's loop (`dynqual fuzz-worker`): one process serves many cases,
// each request a JSON line on stdin, each answer a JSON line on stdout (docs/fuzz/campaigns.md).
#include "dynqual/fuzz/CaseRunner.h"

#include <iosfwd>

namespace dynqual::fuzz {

/// Exit status of a worker that ran out of memory (std::bad_alloc): the process ends, since
/// nothing half-built may be trusted; its coordinator reruns the case in a one-shot worker.
inline constexpr int kWorkerOutOfMemoryExit = 3;

/// Serves requests until `in` ends. A request is one line {"seed": S, "work_dir": "DIR"}; the
/// case is `base` with that seed and scratch folder (base.oracle.engine usually set, so that
/// compiles and runs stay in this process). Each request gets exactly one line on `out`, flushed:
/// - the case report, toJson(runCase(...)), as `dynqual fuzz-case --json` prints it;
/// - {"infra": MESSAGE} when a variant cannot run here (an exec::ExecError out of runCase);
/// - {"case_error": MESSAGE} for a malformed request or a harness error on the case (what
///   `dynqual fuzz-case` reports by exiting 3), "seed S: " first when the seed is known.
/// std::bad_alloc writes "dynqual fuzz-worker: seed S: out of memory" to stderr and ends the
/// process with _exit(kWorkerOutOfMemoryExit). Returns the number of requests served.
int64_t serveCases(std::istream& in, std::ostream& out, const CaseRequest& base);

/// The request line serveCases reads for case `seed` with scratch folder `workDir`.
std::string workerRequestLine(uint64_t seed, const std::filesystem::path& workDir);

} // namespace dynqual::fuzz
