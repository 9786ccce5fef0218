#include "dynqual/store/RunRecording.h"

#include "dynqual/store/Fingerprint.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace fs = std::filesystem;
using nlohmann::json;

namespace dynqual::store {

namespace {

const json& field(const json& j, const char* k, const std::string& where) {
  if (!j.is_object() || !j.contains(k))
    throw std::runtime_error(where + ": missing '" + k + "' in the dynqual-run document");
  return j.at(k);
}

double real(const json& v) {
  if (v.is_number())
    return v.get<double>();
  return std::nan("");  // nlohmann writes inf/NaN as null
}

std::string datasetHash(const fs::path& dir) {
  std::vector<fs::path> inputs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("input_", 0) == 0)
      inputs.push_back(e.path());
  std::sort(inputs.begin(), inputs.end());
  std::string all;
  for (const auto& p : inputs)
    all += p.filename().string() + " " + sha256File(p) + "\n";
  return sha256Hex(all);
}

void addComparison(CaseRecord& c, const json& cmp, const std::string& name, const std::string& where) {
  AccuracyRow combined;
  combined.comparison = name;
  combined.verdict = field(cmp, "verdict", where).get<std::string>();
  combined.reason = cmp.value("reason", "");
  combined.l2 = real(field(cmp, "combined_l2", where));
  combined.relL2 = real(field(cmp, "combined_rel_l2", where));
  combined.cosine = std::nan("");
  std::vector<AccuracyRow> rows;
  for (const auto& o : field(cmp, "outputs", where)) {
    AccuracyRow a;
    a.comparison = name;
    a.output = field(o, "name", where).get<std::string>();
    a.verdict = field(o, "verdict", where).get<std::string>();
    a.reason = o.value("reason", "");
    a.dtype = o.value("dtype", "");
    a.shape = o.value("shape", std::vector<int64_t>{});
    a.elements = o.value("elements", int64_t{0});
    a.nanInfSkipped = o.value("nan_inf_skipped", int64_t{0});
    a.mismatches = o.value("mismatches", int64_t{0});
    a.l2 = real(field(o, "l2", where));
    a.relL2 = real(field(o, "rel_l2", where));
    a.maxAbs = real(field(o, "max_abs", where));
    a.cosine = real(field(o, "cosine", where));
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

std::string currentCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0')
    raw.pop_back();
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  return raw;
}

RunRecord newRunHeader(const std::string& kind, const std::string& device, const std::string& pipelineSpec,
                       const std::vector<fs::path>& artifacts, std::map<std::string, std::string> params) {
  RunRecord r;
  r.key = newRunKey();
  r.kind = kind;
  r.startedAt = utcNow();
  r.commandLine = currentCommandLine();
  r.device = device;
  r.machine = probeMachine();
  r.build = probeBuild(DYNQUAL_SOURCE_DIR, DYNQUAL_VERSION_STRING, artifacts);
  r.pipeline = {sha256Hex(pipelineSpec), pipelineSpec};
  r.params = std::move(params);
  return r;
}

std::vector<CaseRecord> casesFromRunModel(const json& model, uint64_t seed) {
  std::string name = field(model, "name", "model").get<std::string>();
  std::string where = "model '" + name + "'";
  fs::path dir = model.value("path", "");
  std::error_code ec;
  ModelRef ref{name, fs::is_regular_file(dir / "model.onnx", ec) ? sha256File(dir / "model.onnx") : sha256Hex(name)};

  std::vector<CaseRecord> out;
  CaseRecord whole;
  whole.model = ref;
  whole.status = field(model, "status", where).get<std::string>();
  whole.error = model.value("detail", "");
  if (model.contains("skip_reason"))
    whole.error = model["skip_reason"].get<std::string>() + (whole.error.empty() ? "" : ": " + whole.error);
  if (model.contains("compile_ms"))
    whole.samples.push_back({"compile_ms", "ms", {real(model["compile_ms"])}});
  if (model.value("bit_exact", false))
    whole.params["compare_mode"] = "bit-exact";
  out.push_back(whole);

  for (const auto& cj : field(model, "cases", where)) {
    std::string cname = field(cj, "name", where).get<std::string>();
    std::string cwhere = where + " case '" + cname + "'";
    CaseRecord c;
    c.model = ref;
    c.dataset.name = cname;
    c.dataset.kind = cj.value("kind", "");
    c.dataset.binding = cj.value("binding", "");
    c.dataset.hash = c.dataset.kind == "stored" && fs::is_directory(dir / cname, ec)
                         ? datasetHash(dir / cname)
                         : sha256Hex(ref.hash + "\n" + c.dataset.binding + "\n" + std::to_string(seed));
    c.status = cj.value("skipped", false) ? "skipped" : cj.value("passed", false) ? "passed" : "failed";
    c.error = cj.value("error", "");
    for (const char* cmp : {"vs_expected", "vs_reference", "reference_vs_stored"})
      if (cj.contains(cmp))
        addComparison(c, cj[cmp], cmp, cwhere);
    if (cj.contains("execute_ms"))
      c.samples.push_back({"execute_ms", "ms", {real(cj["execute_ms"])}});
    if (cj.contains("counters"))
      for (const auto& [k, v] : cj["counters"].items())
        c.counters[k] = v.get<int64_t>();
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace dynqual::store
