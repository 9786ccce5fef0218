#include "dynqual/run/RunRecords.h"

#include "dynqual/store/Fingerprint.h"

#include <algorithm>
#include <cmath>

namespace fs = std::filesystem;

namespace dynqual::run {

namespace {

std::string datasetHash(const fs::path& dir) {
  std::vector<fs::path> inputs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("input_", 0) == 0)
      inputs.push_back(e.path());
  std::sort(inputs.begin(), inputs.end());
  std::string all;
  for (const auto& p : inputs)
    all += p.filename().string() + " " + store::sha256File(p) + "\n";
  return store::sha256Hex(all);
}

void addComparison(store::CaseRecord& c, const compare::Comparison& cmp, const std::string& name) {
  store::AccuracyRow combined;
  combined.comparison = name;
  combined.verdict = compare::verdictName(cmp.verdict);
  combined.reason = cmp.reason;
  combined.l2 = cmp.combinedL2;
  combined.relL2 = cmp.combinedRelL2;
  combined.cosine = std::nan(""); // no combined cosine is defined
  std::vector<store::AccuracyRow> rows;
  for (const auto& o : cmp.outputs) {
    store::AccuracyRow a;
    a.comparison = name;
    a.output = o.name;
    a.verdict = compare::verdictName(o.verdict);
    a.reason = o.reason;
    a.dtype = dtypeName(o.dtype);
    a.shape = o.shape;
    a.elements = o.elements;
    a.nanInfSkipped = o.nonFiniteSkipped;
    a.mismatches = o.mismatches;
    a.l2 = o.l2;
    a.relL2 = o.relL2;
    a.maxAbs = o.maxAbs;
    a.cosine = o.cosine;
    combined.elements += a.elements;
    combined.nanInfSkipped += a.nanInfSkipped;
    combined.mismatches += a.mismatches;
    combined.maxAbs = rows.empty() ? a.maxAbs : std::max(combined.maxAbs, a.maxAbs);
    rows.push_back(a);
  }
  c.accuracy.push_back(combined);
  c.accuracy.insert(c.accuracy.end(), rows.begin(), rows.end());
}

} // namespace

store::ModelRef modelRef(const std::string& name, const fs::path& dir) {
  std::error_code ec;
  return {name,
          fs::is_regular_file(dir / "model.onnx", ec) ? store::sha256File(dir / "model.onnx") : store::sha256Hex(name)};
}

std::vector<store::CaseRecord> caseRecords(const ModelResult& r, uint64_t seed) {
  store::ModelRef ref = modelRef(r.name, r.dir);
  std::vector<store::CaseRecord> out;
  store::CaseRecord whole;
  whole.model = ref;
  whole.status = modelStatusName(r.status);
  whole.error = r.detail;
  if (r.skipReason)
    whole.error = scope::skipReasonName(*r.skipReason) + (whole.error.empty() ? "" : ": " + whole.error);
  whole.samples.push_back({"compile_ms", "ms", {r.compileMs}});
  if (r.bitExact)
    whole.params["compare_mode"] = "bit-exact";
  out.push_back(whole);

  for (const auto& cr : r.cases) {
    store::CaseRecord c;
    c.model = ref;
    c.dataset.name = cr.name;
    c.dataset.kind = cr.kind;
    c.dataset.binding = cr.binding;
    std::error_code ec;
    c.dataset.hash = cr.kind == "stored" && fs::is_directory(r.dir / cr.name, ec)
                         ? datasetHash(r.dir / cr.name)
                         : store::sha256Hex(ref.hash + "\n" + cr.binding + "\n" + std::to_string(seed));
    c.status = cr.skipped ? "skipped" : cr.passed ? "passed" : "failed";
    c.error = cr.error;
    if (cr.vsExpected)
      addComparison(c, *cr.vsExpected, "vs_expected");
    if (cr.vsReference)
      addComparison(c, *cr.vsReference, "vs_reference");
    if (cr.referenceVsStored)
      addComparison(c, *cr.referenceVsStored, "reference_vs_stored");
    c.samples.push_back({"execute_ms", "ms", {cr.executeMs}});
    for (const auto& [k, v] : cr.counters)
      c.counters[k] = static_cast<int64_t>(v);
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace dynqual::run
