#include "dynqual/qualify/DevicePlan.h"

#include "dq/runtime/Npy.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/run/TensorBridge.h"
#include "dynqual/store/Fingerprint.h"

#include <algorithm>
#include <fstream>
#include <set>

namespace fs = std::filesystem;
using nlohmann::json;

namespace dynqual::qualify {

namespace {

std::string npyBytes(const fs::path& pb) {
  std::vector<uint8_t> b = dq::rt::serializeNpy(run::toHostTensor(onnxio::readTensorFile(pb)));
  return std::string(b.begin(), b.end());
}

/// The case id of a case that reached the runtime: the folder its input files were written to.
std::string caseIdOf(const run::CaseResult& c) {
  return c.inputFiles.empty() ? std::string() : c.inputFiles.front().parent_path().filename().string();
}

} // namespace

json readJsonObject(const fs::path& file) {
  std::ifstream in(file);
  if (!in)
    throw std::runtime_error(file.string() + ": cannot be read");
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error(file.string() + ": not a JSON object");
  return j;
}

std::vector<std::string> npyInputHashes(const std::vector<fs::path>& inputFiles) {
  std::vector<std::string> hashes;
  for (const auto& f : inputFiles) {
    try {
      hashes.push_back(store::sha256Hex(npyBytes(f)));
    } catch (const std::exception& e) {
      throw std::runtime_error(f.string() + ": " + e.what());
    }
  }
  return hashes;
}

// ---- prepare -------------------------------------------------------------------------------------

ModelPlanner::ModelPlanner(fs::path planDir, int index) : planDir_(std::move(planDir)), index_(index) {
}

fs::path ModelPlanner::workDir() const {
  return planDir_ / "models" / std::to_string(index_);
}

exec::ReplayFn ModelPlanner::executor() {
  return [this](const std::string& caseId, const std::vector<fs::path>& inputFiles) -> exec::ExecResult {
    Case c;
    c.id = caseId;
    for (size_t k = 0; k < inputFiles.size(); ++k) {
      const fs::path& pb = inputFiles[k];
      fs::path npy = pb;
      npy.replace_extension(".npy");
      std::string bytes;
      try {
        bytes = npyBytes(pb);
      } catch (const std::exception& e) {
        // bf16 has no NumPy dtype, so dq-run cannot read such an input.
        c.unsupported = "unsupported: case " + caseId + " input " + std::to_string(k) +
                        " cannot be carried as .npy for dq-run: " + e.what();
        break;
      }
      std::ofstream(npy, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      c.inputs.push_back(fs::relative(npy, planDir_).string());
      c.hashes.push_back(store::sha256Hex(bytes));
    }
    if (!c.unsupported.empty()) {
      c.inputs.clear();
      c.hashes.clear();
    }
    for (const auto& pb : inputFiles)
      fs::remove(pb);
    cases_.push_back(std::move(c));
    throw CasePlanned("planned for the device run");
  };
}

json ModelPlanner::entry(const ModelQualification& q) const {
  const run::ModelResult& r = q.result;
  json passes = json::array();
  for (const auto& [pass, ms] : q.passMs)
    passes.push_back({{"pass", pass}, {"ms", ms}});
  std::string status = r.status == run::ModelStatus::Skipped ? "skip" : r.artifact.empty() ? "FAIL" : "planned";
  json cases = json::array();
  std::string timed;
  // Stored data sets come first in runModel's order, so the first planned case with inputs that
  // is not a binding is the first stored set; otherwise the first planned binding.
  for (bool bindings : {false, true})
    for (const Case& c : cases_)
      if (timed.empty() && c.unsupported.empty() && (c.id.rfind("binding_", 0) == 0) == bindings && !c.inputs.empty())
        timed = c.id;
  for (const Case& c : cases_)
    cases.push_back({{"id", c.id},
                     {"inputs", c.inputs},
                     {"inputs_sha256", c.hashes},
                     {"timed", c.id == timed},
                     {"unsupported", c.unsupported}});
  return {{"index", index_},
          {"name", r.name},
          {"dir", fs::absolute(r.dir).lexically_normal().string()},
          {"status", status},
          {"detail", status == "planned" ? std::string() : r.detail},
          {"artifact", r.artifact.empty() ? std::string() : fs::relative(r.artifact, planDir_).string()},
          {"compile_ms", r.compileMs},
          {"passes", passes},
          {"compiler_version", q.compilerVersion},
          {"pipeline_spec", q.pipelineSpec},
          {"cases", cases},
          {"timed_case", timed}};
}

// ---- import --------------------------------------------------------------------------------------

DeviceResults DeviceResults::load(const fs::path& dir) {
  DeviceResults d;
  d.dir_ = dir;
  d.manifest_ = readJsonObject(dir / kPlanManifest);
  if (d.manifest_.value("format", "") != kPlanFormat || d.manifest_.value("version", 0) != kPlanVersion)
    throw std::runtime_error((dir / kPlanManifest).string() + ": not a " + kPlanFormat + " version " +
                             std::to_string(kPlanVersion) + " manifest");
  fs::path results = dir / kDeviceResultsFile;
  std::ifstream in(results);
  if (!in)
    throw std::runtime_error(results.string() + ": cannot be read (did the device run finish? "
                                                "docs/commands/qualify.md)");
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("index") || !j["index"].is_number_integer() ||
        !j.contains("set") || !j["set"].is_string() || !j.contains("rc") || !j["rc"].is_number_integer())
      throw std::runtime_error(results.string() + ":" + std::to_string(n) +
                               ": not a device result line (needs integer \"index\", string \"set\", integer \"rc\")");
    d.lines_[{j["index"].get<int>(), j["set"].get<std::string>(), j.value("timed", false)}] = j;
  }
  return d;
}

const json& DeviceResults::model(int index) const {
  if (manifest_.contains("models"))
    for (const auto& m : manifest_["models"])
      if (m.value("index", -1) == index)
        return m;
  throw std::out_of_range("the manifest has no model with index " + std::to_string(index));
}

std::string DeviceResults::deviceDescription() const {
  for (const auto& [key, l] : lines_)
    if (!l.value("gpu", "").empty())
      return l["gpu"].get<std::string>();
  return "";
}

std::vector<std::string> DeviceResults::devicesSeen() const {
  std::set<std::string> seen;
  for (const auto& [key, l] : lines_)
    if (l.contains("device") && l["device"].is_string())
      seen.insert(l["device"].get<std::string>());
  return {seen.begin(), seen.end()};
}

exec::ReplayFn DeviceResults::executor(int index) const {
  return [this, index](const std::string& caseId, const std::vector<fs::path>& inputFiles) {
    const json& m = model(index);
    const json* planned = nullptr;
    if (m.contains("cases"))
      for (const auto& c : m["cases"])
        if (c.value("id", "") == caseId)
          planned = &c;
    if (!planned)
      throw std::runtime_error("case " + caseId +
                               " was not prepared for the device run (the suite or the "
                               "settings changed since --prepare; prepare again)");
    if (!planned->value("unsupported", "").empty())
      throw std::runtime_error(planned->value("unsupported", ""));
    if (npyInputHashes(inputFiles) != planned->value("inputs_sha256", std::vector<std::string>{}))
      throw std::runtime_error("inputs of case " + caseId +
                               " differ from the prepared ones (the model, its data "
                               "sets or the seed changed since --prepare; prepare again)");
    auto it = lines_.find({index, caseId, false});
    if (it == lines_.end())
      throw std::runtime_error("no device result for case " + caseId + " (the device run did not reach it)");
    const json& l = it->second;
    if (l["rc"].get<int>() != 0)
      throw std::runtime_error("device run failed (dq-run exit " + std::to_string(l["rc"].get<int>()) +
                               "): " + l.value("error", std::string("no message")));
    exec::ExecResult out;
    fs::path outDir = dir_ / l.value("output_dir", "");
    for (const auto& o : l.value("outputs", json::array()))
      out.outputs.push_back(run::fromHostTensor(dq::rt::readNpy((outDir / o.at("file").get<std::string>()).string())));
    if (l.contains("counters"))
      for (const auto& [k, v] : l["counters"].items())
        out.counters.emplace_back(k, v.get<uint64_t>());
    out.executeMs = l.value("first_execute_ms", 0.0);
    return out;
  };
}

const json* DeviceResults::timedLine(int index) const {
  for (const auto& [key, l] : lines_)
    if (std::get<0>(key) == index && std::get<2>(key))
      return &l;
  return nullptr;
}

PerfResult DeviceResults::timed(int index, const run::CaseResult& c) const {
  PerfResult p;
  p.timedCase = c.name;
  const std::string id = caseIdOf(c);
  auto it = lines_.find({index, id, true});
  if (it == lines_.end()) {
    p.error = "no timed device run for case " + id + " (the device run timed '" +
              model(index).value("timed_case", std::string()) + "')";
    return p;
  }
  const json& l = it->second;
  if (l["rc"].get<int>() != 0) {
    p.error = "timed device run of " + id + " failed: " + l.value("error", std::string("no message"));
    return p;
  }
  try {
    p.sessionMs = l.at("session_ms").get<double>();
    p.firstInferMs = l.at("first_infer_ms").get<double>();
    p.latencyMs = l.at("total_ms").at("samples").get<std::vector<double>>();
    p.cpuPercent = l.value("cpu_percent", 0.0);
    if (l.contains("counters"))
      for (const auto& [k, v] : l["counters"].items())
        p.counters.emplace_back(k, v.get<uint64_t>());
  } catch (const std::exception& e) {
    p.error = "timed device run of " + id + ": malformed result line: " + e.what();
    return p;
  }
  const int reps = manifest_.at("settings").value("reps", 0);
  if (static_cast<int>(p.latencyMs.size()) != reps) {
    p.error = "timed device run of " + id + " has " + std::to_string(p.latencyMs.size()) + " samples, expected " +
              std::to_string(reps);
    return p;
  }
  p.measured = true;
  return p;
}

} // namespace dynqual::qualify
