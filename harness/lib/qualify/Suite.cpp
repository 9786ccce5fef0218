#include "dynqual/qualify/Suite.h"

#include "dynqual/run/ChildProcess.h"
#include "dynqual/run/RunReport.h"
#include "dynqual/store/RunRecording.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>

#include <cmath>
#include <cstdlib>
#include <map>

namespace fs = std::filesystem;
using nlohmann::json;

namespace dynqual::qualify {

namespace {

constexpr const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

bool isSourceTree(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p / "corpus", ec) && fs::is_directory(p / "harness", ec);
}

fs::path sourceTree(const fs::path& selfExe) {
#ifdef DYNQUAL_SOURCE_DIR
  if (isSourceTree(DYNQUAL_SOURCE_DIR))
    return DYNQUAL_SOURCE_DIR;
#endif
  for (fs::path p = selfExe.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
    if (isSourceTree(p))
      return p;
  return {};
}

std::string fmtNum(const json& v, const char* spec) {
  if (!v.is_number())
    return "-";
  return fmt::format(fmt::runtime(spec), v.get<double>());
}

uint64_t counter(const json& perf, const char* name) {
  if (!perf.contains("counters") || !perf["counters"].contains(name))
    return 0;
  return perf["counters"][name].get<uint64_t>();
}

/// The child's JSON carries non-finite numbers as null (JSON has no NaN/Inf); the run document has
/// no other nulls, so they are read back as NaN.
void nullToNan(json& j) {
  if (j.is_null())
    j = std::nan("");
  else if (j.is_structured())
    for (auto& v : j)
      nullToNan(v);
}

} // namespace

fs::path sharedModelsDir(const fs::path& selfExe) {
  if (const char* env = std::getenv("DYNQUAL_MODELS_DIR"); env && *env)
    return env;
  fs::path src = sourceTree(selfExe);
  return src.empty() ? fs::path() : (src / ".." / "shared" / "models").lexically_normal();
}

std::vector<fs::path> perfSuite(const fs::path& selfExe) {
  std::vector<fs::path> models;
  std::error_code ec;
  fs::path shared = sharedModelsDir(selfExe);
  if (!shared.empty() && fs::is_directory(shared, ec))
    for (const auto& e : fs::directory_iterator(shared, ec))
      if (fs::exists(e.path() / "model.onnx"))
        models.push_back(e.path());
  std::sort(models.begin(), models.end());
  fs::path src = sourceTree(selfExe);
  if (!src.empty() && fs::exists(src / "corpus" / "decoder_tiny" / "model.onnx", ec))
    models.push_back(src / "corpus" / "decoder_tiny");
  return models;
}

std::vector<fs::path> embeddedSuite(const fs::path& selfExe) {
  std::vector<fs::path> suite;
  std::error_code ec;
  fs::path src = sourceTree(selfExe);
  if (!src.empty() && fs::is_directory(src / "corpus", ec))
    suite.push_back(src / "corpus");
  if (fs::is_directory(kNodeTests, ec))
    suite.push_back(kNodeTests);
  fs::path shared = sharedModelsDir(selfExe);
  if (!shared.empty() && fs::is_directory(shared, ec))
    suite.push_back(shared);
  return suite;
}

json qualifyInChild(const std::vector<std::string>& argv, const fs::path& modelDir, double timeoutSeconds) {
  run::ChildResult child = run::runChild(argv, timeoutSeconds);
  std::string abnormal = child.describeAbnormalEnd(timeoutSeconds);
  std::string verdict;
  if (abnormal.empty()) {
    json j = json::parse(child.out, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded() && j.is_object() && j.contains("model") && j.contains("accuracy"))
      return j;
    verdict = "crash";
    abnormal = fmt::format("model process exited {} without a result: {}", child.exitCode,
                           child.err.substr(0, 400));
  } else {
    verdict = child.timedOut ? "timeout" : "crash";
    abnormal = "model process " + abnormal;
  }
  std::string name = modelDir.filename().string();
  return {{"model", {{"name", name}, {"path", modelDir.string()}, {"status", "FAIL"}, {"detail", abnormal},
                     {"bit_exact", false}, {"cases", json::array()}}},
          {"accuracy", {{"verdict", verdict}}},
          {"compile", {{"passes", json::array()}}},
          {"perf", {{"measured", false}, {"error", abnormal}}},
          {"wall_ms", child.wallMs}};
}

bool entryFailed(const json& e) { return e["model"].value("status", "FAIL") == "FAIL"; }

void renderTables(std::ostream& os, const std::vector<json>& entries) {
  // The name column fits the longest tried model, so no two rows read alike.
  size_t w = 20;
  for (const auto& e : entries)
    if (e["model"].value("status", "FAIL") != "skip")
      w = std::max(w, e["model"].value("name", "?").size());
  fmt::print(os, "L2 Accuracy Results (compiled vs CPU reference)\n");
  fmt::print(os, "{:<{}} {:>11} {:>11} {:>12} {:>8} {:>9} {}\n", "model", w, "combined L2", "relative L2",
             "total elems", "NaN/Inf", "threshold", "verdict");
  run::RunTotals totals;
  for (const auto& e : entries) {
    const json& m = e["model"];
    std::string status = m.value("status", "FAIL");
    int notAdmitted = 0;
    if (m.contains("cases"))
      for (const auto& c : m["cases"])
        notAdmitted += c.value("kind", "") == "binding" && c.value("skipped", false) ? 1 : 0;
    totals.add(status, m.value("skip_reason", "?"), m.value("missing_ops", std::vector<std::string>{}), notAdmitted);
    if (status == "skip")
      continue;
    const json& a = e["accuracy"];
    fmt::print(os, "{:<{}} {:>11} {:>11} {:>12} {:>8} {:>9} {}\n", m.value("name", "?"), w,
               fmtNum(a.value("combined_l2", json()), "{:.3g}"), fmtNum(a.value("relative_l2", json()), "{:.3g}"),
               a.contains("elements") ? std::to_string(a["elements"].get<int64_t>()) : "-",
               a.contains("nan_inf_skipped") ? std::to_string(a["nan_inf_skipped"].get<int64_t>()) : "-",
               fmtNum(a.value("threshold", json()), "{:.0e}"), a.value("verdict", "FAIL"));
  }
  fmt::print(os, "\nPerformance Results\n");
  fmt::print(os, "{:<{}} {:>10} {:>9} {:>10} {:>10} {:>6} {:>8} {:>12} {:>9} {:>8}\n", "model", w, "QPS", "session s",
             "1st ms", "median ms", "CPU %", "mem MB", "device peak", "readbacks", "launches");
  for (const auto& e : entries) {
    const json& m = e["model"];
    if (m.value("status", "FAIL") == "skip")
      continue;
    const json& p = e["perf"];
    std::string mem = e.contains("peak_host_bytes")
                          ? fmt::format("{:.1f}", e["peak_host_bytes"].get<double>() * 1e-6)
                          : std::string("-");
    if (!p.value("measured", false)) {
      std::string why = p.value("error", "");
      fmt::print(os, "{:<{}} not timed: {}\n", m.value("name", "?"), w,
                 why.empty() ? "the model failed before timing (see Failures)" : why);
      continue;
    }
    fmt::print(os, "{:<{}} {:>10} {:>9} {:>10} {:>10} {:>6} {:>8} {:>12} {:>9} {:>8}\n",
               m.value("name", "?"), w, fmtNum(p["qps"], "{:.1f}"),
               fmtNum(json(p["session_ms"].get<double>() / 1000), "{:.4f}"), fmtNum(p["first_infer_ms"], "{:.3f}"),
               fmtNum(p["median_ms"], "{:.3f}"), fmtNum(p["cpu_percent"], "{:.0f}"), mem,
               counter(p, "peak_device_bytes"), counter(p, "scalar_readbacks"), counter(p, "kernel_launches"));
  }
  bool anyFailure = false;
  for (const auto& e : entries)
    if (entryFailed(e)) {
      if (!anyFailure)
        fmt::print(os, "\nFailures\n");
      anyFailure = true;
      fmt::print(os, "  {}: {}\n", e["model"].value("name", "?"), e["model"].value("detail", ""));
    }
  fmt::print(os, "\n{} models: {} passed, {} failed, {} skipped{}\n", entries.size(), totals.passed, totals.failed,
             totals.skipped, run::skipSummary(totals));
}

std::vector<store::CaseRecord> casesFromEntry(const json& e, uint64_t seed) {
  if (!e.contains("model") || !e["model"].is_object())
    throw std::runtime_error("qualify entry: 'model' must be an object");
  json model = e["model"];
  nullToNan(model);
  std::vector<store::CaseRecord> cases = store::casesFromRunModel(model, seed);
  store::CaseRecord& whole = cases.front();
  // A timeout or crash leaves only the error text; the verdict lets a report name the failure.
  if (std::string v = e.contains("accuracy") ? e["accuracy"].value("verdict", "") : "";
      whole.status == "FAIL" && (v == "timeout" || v == "crash"))
    whole.params["verdict"] = v;
  if (e.contains("compile"))
    for (const auto& p : e["compile"].contains("passes") ? e["compile"]["passes"] : json::array())
      whole.params["pass_ms." + p.at("pass").get<std::string>()] = fmt::format("{:.3f}", p.at("ms").get<double>());
  if (e.contains("peak_host_bytes"))
    whole.samples.push_back({"peak_host_bytes", "bytes", {e["peak_host_bytes"].get<double>()}});
  const json p = e.contains("perf") ? e["perf"] : json::object();
  if (!p.value("measured", false)) {
    if (!p.value("error", "").empty())
      whole.params["perf_error"] = p["error"].get<std::string>();
    return cases;
  }
  whole.params["warmup"] = std::to_string(p.at("warmup").get<int>());
  whole.params["reps"] = std::to_string(p.at("reps").get<int>());
  whole.params["timed_case"] = p.at("timed_case").get<std::string>();
  auto one = [&](const char* metric, const char* unit, double v) { whole.samples.push_back({metric, unit, {v}}); };
  if (p.at("qps").is_number())
    one("qps", "1/s", p["qps"].get<double>());
  one("session_s", "s", p.at("session_ms").get<double>() / 1000);
  one("first_infer_ms", "ms", p.at("first_infer_ms").get<double>());
  whole.samples.push_back({"latency_ms", "ms", p.at("latency_ms").get<std::vector<double>>()});
  one("cpu_percent", "%", p.at("cpu_percent").get<double>());
  if (p.contains("counters"))
    for (const auto& [k, v] : p["counters"].items())
      whole.counters[k] = v.get<int64_t>();
  return cases;
}

} // namespace dynqual::qualify
