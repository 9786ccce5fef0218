#pragma once
// In-memory form of one recorded run and its versioned JSON exchange format ("dynqual-store",
// version 1; docs/store.md). `db export` writes it, `db import` and `db merge` read it, and the
// report renderers consume RunRecord, so every report comes from the store, never from ad-hoc text.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dynqual::store {

/// Version of the JSON exchange format written by toJson and accepted by runFromJson.
inline constexpr int kExchangeFormatVersion = 1;

/// The machine a run executed on. `fingerprint` is its content key: sha256 (hex) of the other
/// fields (machineFingerprint), so two shards from the same machine agree.
struct Machine {
  std::string fingerprint;
  std::string cpuModel;    ///< /proc/cpuinfo "model name"
  int64_t cores = 0;       ///< logical cores
  int64_t memoryBytes = 0; ///< MemTotal, bytes
  std::string os;          ///< "Linux 6.1.0 (Debian GNU/Linux 12 (bookworm))"
  std::string gpuName;     ///< empty when no GPU was found
  std::string gpuDriver;   ///< empty when no GPU was found
};

/// One file of a build (a binary, a compiled model), identified by content.
struct Artifact {
  std::string path;   ///< as given; reports show the file name
  std::string sha256; ///< hex
  int64_t sizeBytes = 0;
};

/// The software that produced a run. `key` is its content key (buildKey).
struct Build {
  std::string key;
  std::string revision;        ///< git commit, or "unknown"
  bool dirty = false;          ///< the work tree had uncommitted changes
  std::string compilerVersion; ///< C++ compiler that built dynqual
  std::string dynqualVersion;
  std::vector<Artifact> artifacts;
};

/// A compiler pipeline; `hash` = sha256 (hex) of `spec`.
struct Pipeline {
  std::string hash;
  std::string spec;
};

/// A model by content: `hash` = sha256 (hex) of model.onnx (external data not included).
struct ModelRef {
  std::string name;
  std::string hash;
};

/// A data set or shape binding. An empty `name` means "the model as a whole" (compile time,
/// session time, QPS). `hash` is the content key of the inputs (sha256 of the input files, or
/// of model hash + binding text + seed for generated bindings).
struct DatasetRef {
  std::string name;
  std::string kind;    ///< "stored", "binding" or "" for the whole model
  std::string binding; ///< "b=1 n=4" for generated bindings
  std::string hash;
};

/// Accuracy of one output (or of all outputs combined, `output` == "") under one comparison.
struct AccuracyRow {
  std::string comparison; ///< "vs_expected", "vs_reference" or "reference_vs_stored"
  std::string output;     ///< output name; "" = all outputs combined
  std::string verdict;    ///< "pass" or "fail"
  std::string reason;
  std::string dtype;
  std::vector<int64_t> shape;
  int64_t elements = 0;
  int64_t nanInfSkipped = 0;
  int64_t mismatches = 0;
  double l2 = 0, relL2 = 0, maxAbs = 0, cosine = 1;
};

/// Every sample of one metric; the repetition index of values[i] is i.
struct SampleSeries {
  std::string metric; ///< e.g. "latency_ms" (docs/store.md lists the names)
  std::string unit;   ///< "ms", "s", "1/s", "bytes", "%", "tokens/s"
  std::vector<double> values;
};

/// One (run, model, data set) unit of work.
struct CaseRecord {
  ModelRef model;
  DatasetRef dataset;
  std::string status; ///< "passed", "failed", "skipped"
  std::string error;
  std::map<std::string, std::string> params; ///< the case's own parameters (warmup, reps, ...)
  std::vector<AccuracyRow> accuracy;
  std::vector<SampleSeries> samples;
  std::map<std::string, int64_t> counters; ///< device counters (exact integers)
};

/// Status of a run row. A run is "unfinished" from its start until finishRun; a process that
/// dies leaves it so.
inline constexpr const char* kRunUnfinished = "unfinished";
inline constexpr const char* kRunFinished = "finished";

/// One run of a dynqual command with everything recorded for it.
struct RunRecord {
  int64_t id = 0;   ///< row id in the database it was read from (not exported)
  std::string key;  ///< content key: unique per run, kept across export/import/merge
  std::string kind; ///< "run", "qualify", ...
  std::string status = kRunUnfinished;
  std::string startedAt; ///< UTC, ISO 8601 ("2026-01-02T03:04:05Z")
  std::string endedAt;   ///< "" while unfinished
  std::string commandLine;
  std::string device;
  Machine machine;
  std::optional<Build> build;     ///< the build under test ("head")
  std::optional<Build> baseBuild; ///< the baseline build, for A/B runs
  Pipeline pipeline;
  std::map<std::string, std::string> params; ///< run parameters ("rel_l2_gate", "seed", ...)
  std::vector<CaseRecord> cases;
};

/// Serializes runs as {"format": "dynqual-store", "version": 1, "runs": [...]}.
nlohmann::json toJson(const std::vector<RunRecord>& runs);

/// Parses a document written by toJson. Throws std::runtime_error naming the JSON path of the
/// first problem ("runs[2].cases[0].samples[1]: 'values' must be an array of numbers") or an
/// unsupported format/version ("unsupported: dynqual-store version 7; this build reads 1").
std::vector<RunRecord> runsFromJson(const nlohmann::json& doc);

/// One case in the exchange format (an element of a run's "cases"); non-finite numbers become
/// the strings "inf", "-inf", "nan", so caseFromJson gives back the same values.
nlohmann::json caseToJson(const CaseRecord& c);

/// Parses one case written by caseToJson. Throws std::runtime_error naming `path` and the first
/// problem ("records[1].samples[0]: missing 'unit'").
CaseRecord caseFromJson(const nlohmann::json& j, const std::string& path);

/// Content key of a machine: sha256 hex of its descriptive fields joined by '\n'.
std::string machineFingerprint(const Machine& m);
/// Content key of a build: sha256 hex over revision, dirty, compiler, version, and artifacts.
std::string buildKey(const Build& b);

} // namespace dynqual::store
