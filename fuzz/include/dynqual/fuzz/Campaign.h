#pragma once
// A fuzz campaign shard: cases run in isolated worker processes, several at a time, each bounded
// in time and memory; findings recorded in SQLite as new or known. By default each job keeps one
// persistent worker (`dynqual fuzz-worker`) that serves case after case in process; a case that
// crashes, hangs or exhausts it is run again in a one-shot worker (`dynqual fuzz-case`, which
// compiles and runs in child processes) for its finding, and a fresh persistent worker takes the
// next case. `oneShot` runs every case the one-shot way.
#include "dynqual/fuzz/CaseRunner.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace dynqual::fuzz {

/// What one shard runs.
struct CampaignOptions {
  uint64_t seed = 1;
  int jobs = 1;        ///< worker processes at a time
  int64_t cases = -1;  ///< cases of this shard; -1 = bounded by `seconds`
  double seconds = 60; ///< wall-clock bound when cases < 0
  int shardIndex = 0, shardCount = 1;
  bool resume = false;             ///< skip cases this campaign already finished in the db
  bool stopAtFirstFinding = false; ///< the selftest's mode
  /// With stopAtFirstFinding: count only findings on this variant whose symptom the case's other
  /// variants do not show (the selftest's knob variant against production as control).
  std::string stopOnlyOnVariant;
  std::filesystem::path db;        ///< empty = no store
  std::filesystem::path corpusOut; ///< empty = findings not written
  int bindings = 4;
  std::vector<std::string> variants = {"dq:production@sim"}; ///< knob already applied
  std::string knob;                                          ///< recorded only
  bool ortOracle = false;
  bool minimize = true;
  std::filesystem::path binDir;                          ///< dynqual and dynqual-exec
  std::filesystem::path workDir;                         ///< per-case scratch folders live here
  double caseTimeoutSeconds = 300;                       ///< a worker past this is killed: a "case-hang" finding
  double compileTimeoutSeconds = 60;                     ///< per compile child: past it, a "compile-hang" finding
  double runTimeoutSeconds = 20;                         ///< per run child: past it, a "run-hang" finding
  double referenceSeconds = kReferenceSecondsLimit;      ///< per binding: past it, an invalid case
  int64_t referenceMaxElements = kReferenceElementLimit; ///< per binding: past it, an invalid case
  uint64_t memoryMb = 4096;    ///< memory limit of each worker, MiB (0 = none; process::runChild says how)
  bool oneShot = false;        ///< a `dynqual fuzz-case` process per case (no persistent worker)
  int compilesPerContext = 64; ///< persistent worker: a fresh MLIRContext after this many compiles
  bool progress = false;       ///< live line on stderr
  std::string night;           ///< groups the shards of one nightly campaign in the store
  std::string revision;        ///< git commit of the build, recorded with the shard
};

/// What a shard saw.
struct CampaignSummary {
  std::string campaign; ///< key of the shard in the store
  int64_t cases = 0, valid = 0, skipped = 0;
  std::map<std::string, int> invalidReasons; ///< first words of each invalid reason
  std::vector<int> sizes;                    ///< node count of every valid case
  std::map<std::string, int> opCounts;
  std::map<std::string, uint64_t> counters; ///< compiler paths seen on the device
  /// Valid cases that exercised each feature ("OP|feature", Coverage.h; coverageTable renders it).
  std::map<std::string, int64_t> features;
  std::vector<FindingReport> findings;
  std::vector<std::string> states;    ///< "new"/"known" per finding
  std::vector<double> findingSeconds; ///< seconds into the campaign of each finding (its case done)
  /// Seconds its case's worker spent minimizing (every finding of that case), included above.
  std::vector<double> findingMinimizeSeconds;
  std::set<std::string> signatures;
  std::map<std::string, std::string> buckets; ///< bucket hash -> key, of this run's findings
  int64_t newFindings = 0;
  double wallSeconds = 0;
  double generateMs = 0, checkMs = 0, referenceMs = 0, compileMs = 0, runMs = 0, minimizeMs = 0;
  double bucketMs = 0;            ///< part of minimizeMs spent on bucket keys
  double coverageMs = 0;          ///< feature coverage of the valid cases, ms
  double workerMs = 0;            ///< wall time of the workers per case, summed, ms
  bool persistentWorkers = false; ///< !options.oneShot
  int workerStarts = 0;           ///< persistent worker processes started (jobs + restarts)
  /// Cases the persistent worker could not answer (crash, hang, out of memory, harness error),
  /// each run again in a one-shot worker.
  int64_t workerFailures = 0;
  std::string infraError;   ///< set when the campaign stopped on an infrastructure error
  int firstOwnFinding = -1; ///< index of the finding that met stopOnlyOnVariant, else -1
};

/// The store key of a shard: seed, shard, variants, knob, K and generator version.
std::string campaignKey(const CampaignOptions& options);

/// The argv of the one-shot worker for case seed `seed` (without the binary's folder checks).
std::vector<std::string> workerArgv(const CampaignOptions& options, uint64_t seed, const std::filesystem::path& work);

/// The argv of a persistent worker (`dynqual fuzz-worker`) serving this campaign's cases; its
/// memory limit is applied by the campaign when it starts the process.
std::vector<std::string> persistentWorkerArgv(const CampaignOptions& options);

/// Runs the shard. Case index c of shard i/N has global index c*N + i and seed
/// caseSeed(options.seed, c*N + i). Throws std::runtime_error for a store that cannot be opened.
CampaignSummary runCampaign(const CampaignOptions& options);

/// The summary's time per phase, ms: {"generate", "check", "reference", "compile", "run",
/// "minimize", "bucket", "coverage", "worker"} (the campaign's JSON and its store record).
nlohmann::json phaseMillis(const CampaignSummary& s);

/// `variant` with inject=KNOB on its production pipeline ("dq:production{inject=KNOB}@sim");
/// `knob` empty returns the canonical variant. Throws std::invalid_argument for a knob on another
/// pipeline or variant kind, exec::VariantError for a variant that does not parse.
std::string variantWithKnob(const std::string& variant, const std::string& knob);

/// Whether `binDir`/dynqual compiles with inject=KNOB at all: compiles the generator's seed-1
/// case with "production{inject=KNOB}" in a child process under `workDir`. On false, `why` holds
/// the compiler's one-line error (an unknown option, before the knobs exist). A compiler that
/// crashes or hangs with the knob accepted it (the knob's effect).
bool compilerAcceptsKnob(const std::filesystem::path& binDir, const std::string& knob,
                         const std::filesystem::path& workDir, std::string& why);

/// Parses "60s", "10m", "1h", "90" (seconds). Throws std::invalid_argument naming the text.
double parseDuration(const std::string& text);

} // namespace dynqual::fuzz
