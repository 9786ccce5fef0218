#include "dynqual/qualify/Suite.h"

#include "dynqual/process/Process.h"
#include "dynqual/run/RunReport.h"
#include "dynqual/run/RunRecords.h"

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
#ifdef DYNQUAL_GENERATED_MODELS_DIR
  // Made at build time (tools/dynqual/CMakeLists.txt): hip-ep's single-op L2 models and the
  // builder-layout int4 decoder.
  const fs::path generated = fs::path(DYNQUAL_GENERATED_MODELS_DIR) / "generated";
  if (fs::exists(generated / ".made", ec))
    suite.push_back(generated);
#endif
  return suite;
}

ModelEntry qualifyInChild(const std::vector<std::string>& argv, const fs::path& modelDir, double timeoutSeconds) {
  process::ProcessResult child = process::runChild(argv, timeoutSeconds);
  std::string abnormal = child.describeAbnormalEnd(timeoutSeconds);
  std::string verdict;
  if (abnormal.empty()) {
    json j = json::parse(child.out, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded() && j.is_object() && j.contains("model") && j.contains("accuracy") && j.contains("records")) {
      try {
        ModelEntry entry;
        const json& records = j["records"];
        if (!records.is_array() || records.empty())
          throw std::runtime_error("records: must be a non-empty array");
        for (size_t i = 0; i < records.size(); ++i)
          entry.cases.push_back(store::caseFromJson(records[i], "records[" + std::to_string(i) + "]"));
        j.erase("records");
        entry.report = std::move(j);
        return entry;
      } catch (const std::exception& e) {
        abnormal = std::string("model process printed a malformed result: ") + e.what();
      }
    } else {
      abnormal = fmt::format("model process exited {} without a result: {}", child.exitCode, child.err.substr(0, 400));
    }
    verdict = "crash";
  } else {
    verdict = child.timedOut ? "timeout" : "crash";
    abnormal = "model process " + abnormal;
  }
  std::string name = modelDir.filename().string();
  ModelEntry entry;
  entry.report = {{"model",
                   {{"name", name},
                    {"path", modelDir.string()},
                    {"status", "FAIL"},
                    {"detail", abnormal},
                    {"bit_exact", false},
                    {"cases", json::array()}}},
                  {"accuracy", {{"verdict", verdict}}},
                  {"compile", {{"passes", json::array()}}},
                  {"perf", {{"measured", false}, {"error", abnormal}}},
                  {"wall_ms", child.wallMs}};
  // Nothing was measured: no compile time, no peak memory, only the failure and its kind.
  store::CaseRecord whole;
  whole.model = run::modelRef(name, modelDir);
  whole.status = run::modelStatusName(run::ModelStatus::Failed);
  whole.error = abnormal;
  whole.params = {{"verdict", verdict}, {"perf_error", abnormal}};
  entry.cases.push_back(std::move(whole));
  return entry;
}

bool entryFailed(const json& e) {
  return e["model"].value("status", "FAIL") == "FAIL";
}

bool entryInputError(const json& e) {
  return e["model"].value("status", "FAIL") == "input-error";
}

void renderTables(std::ostream& os, const std::vector<json>& entries) {
  // The name column fits the longest tried model, so no two rows read alike.
  size_t w = 20;
  for (const auto& e : entries)
    if (e["model"].value("status", "FAIL") != "skip")
      w = std::max(w, e["model"].value("name", "?").size());
  fmt::print(os, "L2 Accuracy Results (compiled vs CPU reference)\n");
  fmt::print(os, "{:<{}} {:>11} {:>11} {:>9} {:>12} {:>8} {:>9} {}\n", "model", w, "combined L2", "relative L2",
             "cosine", "total elems", "NaN/Inf", "threshold", "verdict");
  run::RunTotals totals;
  int inputErrors = 0;
  std::vector<std::string> notAdmittedLines;
  for (const auto& e : entries) {
    const json& m = e["model"];
    std::string status = m.value("status", "FAIL");
    int notAdmitted = 0;
    if (m.contains("cases"))
      for (const auto& c : m["cases"])
        if (c.value("kind", "") == "binding" && c.value("skipped", false)) {
          ++notAdmitted;
          notAdmittedLines.push_back(fmt::format("  {}: {} ({}): {}", m.value("name", "?"), c.value("name", "?"),
                                                 c.value("binding", "?"), c.value("error", "")));
        }
    inputErrors += status == "input-error";
    totals.add(status, m.value("skip_reason", "?"), m.value("missing_ops", std::vector<std::string>{}), notAdmitted);
    if (status == "skip")
      continue;
    const json& a = e["accuracy"];
    fmt::print(os, "{:<{}} {:>11} {:>11} {:>9} {:>12} {:>8} {:>9} {}\n", m.value("name", "?"), w,
               fmtNum(a.value("combined_l2", json()), "{:.3g}"), fmtNum(a.value("relative_l2", json()), "{:.3g}"),
               fmtNum(a.value("cosine", json()), "{:.6f}"),
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
    std::string mem = e.contains("peak_host_bytes") ? fmt::format("{:.1f}", e["peak_host_bytes"].get<double>() * 1e-6)
                                                    : std::string("-");
    if (!p.value("measured", false)) {
      std::string why = p.value("error", "");
      fmt::print(os, "{:<{}} not timed: {}\n", m.value("name", "?"), w,
                 why.empty() ? "the model failed before timing (see Failures)" : why);
      continue;
    }
    fmt::print(os, "{:<{}} {:>10} {:>9} {:>10} {:>10} {:>6} {:>8} {:>12} {:>9} {:>8}\n", m.value("name", "?"), w,
               fmtNum(p["qps"], "{:.1f}"), fmtNum(json(p["session_ms"].get<double>() / 1000), "{:.4f}"),
               fmtNum(p["first_infer_ms"], "{:.3f}"), fmtNum(p["median_ms"], "{:.3f}"),
               fmtNum(p["cpu_percent"], "{:.0f}"), mem, counter(p, "peak_device_bytes"), counter(p, "scalar_readbacks"),
               counter(p, "kernel_launches"));
  }
  for (auto [title, pick] :
       {std::pair{"Failures", &entryFailed}, {"Input errors (bad model or data files)", &entryInputError}}) {
    bool any = false;
    for (const auto& e : entries)
      if (pick(e)) {
        if (!any)
          fmt::print(os, "\n{}\n", title);
        any = true;
        fmt::print(os, "  {}: {}\n", e["model"].value("name", "?"), e["model"].value("detail", ""));
        if (e["model"].contains("input_errors"))
          for (const auto& [k, v] : e["model"]["input_errors"].items())
            if (v.get<std::string>() != e["model"].value("detail", ""))
              fmt::print(os, "  {}: {}\n", e["model"].value("name", "?"), v.get<std::string>());
      }
  }
  if (!notAdmittedLines.empty()) {
    fmt::print(os, "\nBindings not admitted by the model (skipped, not failed)\n");
    for (const auto& l : notAdmittedLines)
      fmt::print(os, "{}\n", l);
  }
  fmt::print(os, "\n{} models: {} passed, {} failed, {}{} skipped{}\n", entries.size(), totals.passed,
             totals.failed - inputErrors, inputErrors ? fmt::format("{} input error(s), ", inputErrors) : "",
             totals.skipped, run::skipSummary(totals));
}

} // namespace dynqual::qualify
