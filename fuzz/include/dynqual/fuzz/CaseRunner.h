#pragma once
// One fuzz case end to end, as the campaign's worker process runs it: generate from the seed,
// check validity, run the oracle, minimize each finding, write it to the corpus output.
#include "dynqual/fuzz/Generator.h"
#include "dynqual/fuzz/Oracle.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace dynqual::fuzz {

/// What to run for one case.
struct CaseRequest {
  uint64_t seed = 0;
  int bindings = 4; ///< K
  GeneratorOptions generator;
  OracleConfig oracle;
  std::filesystem::path workDir;   ///< scratch (created)
  std::filesystem::path corpusOut; ///< findings are written under here; empty = not written
  std::string knob;                ///< inject knob of the variants, recorded in meta.json
  bool minimize = true;
  int minimizeTries = 200; ///< predicate calls per finding
  int shrinkTries = 20;    ///< predicate calls per finding for dims and the binding
  /// The reference's limits per binding; past one, the case is invalid (docs/fuzz/oracles.md).
  reference::EvaluateLimits referenceLimits = defaultReferenceLimits();
  /// > 0: a reference stuck inside one node (which the limits above cannot interrupt) ends the
  /// process with kReferenceTimeoutExit after this many seconds, which the campaign counts as an
  /// invalid case. Only for processes that exist to run cases (fuzz-case, fuzz-worker).
  double referenceWatchdogSeconds = 0;
};

/// A minimized finding.
struct FindingReport {
  Finding finding;              ///< as first seen (before minimization)
  std::string signature;        ///< "symptom|op,op,...|pass" of the minimized case
  std::string signatureHash;    ///< 16 hex digits of FNV-1a 64 over the signature
  std::vector<std::string> ops; ///< op kinds of the minimized case, sorted, unique
  std::string pass;             ///< responsible pass, or "unattributed"
  int nodesBefore = 0, nodesAfter = 0;
  /// Graph-input elements on the failing binding before and after the dim/binding shrink.
  int64_t elementsBefore = 0, elementsAfter = 0;
  std::string binding;    ///< the shrunk binding ("N0=1 N1=2"), or "" when none was found
  std::string caseDir;    ///< the corpus-out folder, or ""
  std::string reproducer; ///< one shell line
  /// The bucket (docs/fuzz/buckets.md): its key "symptom|pass|origin|message" and its hash.
  std::string bucket, bucketHash;
  std::string origin; ///< op kind of the originating node of the minimized case, or "-"
  /// The finding's detail on the minimized case (its bucket's message), followed by the origin
  /// trace's note in brackets for a traceable symptom.
  std::string minimizedDetail;
  /// OriginTrace::note() of the minimized case ("origin: Reshape_2 (Reshape) gives wrong-shape
  /// first ...", or why the key was not traced); "" for a symptom that is not traced.
  std::string originTrace;
  std::string graphText; ///< the minimized graph as text (graphText), for reports
};

/// The whole outcome of one case.
struct CaseReport {
  uint64_t seed = 0;
  bool valid = false;
  std::string invalidReason;
  int nodes = 0;
  std::map<std::string, int> opCounts;
  std::map<std::string, uint64_t> counters;
  /// Features a valid case exercised ("OP|feature", caseFeatures in Coverage.h).
  std::set<std::string> features;
  std::vector<FindingReport> findings;
  double coverageMs = 0; ///< caseFeatures (one extra reference evaluation per binding), ms
  double generateMs = 0, checkMs = 0, referenceMs = 0, compileMs = 0, runMs = 0, minimizeMs = 0;
  /// Part of minimizeMs spent on buckets: the minimized case's run that gives its message and
  /// origin, and the key itself (docs/fuzz/buckets.md#cost).
  double bucketMs = 0;
};

/// Runs the case. Throws exec::ExecError (Stage::Infra) when a variant cannot run here; every
/// other problem of the case is in the report.
CaseReport runCase(const CaseRequest& request);

/// FNV-1a 64 (Fowler, Noll, Vo) of `text` as 16 lowercase hex digits: stable on every platform.
std::string fnv1aHex(const std::string& text);

/// The optional passes; attribution removes one at a time and blames the first whose removal
/// makes the finding go away. The memref passes come in their reference order; elementwise
/// fusion comes last, so a finding that removing a memref pass explains stays theirs.
inline constexpr const char* kOptionalPasses[] = {"dq-materialize-host-scalars", "dq-optimize-memrefs",
                                                  "dq-promote-strided-operands", "dq-pool-allocs",
                                                  "dq-fuse-elementwise"};

/// `spec` without the pass `pass` (with its {options}), or "" when it is not in the spec.
std::string removePass(const std::string& spec, const std::string& pass);

/// The one-line reproducer of a case: `dynqual fuzz-case --seed S --variant V ...`.
std::string reproducerLine(const CaseRequest& request);

nlohmann::json toJson(const CaseReport& report);
CaseReport caseReportFromJson(const nlohmann::json& j);

} // namespace dynqual::fuzz
